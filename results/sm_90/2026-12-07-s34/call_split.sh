#!/usr/bin/env bash
# Session 34's one GPU call for the split without a cluster (unlanded_split_k_global.patch of
# session 33 applied and built as build/cuda/bin/moe-tune; main's binary as moe-tune-main), as
# one run of next_gpu.sh's parts: every correctness gate on the split kernels (splitverify), the
# A/B (splitab, its first four points: M <= 2), the [gpu] cases that run the split defaults
# (gpupart: backbone / A8W4 gates, launch overlap bit for bit), the runtime and Python suites
# (runtimepy: the workspace changed). next_gpu.sh archives the logs and the code cache in OUT.
# Usage: call_split.sh OUT [seconds]. GATES=0 leaves gpupart out (a call too short for it);
# M8SPLIT=1 adds part pairs with m8split_pairs.txt last, in what time is left. The budget is a
# hard stop that loses next_gpu.sh's archive: give the device call 20 s more than it.
set -uo pipefail
out=${1:?out}; budget=${2:-570}
parts=(splitverify splitab)
[ "${GATES:-1}" = 1 ] && parts+=(gpupart)
parts+=(runtimepy)
[ "${M8SPLIT:-0}" = 1 ] && parts+=(pairs)
# gpupart's limit: what is left after splitverify (70 s), splitab's four points (~35 s each) and
# runtimepy (~25 s), with room for the archives.
SPLITAB_POINTS=${SPLITAB_POINTS:-4} GPU_PART_LIMIT=$((budget - 70 - 150 - 60)) \
  GPU_TESTS="launch overlap*,gates: A16W4 on the DSv4.1-Flash backbone*,gates: A8W4 on the DSv4.1-Flash backbone" \
  PAIRS_FILE=results/sm_90/2026-12-07-s34/m8split_pairs.txt \
  timeout "$budget" bash results/sm_90/2026-12-05-s25/next_gpu.sh "$out" "${parts[@]}"
