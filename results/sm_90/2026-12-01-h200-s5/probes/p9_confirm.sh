#!/usr/bin/env bash
# Probe 9: the committed tree (helpers factored out of the two MXFP4 decodes after the final
# pass) — the exec gates and a bench of the default at three sizes, to confirm nothing moved.
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"
timeout 150 $b/bin/moetune_test_exec "[gpu]" > $out/exec.log 2>&1; echo "exec: exit $? $(tail -2 $out/exec.log | head -1)"
timeout 120 $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 8 512 4096 --samples 5 --cache-dir /tmp/mt-cache --config default --json $out/bench_backbone.json > $out/bench_backbone.log 2>&1
echo "bench: exit $?"; grep -E "^ +[0-9]+ " $out/bench_backbone.log
