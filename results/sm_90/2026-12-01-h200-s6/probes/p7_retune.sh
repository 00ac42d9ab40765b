#!/usr/bin/env bash
# Probe 7 (session 6): re-tune of the published table's buckets against the new default
# (repacked weights), as far as the device budget goes: tokens 8-128 of the backbone and the
# draft first, then token 256 of both. Each run starts from the published table, so decided
# buckets replace or withdraw their old rows and every other line stays. Usage: p7_retune.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s6/probes
w=$out/p7_out; mkdir -p "$w"
cp results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv $w/dsv41_flash_tp4_a16w4_tuned_fmoe.csv
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=300 t $b/bin/moe-tune tune -i $here/retune_small_untuned_fmoe.csv -o $w/dsv41_flash_tp4_a16w4_tuned_fmoe.csv \
  --report $w/report_small --cache-dir /tmp/mt-cache > $w/tune_small.log 2>&1
grep -E "=>|buckets qualified" $w/tune_small.log
if (( SECONDS < 280 )); then
  LIM=$((390 - SECONDS)) t $b/bin/moe-tune tune -i $here/retune_256_untuned_fmoe.csv -o $w/dsv41_flash_tp4_a16w4_tuned_fmoe.csv \
    --report $w/report_256 --cache-dir /tmp/mt-cache > $w/tune_256.log 2>&1
  grep -E "=>|buckets qualified" $w/tune_256.log
fi
tar czf $out/p7.tgz -C $out p7_out
