#!/usr/bin/env bash
# Probe 8 (session 6), run inline through the device tool: call 7's re-tune resumed from its
# journal (carried in the working tree as results/.../retune/report_small at the time; kept
# here as retune/report). Nine buckets came from the journal, the tenth was measured, and the
# rows were written into a copy of the published table. Usage: p8_resume.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
w=$out/p8_out; mkdir -p $w
cp results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv $w/
cp -r results/sm_90/2026-12-01-h200-s6/retune/report_small $w/report_small
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
timeout 115 $b/bin/moe-tune tune -i results/sm_90/2026-12-01-h200-s6/probes/retune_small_untuned_fmoe.csv \
  -o $w/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --report $w/report_small --resume --cache-dir /tmp/mt-cache > $w/tune_resume.log 2>&1
echo "exit $?"; tail -12 $w/tune_resume.log
tar czf $out/p8.tgz -C $out p8_out
