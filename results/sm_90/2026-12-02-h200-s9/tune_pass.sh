#!/usr/bin/env bash
# Session 8's final GPU pass, part B: the 16-bucket tune of the DeepSeek-V4.1-Flash TP4 A16W4
# list with a cold code cache, timed per phase, to compare the screen's seconds with session
# 7's run (results/sm_90/2026-12-01-h200-s7/tune/) after the screen keeps its arms per bucket
# (issue #15). Stopped at LIMIT seconds if it has not finished; the journal keeps what was done.
# Usage: tune_pass.sh BUILD OUT [LIMIT]
set -uo pipefail
b=${1:?build}; out=${2:?out}; limit=${3:-480}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out/report"
s=$SECONDS
timeout "$limit" "$b/bin/moe-tune" tune -i shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv \
  -o "$out/dsv41_flash_tp4_a16w4_tuned_fmoe.csv" --report "$out/report" --cache-dir /tmp/mt-cache-tune \
  > "$out/tune.log" 2>&1
echo "(exit $?, $((SECONDS-s)) s)" | tee -a "$out/tune.log"
grep -E "^\[|screened|confirmation|qualified|total" "$out/tune.log" | tail -60
