#!/usr/bin/env bash
# Session 34's one GPU call for the split without a cluster (unlanded_split_k_global.patch of
# session 33 applied and built as build/cuda/bin/moe-tune; main's binary as moe-tune-main):
# every correctness gate on the split kernels (moe-tune verify), the [gpu] cases that run the
# split defaults (backbone / A8W4 gates, launch overlap bit for bit), the runtime and Python
# suites (the workspace changed); the A/B (next_gpu.sh part splitab, its first four points) before
# the gates, which get what time is left.
# Usage: call_split.sh OUT [seconds]
set -uo pipefail
out=${1:?out}; budget=${2:-570}
b=build/cuda
export XDG_CACHE_HOME=$PWD/.cache LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
S=results/sm_90/2026-12-05-s25/next_gpu.sh
mkdir -p "$out/logs"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
step() {  # name limit cmd...
  local n=$1 l=$2; shift 2; local s=$SECONDS
  timeout "$l" "$@" > "$out/logs/$n.log" 2>&1
  echo "$n: exit $?, $((SECONDS - s)) s"; grep -E "test cases|FAILED|failed|passed|^OK|Error|variants" "$out/logs/$n.log" | head -4
}
step verify 70 $b/bin/moe-tune verify --space results/sm_90/2026-12-06-s33/split_verify_space.json --dtype a16w4 --m 2 \
  --cache-dir .cache/moe-tune --json "$out/logs/verify.json"
# The four points that decide (M <= 2) first, then the gates in what is left.
SPLITAB_POINTS=${SPLITAB_POINTS:-4} timeout 170 bash $S "$out/ab" splitab > "$out/ab.txt" 2>&1
echo "splitab: exit $?, $SECONDS s so far"
# GATES=0: leave the [gpu] cases out (a call too short for them).
[ "${GATES:-1}" = 1 ] && step gates $((budget - SECONDS - 90)) $b/bin/moetune_test_exec "launch overlap*,gates: A16W4 on the DSv4.1-Flash backbone*,gates: A8W4 on the DSv4.1-Flash backbone"
step runtime 40 $b/bin/moetune_test_runtime
MOETUNE_LIBRARY=$b/lib step python 40 python3 python/tests/test_fused_moe.py -v
# M8SPLIT=1: the 8-token split list (m8split_pairs.txt) in what time is left.
left=$((budget - SECONDS - 10))
[ "${M8SPLIT:-0}" = 1 ] && [ $left -gt 30 ] && PAIRS_FILE=results/sm_90/2026-12-07-s34/m8split_pairs.txt timeout $left bash $S "$out/ab" pairs > "$out/m8.txt" 2>&1
grep -c PASS "$out/ab.txt"; grep -v "PASS$" "$out/ab.txt" | grep -v "^bench\|^==\|code cache\|^name" | head -5
(cd "$out" && tar czf logs.tgz logs ab && rm -rf logs ab)
