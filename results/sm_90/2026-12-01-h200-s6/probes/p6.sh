#!/usr/bin/env bash
# Probe 6 (session 6): the GpuSampler's block at a row's token (BlockSpec::M, #14) on the GPU,
# and a one-bucket tune (backbone token 8, M = 6) over search_spaces/sm_90.json: if it
# qualifies, its us1/us2 are timed at token 8. Usage: p6.sh BUILD OUT (output in OUT/p6.tgz)
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s6/probes
w=$out/p6_out; mkdir -p "$w"
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=60 t $b/bin/moetune_test_measure "[gpu]" > $w/measure_gpu.log 2>&1; tail -2 $w/measure_gpu.log
LIM=220 t $b/bin/moe-tune tune -i $here/token8_untuned_fmoe.csv -o $w/token8_tuned_fmoe.csv --report $w/report --cache-dir /tmp/mt-cache > $w/tune.log 2>&1
tail -5 $w/tune.log; cat $w/token8_tuned_fmoe.csv 2>/dev/null
python3 -c "
import json; r=json.load(open('$w/report/report.json'))
for b in r['buckets']: print(b['token'], b['M'], b.get('stage_times_m'), b['stage1_us'], b['stage2_us'], json.dumps(b['figures']))
" 2>&1 | tail -3
tar czf $out/p6.tgz -C $out p6_out
