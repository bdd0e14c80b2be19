#!/usr/bin/env bash
# On demand (not in CI): the lab's wall time of `rdmacheck lab --hosts N
# --mesh` (boot, then the default mesh over every guest from h1) for N = 2,
# 4 and 6, and the mesh's own time and rounds from its JSON report. The
# mesh's time should grow with its rounds (N-1), not with its pairs
# (N(N-1)/2): the pairs of a round run at once. Prints a Markdown table for
# bench/RESULTS.md. Usage: bench/mesh.sh [BUILD_DIR] (default build).
set -euo pipefail
build=${1:-build}
echo "| hosts | rounds | pairs | lab wall s | mesh s | per round s | exit |"
echo "|------:|-------:|------:|-----------:|-------:|------------:|-----:|"
for n in 2 4 6; do
  out=$(mktemp)
  t0=$(date +%s.%N)
  set +e
  flock /tmp/rdmacheck-lab.lock "$build/rdmacheck" lab --hosts "$n" --mesh --json \
    --timeout 900 >"$out" 2>/dev/null
  rc=$?
  set -e
  t1=$(date +%s.%N)
  doc=$(jq -c '.hosts[] | select(.name == "h1") | .runs[0].output // empty' "$out" 2>/dev/null || true)
  rounds=$(jq -r '.rounds | length' <<<"$doc" 2>/dev/null || echo "?")
  mesh_s=$(jq -r '.elapsed_s' <<<"$doc" 2>/dev/null || echo "?")
  per=$(jq -r '([.rounds[].seconds] | add / length)' <<<"$doc" 2>/dev/null || echo "?")
  printf '| %d | %s | %d | %.0f | %.1f | %.1f | %d |\n' "$n" "$rounds" $((n * (n - 1) / 2)) \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "${mesh_s:-0}" "${per:-0}" "$rc"
  rm -f "$out"
done
