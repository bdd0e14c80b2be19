#!/bin/bash
# The guests' half of bench/perf (which boots the lab and judges the
# figures). Two roles:
#   perf-guest.sh peers CELLS       on h1: one perftest server per cell (its
#                                   own port, restarted after each client,
#                                   with the cell's size and iterations:
#                                   perftest's servers count them) and qperf
#   perf-guest.sh cells CELLS PAIRS on h2: per cell, PAIRS pairs of runs,
#                                   rdmacheck and its peer alternated (ABAB:
#                                   odd pairs rdmacheck first, even pairs the
#                                   peer first, so drift falls on both)
# CELLS is a file of lines "NAME KIND OP SIZE ITERS PEER PORT FLAGS" (bench/perf
# writes it; FLAGS, comma-joined or "-", go to both tools alike: the message
# rate cells' post list, inline size and CQ moderation). Each run prints one line the host reads:
#   R NAME PAIR TOOL FIGURE CPU_S
# FIGURE: Gb/s (bw), Mpps (rate), median/typical us (lat); CPU_S: user+system
# seconds the client process used (bash's time), for CPU per Gb/s.
set -u
role=$1 cells=$2
TIMEFORMAT=%U+%S
# No run takes a minute on the lab's pair; perftest and qperf have no deadline
# of their own, and a client whose wire stopped (#20's stall) would otherwise
# hold the boot until the lab's deadline. rdmacheck's runs end by their own.
run_limit=60

# perftest's report line is the one that starts with the size; its columns:
# bw "#bytes #iterations BW-peak BW-average MsgRate", lat "#bytes
# #iterations t_min t_max t_typical ...". Bandwidth is turned into Gb/s here
# from whichever of two columns perftest printed with more digits: BW average
# in MB/sec (its MB is 2^20 bytes) or the message rate in Mpps times the size
# (the same window: msgRate = iters / time). --report_gbits prints two
# decimals, and at the lab's 0.13 Gb/s a step of 0.01 is 8 % of the figure.
perftest_figure() {  # kind output size
  awk -v k="$1" -v size="${3:-0}" '
    function digits(s) { gsub(/[^0-9]/, "", s); sub(/^0+/, "", s); return length(s) }
    $1 ~ /^[0-9]+$/ && NF >= 5 {
      if (k != "bw") { print $5; exit }
      if (digits($5) > digits($4)) printf "%.6f\n", $5 * size * 8 / 1e3
      else printf "%.6f\n", $4 * 1048576 * 8 / 1e9
      exit
    }' "$2"
}
perftest_prog() {  # kind op
  case "$1:$2" in
    lat:atomic_fadd | lat:atomic_cswap) echo ib_atomic_lat ;;
    lat:*) echo "ib_$2_lat" ;;
    *:atomic_fadd | *:atomic_cswap) echo ib_atomic_bw ;;
    *) echo "ib_$2_bw" ;;
  esac
}
flags_of() { [ "$1" = - ] || echo "${1//,/ }"; }
perftest_args() {  # kind op size iters flags
  local a="-d rxe0 -x 1 -F -s $3 -n $4 $(flags_of "$5")"
  case $2 in
    atomic_fadd) a="-d rxe0 -x 1 -F -n $4 -A FETCH_AND_ADD" ;;
    atomic_cswap) a="-d rxe0 -x 1 -F -n $4 -A CMP_AND_SWAP" ;;
  esac
  echo "$a"
}

if [ "$role" = peers ]; then
  while read -r name kind op size iters peer port flags; do
    [ "$peer" = perftest ] || continue
    prog=$(perftest_prog "$kind" "$op")
    args=$(perftest_args "$kind" "$op" "$size" "$iters" "$flags")
    # shellcheck disable=SC2086
    (while :; do "$prog" $args -p "$port" >/dev/null 2>&1; done) &
  done < "$cells"
  qperf >/dev/null 2>&1 &
  exit 0
fi

pairs=$3
# rdmacheck's figure and the client's CPU seconds, on one line.
cpu_sum() { awk -F+ '{printf "%.3f\n", $1 + $2}' <<< "$1"; }
run_rdmacheck() {  # kind op size iters flags
  local cmd=bw key=avg_gbps out cpu
  case $1 in
    lat) cmd=lat key=median_us ;;
    rate) key=mpps ;;
  esac
  local sz="-s $3" count="-n $4"
  case $2 in atomic_*) sz="" ;; esac
  # -D in the flags: timed, as qperf's -t, instead of a count.
  case ",$5," in *,-D,*) count="" ;; esac
  # shellcheck disable=SC2086
  cpu=$({ time rdmacheck "$cmd" h1 --op "$2" $sz $count $(flags_of "$5") --json \
    > /tmp/perf.rdm.json 2>/dev/null; } 2>&1)
  out=$(jq -r ".results[0].$key // empty" /tmp/perf.rdm.json 2>/dev/null)
  local gbits=0
  [ "$1" = bw ] && gbits=$(jq -r '.results[0] | (.avg_gbps * .seconds) // 0' /tmp/perf.rdm.json 2>/dev/null)
  echo "${out:-nan} $(cpu_sum "$cpu") ${gbits:-0}"
}
run_perftest() {  # kind op size iters port flags
  local prog args cpu out
  prog=$(perftest_prog "$1" "$2")
  args=$(perftest_args "$1" "$2" "$3" "$4" "$6")
  # perftest's client does not retry while its server restarts: a few tries.
  # A run that hit run_limit is not retried: its wire, not its server, is the matter.
  local rc
  for try in 1 2 3 4 5 6 7 8 9 10; do
    # shellcheck disable=SC2086
    cpu=$({ time timeout "$run_limit" "$prog" $args -p "$5" h1 > /tmp/perf.pt.out 2>&1; } 2>&1)
    rc=$?
    ((rc == 0 || rc == 124)) && break
    sleep 0.3
  done
  out=$(perftest_figure "$1" /tmp/perf.pt.out "$3")
  local gbits=0
  [ "$1" = bw ] && gbits=$(awk -v s="$3" -v n="$4" 'BEGIN {print s * n * 8 / 1e9}')
  echo "${out:-nan} $(cpu_sum "$cpu") $gbits"
}
# qperf's figure: bw in Gb/s ("bw = 12.3 MB/sec", decimal units), latency in us.
run_qperf() {  # kind test size [qperf options, comma-separated]
  local cpu out
  # shellcheck disable=SC2046
  cpu=$({ time timeout "$run_limit" qperf -cm1 $(tr ',' ' ' <<< "${4:-}") -t 2 h1 -m "$3" "$2" > /tmp/perf.qp.out 2>&1; } 2>&1)
  if [ "$1" = lat ]; then
    out=$(awk '/^ *latency/ {m = ($4 ~ /^ms/) ? 1000 : ($4 ~ /^ns/ ? 0.001 : 1); print $3 * m}' /tmp/perf.qp.out)
  else
    out=$(awk '/^ *bw/ {m = ($4 ~ /^GB/) ? 8 : ($4 ~ /^KB/ ? 0.000008 : 0.008); print $3 * m}' /tmp/perf.qp.out)
  fi
  local gbits=0  # qperf -t 2: two seconds at its rate
  [ "$1" = lat ] || gbits=$(awk -v g="${out:-0}" 'BEGIN {print g * 2}')
  echo "${out:-nan} $(cpu_sum "$cpu") $gbits"
}
peer_run() {  # kind op size iters peer port flags
  case $5 in
    perftest) run_perftest "$1" "$2" "$3" "$4" "$6" "$7" ;;
    # qperf:TEST or qperf:TEST:OPTIONS (e.g. qperf:rc_rdma_write_bw:-cp1)
    qperf:*:*) local spec=${5#qperf:}; run_qperf "$1" "${spec%%:*}" "$3" "${spec#*:}" ;;
    qperf:*) run_qperf "$1" "${5#qperf:}" "$3" ;;
  esac
}

# A lab whose wire stopped (#20) gives no figure to either tool: after 4 runs
# in a row without one the group ends, and bench/perf boots it again.
misses=0
say() {  # one R line; counts the runs in a row without a figure
  echo "$1"
  case $1 in *" rdmacheck nan "* | *" peer nan "*) misses=$((misses + 1)) ;; *) misses=0 ;; esac
  if ((misses >= 4)); then
    echo "perf-guest: 4 runs in a row gave no figure: the group ends here" >&2
    exit 3
  fi
}
while read -r name kind op size iters peer port flags; do
  for pair in $(seq "$pairs"); do
    a="R $name $pair rdmacheck"
    b="R $name $pair peer"
    if ((pair % 2)); then
      say "$a $(run_rdmacheck "$kind" "$op" "$size" "$iters" "$flags")"
      say "$b $(peer_run "$kind" "$op" "$size" "$iters" "$peer" "$port" "$flags")"
    else
      say "$b $(peer_run "$kind" "$op" "$size" "$iters" "$peer" "$port" "$flags")"
      say "$a $(run_rdmacheck "$kind" "$op" "$size" "$iters" "$flags")"
    fi
  done
done < "$cells"
