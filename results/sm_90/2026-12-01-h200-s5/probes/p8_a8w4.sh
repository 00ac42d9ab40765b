#!/usr/bin/env bash
# Probe 8: the exact fast fp8 -> bf16 pair decode (A8W4 activations) on every main loop:
# verify the swapped, staged and ci.json spaces for a8w4 (OCP e4m3). Usage: p8_a8w4.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s5/probes
mkdir -p "$out"; cache=/tmp/mt-cache
for sp in p6_swap_space p4_staged_space; do
  timeout 80 $b/bin/moe-tune verify --space $here/$sp.json --m 40 --dtype a8w4 --cache-dir $cache --json $out/verify_a8w4_$sp.json > $out/verify_a8w4_$sp.log 2>&1
  echo "$sp: exit $? $(grep 'verify:' $out/verify_a8w4_$sp.log)"
done
timeout 80 $b/bin/moe-tune verify --space search_spaces/ci.json --m 40 --dtype a8w4 --cache-dir $cache --json $out/verify_a8w4_ci.json > $out/verify_a8w4_ci.log 2>&1
echo "ci.json: exit $? $(grep 'verify:' $out/verify_a8w4_ci.log)"
