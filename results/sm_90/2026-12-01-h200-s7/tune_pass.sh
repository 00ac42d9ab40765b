#!/usr/bin/env bash
# Session 7's final GPU pass, part 2 (one device call): the two GPU gate test cases that the
# part-1 pass failed (fixed in 21edbce: test construction and the out-of-range-scale gate's
# tolerance), then issue #15's measurement: `tune` of the 16-bucket default list on a cold code
# cache with racing (the default), timed wall to wall and cut at TUNE_LIMIT seconds (its journal
# then lets `tune --resume` finish it). Lands in OUT/tune.tgz. Usage: tune_pass.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
w=$out/tune; mkdir -p "$w"
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=150 t $b/bin/moetune_test_exec "gates: dims*" "gates: MXFP4 scales*" > "$w/exec_tests.log" 2>&1
tail -4 "$w/exec_tests.log"
rm -rf /tmp/mt-cache-tune
LIM=${TUNE_LIMIT:-420} t $b/bin/moe-tune tune -i shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv \
  -o "$w/dsv41_flash_tp4_a16w4_tuned_fmoe.csv" --report "$w/report" --cache-dir /tmp/mt-cache-tune > "$w/tune.log" 2>&1
tail -25 "$w/tune.log"
tar czf $out/tune.tgz -C $out tune
