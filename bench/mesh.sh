#!/usr/bin/env bash
# On demand (not in CI): the wall time of `rdmacheck lab --hosts N --mesh`
# (boot, then the default mesh over every guest from h1) for N = 2, 4 and 6,
# with the mesh's own time and rounds from its text report. The mesh's time
# should grow with its rounds (N-1), not with its pairs (N(N-1)/2): the
# pairs of a round run at once. Prints a Markdown table for bench/RESULTS.md
# and keeps each lab's transcript in OUT (default /tmp/rdmacheck-mesh-bench).
# Usage: bench/mesh.sh [BUILD_DIR [OUT]]
set -euo pipefail
build=${1:-build}
out=${2:-/tmp/rdmacheck-mesh-bench}
mkdir -p "$out"
echo "| hosts | pairs | rounds | lab wall s | mesh s | mean round s | verdict |"
echo "|------:|------:|-------:|-----------:|-------:|-------------:|---------|"
for n in ${HOSTS:-2 4 6}; do
  log="$out/lab-$n.txt"
  # Timed inside the lock: the wait for another lab is not the mesh's.
  flock /tmp/rdmacheck-lab.lock sh -c 'date +%s.%N >"$1.t0"; "$2" lab --hosts "$3" --mesh \
    --timeout 900 >"$1" 2>&1; date +%s.%N >"$1.t1"' sh "$log" "$build/rdmacheck" "$n" || true
  t0=$(cat "$log.t0")
  t1=$(cat "$log.t1")
  # "h1| rounds: 9.1 s, 8.7 s, 8.9 s (all 26.7 s)" and "h1| mesh: PASS (31.0 s)"
  rounds=$(sed -n 's/^h1| rounds: //p' "$log" | tr ',' '\n' | grep -c ' s' || true)
  mean=$(sed -n 's/^h1| rounds: //p' "$log" | grep -o '[0-9.]* s' | head -n -1 |
    awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "?" }')
  mesh=$(sed -n 's/^h1| mesh: \([A-Z]*\) (\([0-9.]*\) s)/\2 \1/p' "$log")
  printf '| %d | %d | %s | %.0f | %s | %s | %s |\n' "$n" $((n * (n - 1) / 2)) "$rounds" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "${mesh%% *}" "$mean" "${mesh##* }"
done
