#!/bin/sh
# The peers bench/compare.sh measures against, on the server guest: perftest
# servers (restarted after each client, each on its own port) and qperf.
# Started by: rdmacheck lab --setup 'h1:sh bench/peers.sh' ...
(while :; do ib_write_bw -d rxe0 -x 1 -F -p 18515 >/dev/null 2>&1; done) &
(while :; do ib_write_lat -d rxe0 -x 1 -F -p 18516 >/dev/null 2>&1; done) &
qperf >/dev/null 2>&1 &
sleep 1
