#!/bin/sh
# rdmacheck against perftest and qperf in one lab session, alternating run by
# run at the same size and iterations, and the median of rdmacheck/peer
# ratios. Emulated figures mean nothing on their own; only the ratios do.
#   build/rdmacheck lab --timeout 900 --setup 'h1:sh bench/peers.sh' \
#     --run 'h2:sh bench/compare.sh 65536 2000 5 300'
SIZE=${1:-65536}; N=${2:-2000}; RUNS=${3:-5}; LATN=${4:-300}
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f\n", a / b; }'; }
: > /tmp/bw_pt; : > /tmp/bw_qp; : > /tmp/lat_pt; : > /tmp/lat_qp
for i in $(seq "$RUNS"); do
  rc=$(rdmacheck bw h1 -s "$SIZE" -n "$N" --json | jq '.results[0].avg_gbps')
  sleep 1  # the perftest server loop restarts after each client
  pt=$(ib_write_bw -d rxe0 -x 1 -F -p 18515 -s "$SIZE" -n "$N" --report_gbits h1 2>&1 |
       tee /tmp/ib_write_bw.out | awk -v s="$SIZE" '$1 == s {print $4}')
  [ -n "$pt" ] || { echo "ib_write_bw gave no figure:"; tail -3 /tmp/ib_write_bw.out; }
  # qperf prints "bw = 12.3 MB/sec" (decimal MB) or GB/sec.
  qp=$(qperf -cm1 h1 -m "$SIZE" rc_rdma_write_bw 2>/dev/null |
       awk '/^ *bw/ {m = ($4 ~ /^GB/) ? 8 : ($4 ~ /^KB/ ? 0.000008 : 0.008); print $3 * m}')
  ratio "$rc" "$pt" >> /tmp/bw_pt; ratio "$rc" "$qp" >> /tmp/bw_qp
  echo "run $i bw Gb/s: rdmacheck $rc ib_write_bw $pt qperf $qp"
  rl=$(rdmacheck lat h1 -s 2 -n "$LATN" --json | jq '.results[0].median_us')
  sleep 1
  pl=$(ib_write_lat -d rxe0 -x 1 -F -p 18516 -s 2 -n "$LATN" h1 2>&1 |
       tee /tmp/ib_write_lat.out | awk '$1 == 2 {print $5}')
  [ -n "$pl" ] || { echo "ib_write_lat gave no figure:"; tail -3 /tmp/ib_write_lat.out; }
  # qperf rc_lat is a half round trip too: "latency = 180 us" (or ms).
  ql=$(qperf -cm1 h1 -m 2 rc_lat 2>/dev/null |
       awk '/^ *latency/ {m = ($4 ~ /^ms/) ? 1000 : ($4 ~ /^ns/ ? 0.001 : 1); print $3 * m}')
  ratio "$rl" "$pl" >> /tmp/lat_pt; ratio "$rl" "$ql" >> /tmp/lat_qp
  echo "run $i lat us (median, half RTT): rdmacheck $rl ib_write_lat $pl qperf $ql"
done
echo "median ratio bw  rdmacheck/ib_write_bw  $(median < /tmp/bw_pt)"
echo "median ratio bw  rdmacheck/qperf        $(median < /tmp/bw_qp)"
echo "median ratio lat rdmacheck/ib_write_lat $(median < /tmp/lat_pt)"
echo "median ratio lat rdmacheck/qperf        $(median < /tmp/lat_qp)"
