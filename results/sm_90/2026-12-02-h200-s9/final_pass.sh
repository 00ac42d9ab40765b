#!/usr/bin/env bash
# Session 8's final GPU pass, part A: every [gpu] suite (test/gpu_pass.sh tests: exec gates
# with the A8W4 fragment-decode default, GpuSampler with kept screen arms, runtime, Python), the
# runtime's device time against bench, and docs/performance.md's tables (A8W4 with its
# alternatives). Part B (tune_pass.sh) is the timed 16-bucket tune.
# Usage: final_pass.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=420 STEP_LIMIT=300 t bash test/gpu_pass.sh "$b" "$out/gpu" tests > "$out/gpu_pass.log" 2>&1
grep -E "^\+|exit|passed|failed|FAILED" "$out/gpu_pass.log" | grep -v "^\[" | tail -40
LIM=120 t "$b/bin/moetune_test_runtime" "[.device_time]" > "$out/device_time.log" 2>&1
grep -vE "^\[20" "$out/device_time.log" | tail -8
cp docs/performance.md "$out/performance.md"
LIM=330 t bash test/performance_table.sh "$b" "$out/performance.md" "$out/perf" > "$out/perf.log" 2>&1
tail -5 "$out/perf.log"
sed -n '/generated:begin/,/^### backbone$/p' "$out/performance.md" | head -60
