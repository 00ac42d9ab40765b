#!/usr/bin/env bash
# Session 36's first GPU call: what session 35 left for an H200, in the order that buys the most
# per device second.
#   1. Session 35's default from 72 to under 120 tokens per expert (the `_hs` pair, chosen on an
#      H100) against the 64-token pair it replaced, named, on three points, and A8W4's twin
#      (../2026-12-07-s35/halves_default_pairs.txt; two rounds in reverse order).
#   2. On an H200 only: session 33's H200-defaults pairs (which H100-chosen knob loses on the
#      H200 at 8-64 tokens per block; ../2026-12-06-s33/h200_defaults_pairs.txt), then Nsight
#      Compute on the default's stage kernels at backbone M = 512 (the roofline row of
#      docs/performance.md lacks the H200's profile there).
#   3. The runtime and Python suites in what is left.
# Usage: [BUILD=folder] call.sh OUT [seconds]. Carry $BUILD (default build/cuda) with
# bin/{moe-tune,moetune_test_runtime} and lib, and .cache. Each part stops in time for
# next_gpu.sh's archive; give the device call 30 s more than the budget.
set -uo pipefail
out=${1:?out}; budget=${2:-540}
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
ng=results/sm_90/2026-12-05-s25/next_gpu.sh
run_parts() {  # limit subdir parts...
  local limit=$1 sub=$2; shift 2
  [ "$limit" -le 20 ] && { echo "== $*: skipped, ${limit} s left"; return 1; }
  timeout "$limit" bash $ng "$out/$sub" "$@"
}
PAIRS_FILE=results/sm_90/2026-12-07-s35/halves_default_pairs.txt run_parts $(($(left) - 20)) a_default pairs
if grep -q H200 "$out/a_default/gpu.txt" 2>/dev/null; then
  PAIRS_FILE=results/sm_90/2026-12-06-s33/h200_defaults_pairs.txt run_parts $(($(left) - 150)) b_h200 pairs
  PROF_POINTS=5120,640,384,6:512 run_parts $(($(left) - 60)) c_prof prof
else
  echo "== not an H200: the H200-defaults pairs and the M = 512 profile are skipped"
fi
run_parts $(($(left) - 10)) d_runtime runtimepy
# The device returns at most 8 files: one archive.
tar czf "$out/call.tgz" -C "$out" a_default b_h200 c_prof d_runtime 2>/dev/null
find "$out" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
echo "== done in $((SECONDS - start)) s"
