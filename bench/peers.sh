#!/bin/sh
# The peers bench/compare.sh measures against, on the server guest: one
# perftest server per program, each on its own port and restarted after each
# client, and qperf. perftest's latency servers count round trips themselves,
# so they get the client's size and iterations: a server left waiting for
# more round trips than the client makes never comes back for the next run.
#   rdmacheck lab --setup 'h1:sh bench/peers.sh SIZE N LATN' ...
SIZE=${1:-4096}; N=${2:-1000}; LATN=${3:-200}
serve() {  # port program args...
  port=$1; shift
  (while :; do "$@" -d rxe0 -x 1 -F -p "$port" >/dev/null 2>&1; done) &
}
serve 18515 ib_write_bw -s "$SIZE" -n "$N"
serve 18516 ib_read_bw -s "$SIZE" -n "$N"
serve 18517 ib_send_bw -s "$SIZE" -n "$N"
serve 18518 ib_write_lat -s 2 -n "$LATN"
serve 18519 ib_read_lat -s 2 -n "$LATN"
serve 18520 ib_send_lat -s 2 -n "$LATN"
qperf >/dev/null 2>&1 &
sleep 1
