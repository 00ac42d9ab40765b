#!/usr/bin/env bash
# Session 6's final GPU pass on the committed tree (one device call): the [gpu] test suites,
# the performance table (docs/performance.md's generated part + every bench JSON), a two-bucket
# tune (token 8 and 64 of the backbone, ci.json) to see us1/us2 timed at token (#14), and
# `requalify` of the published table against the new default. Everything lands in OUT and is
# tarred into OUT/final.tgz. Usage: final_pass.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s6
w=$out/final; mkdir -p "$w"
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
STEP_LIMIT=200 bash test/gpu_pass.sh "$b" "$w/tests" tests > "$w/gpu_pass.log" 2>&1
grep -E "All tests|FAILED|failed|test cases" "$w/gpu_pass.log" | tail -8
cp docs/performance.md "$w/performance.md"
LIM=260 t bash test/performance_table.sh "$b" "$w/performance.md" "$w/json" > "$w/performance_table.log" 2>&1
tail -3 "$w/performance_table.log"
LIM=150 t $b/bin/moe-tune tune -i $here/probes/two_buckets_untuned_fmoe.csv --space search_spaces/ci.json \
  -o "$w/tune/two_buckets_tuned_fmoe.csv" --report "$w/tune/report" --cache-dir /tmp/mt-cache > "$w/tune.log" 2>&1
tail -6 "$w/tune.log"
LIM=170 t $b/bin/moe-tune requalify results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --cache-dir /tmp/mt-cache \
  --report "$w/requalify" > "$w/requalify.log" 2>&1
tail -22 "$w/requalify.log"
tar czf $out/final.tgz -C $out final
