#!/usr/bin/env bash
# Session 11, call A (issue #15): the GpuSampler [gpu] cases (kept screen arms at 4 launches
# per sample), then the 16-bucket tune of the DeepSeek-V4.1-Flash TP4 A16W4 list with a cold
# code cache and this session's screen (4 launches per sample, the first cut after one
# sample) and confirmation (futility stop). Stopped at LIMIT seconds if it has not finished;
# the journal keeps what was done. Everything lands in OUT/tune_a.tgz.
# Usage: tune_a.sh BUILD OUT [LIMIT]
set -uo pipefail
b=${1:?build}; out=${2:?out}; limit=${3:-480}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/tune_a; rm -rf $work; mkdir -p $work/tune/report
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $work/device.txt 2>&1
s=$SECONDS
timeout 120 "$b/bin/moetune_test_measure" "[gpu]" > $work/measure_gpu.log 2>&1
echo "measure [gpu]: exit $?, $((SECONDS-s)) s" | tee -a $work/measure_gpu.log
tail -3 $work/measure_gpu.log
s=$SECONDS
timeout "$limit" "$b/bin/moe-tune" tune -i shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv \
  -o "$work/tune/dsv41_flash_tp4_a16w4_tuned_fmoe.csv" --report "$work/tune/report" \
  --cache-dir /tmp/mt-cache-tune > "$work/tune/tune.log" 2>&1
echo "(exit $?, $((SECONDS-s)) s)" | tee -a "$work/tune/tune.log"
grep -E "screened|confirmation|correct at|compiled|total|qualified" "$work/tune/tune.log" | cut -c1-220 | tail -70
tar czf "$out/tune_a.tgz" -C $work .
