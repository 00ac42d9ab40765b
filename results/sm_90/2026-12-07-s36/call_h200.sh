#!/usr/bin/env bash
# Session 36's H200 call (the first calls got an H100): on an H200 only, what session 35 left
# for one, the table first (with PARTS=rest, a second call runs what the first had no time for).
#   0. docs/performance.md's table regenerated (next_gpu.sh part table, ~360 s).
#   1. Nsight Compute on the default's stage kernels at backbone M = 64 and 512 (the H200's
#      issue slots, DRAM and stalls where its table is furthest from its roofline).
#   2. Session 35's default from 72 to under 120 tokens per expert against the pair it replaced
#      (../2026-12-07-s35/halves_default_pairs.txt), as call.sh's part 1 did on the H100.
#   3. Session 33's H200-defaults pairs (../2026-12-06-s33/h200_defaults_pairs.txt).
#   4. The 16-token stage one with 2-4 CTAs per SM at M = 512 (s1_16tok_occupancy_pairs.txt).
# On another card it stops at once (the H100's table, `_hs` pairs and profiles exist: call.sh,
# sessions 30/31), so the call costs only the machine's start, unless ON_OTHER_CARD=gpupart
# asks for the exec suite's [gpu] cases there instead.
# Usage: [PARTS=rest] [ON_OTHER_CARD=gpupart] call_h200.sh OUT [seconds]; carry build/cuda/{bin/moe-tune,lib} and .cache.
set -uo pipefail
out=${1:?out}; budget=${2:-540}
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
ng=results/sm_90/2026-12-05-s25/next_gpu.sh
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
case $card in
  *H200*) ;;
  *) if [ -n "${ON_OTHER_CARD:-}" ]; then
       # ON_OTHER_CARD=gpupart: the exec suite's [gpu] cases instead (the tree's own check on
       # whatever card came), bounded by the budget.
       GPU_PART_LIMIT=$((budget - 40)) timeout $((budget - 10)) bash $ng "$out/g_exec" gpupart
       rm -f "$out"/g_exec/code_cache.tgz; tar czf "$out/call.tgz" -C "$out" g_exec && rm -rf "$out/g_exec"
       exit 0
     fi
     echo "== not an H200: nothing run"; exit 3 ;;
esac
run_parts() {  # limit subdir parts...
  local limit=$1 sub=$2; shift 2
  [ "$limit" -le 20 ] && { echo "== $*: skipped, ${limit} s left"; return 1; }
  timeout "$limit" bash $ng "$out/$sub" "$@"
}
if [ "${PARTS:-all}" = all ]; then
  run_parts $(($(left) - 20)) t_table table
  # The regenerated file and the table's JSON stay outside the archive (the device returns them).
  mv "$out/t_table/performance.md" "$out/t_table/table_json.tgz" "$out/" 2>/dev/null
fi
PROF_POINTS="5120,640,384,6:64 5120,640,384,6:512" run_parts $(($(left) - 20)) b_prof prof
PAIRS_FILE=results/sm_90/2026-12-07-s35/halves_default_pairs.txt run_parts $(($(left) - 20)) a_default pairs
PAIRS_FILE=results/sm_90/2026-12-06-s33/h200_defaults_pairs.txt run_parts $(($(left) - 10)) c_h200 pairs
# 4. The 16-token stage one with more CTAs per SM at M = 512 (s1_16tok_occupancy_pairs.txt).
PAIRS_FILE=results/sm_90/2026-12-07-s36/s1_16tok_occupancy_pairs.txt run_parts $(($(left) - 10)) e_occ pairs
rm -f "$out"/*/code_cache.tgz  # keep the archive small (the device compiles what the carried .cache lacks)
tar czf "$out/call.tgz" -C "$out" t_table a_default b_prof c_h200 e_occ 2>/dev/null
find "$out" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
echo "== done in $((SECONDS - start)) s"
