#!/bin/bash
# On demand (not in CI): one `rdmacheck lab --hosts 4 --mesh` boot that runs
# MeshLab's four scenarios with a timestamp ("T <epoch>") before and after
# each step on h1's console, plus a default-mode mesh with RoCE dropped
# between h2 and h4. The outputs stay in the kept work dir (h1/out.N): the
# mesh documents of tests/fixtures/mesh come from such a run, and the
# timestamps say where MeshLab's time goes.
# Usage: bench/mesh-capture.sh [BIN_DIR]  (rdmacheck and rdmacheck-mesh; copy
# them out of build/ first if you keep building). Run it inside the lab lock:
#   flock /tmp/rdmacheck-lab.lock bench/mesh-capture.sh /tmp/bin
set -euo pipefail
M="mpirun --allow-run-as-root -np 4 --hostfile /run/lab/hostfile --map-by ppr:1:node --mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 /run/lab/bin/rdmacheck mesh --json"
T='echo "T $(date +%s.%N)" >&2'
B=${1:-build}
exec "$B/rdmacheck" lab --hosts 4 --mesh --timeout 700 --keep --workdir "/tmp/mesh-capture-$$" \
  --run "h1:$T; timeout 200 $M; rc=\$?; $T; exit \$rc" \
  --run "h1:$T; timeout 60 ssh h3 tc qdisc add dev eth0 root netem delay 20ms && timeout 150 $M --quick --round-timeout 20; rc=\$?; $T; timeout 60 ssh h3 tc qdisc del dev eth0 root >/dev/null; $T; exit \$rc" \
  --run "h1:$T; timeout 60 ssh h2 iptables -I INPUT -s h4 -p udp --dport 4791 -j DROP && timeout 150 $M --quick --round-timeout 20; rc=\$?; $T; exit \$rc" \
  --run "h1:$T; timeout 200 $M --round-timeout 20 -D 0.5; rc=\$?; $T; timeout 60 ssh h2 iptables -D INPUT -s h4 -p udp --dport 4791 -j DROP >/dev/null; exit \$rc" \
  --run "h1:$T; timeout 60 ssh h4 rdma link del rxe0 && timeout 150 $M --quick --round-timeout 20; rc=\$?; $T; exit \$rc"
