#!/bin/sh
# rdmacheck against perftest and qperf in one lab session on the same
# Soft-RoCE devices: for each test, RUNS alternating runs of rdmacheck and
# its peer at the same size and iterations, and the median of the per-run
# ratios rdmacheck/peer. Emulated figures mean nothing on their own; only the
# ratios do. Bandwidth ratios above 1 and latency ratios below 1 favour
# rdmacheck.
#   rdmacheck lab --timeout 1500 --setup "h1:sh $PWD/bench/peers.sh 4096 1000 200" \
#     --run "h2:sh $PWD/bench/compare.sh 4096 1000 5 200"
SIZE=${1:-4096}; N=${2:-1000}; RUNS=${3:-5}; LATN=${4:-200}
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f\n", a / b; }'; }

# perftest prints "#bytes #iterations BW-peak BW-average MsgRate" for bw and
# "#bytes #iterations t_min t_max t_typical ..." for lat: column 4 or 5.
perftest() {  # program port column size iters
  "$1" -d rxe0 -x 1 -F -p "$2" -s "$4" -n "$5" --report_gbits h1 2>&1 |
    tee "/tmp/$1.out" | awk -v s="$4" -v c="$3" '$1 == s {print $c}'
}
# qperf: "bw = 12.3 MB/sec" (decimal) or "latency = 180 us", scaled to Gb/s and us.
qperf_bw() {
  qperf -cm1 -t 2 h1 -m "$SIZE" "$1" 2>/dev/null |
    awk '/^ *bw/ {m = ($4 ~ /^GB/) ? 8 : ($4 ~ /^KB/ ? 0.000008 : 0.008); print $3 * m}'
}
qperf_lat() {
  qperf -cm1 -t 2 h1 -m 2 "$1" 2>/dev/null |
    awk '/^ *latency/ {m = ($4 ~ /^ms/) ? 1000 : ($4 ~ /^ns/ ? 0.001 : 1); print $3 * m}'
}

compare() {  # name rdmacheck-figure-command peer-figure-command
  name=$1; : > "/tmp/ratios.$name"; a=""; b=""
  for i in $(seq "$RUNS"); do
    a=$(eval "$2"); sleep 1  # perftest's server loop restarts after each client
    b=$(eval "$3"); sleep 1
    ratio "$a" "$b" >> "/tmp/ratios.$name"
    echo "run $i $name: rdmacheck $a peer ${b:-none}"
  done
}
rc_bw() { rdmacheck bw h1 --op "$1" -s "$SIZE" -n "$N" --json | jq '.results[0].avg_gbps'; }
rc_lat() { rdmacheck lat h1 --op "$1" -s 2 -n "$LATN" --json | jq '.results[0].median_us'; }

compare write_bw "rc_bw write" "perftest ib_write_bw 18515 4 $SIZE $N"
compare read_bw "rc_bw read" "perftest ib_read_bw 18516 4 $SIZE $N"
compare send_bw "rc_bw send" "perftest ib_send_bw 18517 4 $SIZE $N"
compare write_lat "rc_lat write" "perftest ib_write_lat 18518 5 2 $LATN"
compare read_lat "rc_lat read" "perftest ib_read_lat 18519 5 2 $LATN"
compare send_lat "rc_lat send" "perftest ib_send_lat 18520 5 2 $LATN"
compare qperf_rc_rdma_write_bw "rc_bw write" "qperf_bw rc_rdma_write_bw"
compare qperf_rc_lat "rc_lat send" "qperf_lat rc_lat"
# Not a tool comparison: RDMA against TCP over the same emulated wire.
compare qperf_tcp_bw "rc_bw write" "qperf_bw tcp_bw"
compare qperf_tcp_lat "rc_lat send" "qperf_lat tcp_lat"

echo "median ratios rdmacheck/peer over $RUNS runs (bw: >1 favours rdmacheck; lat: <1 does):"
for f in write_bw read_bw send_bw write_lat read_lat send_lat qperf_rc_rdma_write_bw qperf_rc_lat \
         qperf_tcp_bw qperf_tcp_lat; do
  printf '  %-24s %s (%s of %s runs paired)\n' "$f" "$(median < "/tmp/ratios.$f")" \
    "$(wc -l < "/tmp/ratios.$f")" "$RUNS"
done
