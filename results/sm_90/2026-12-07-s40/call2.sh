#!/usr/bin/env bash
# Session 40's second call: m1_gemv_probe (this folder: the backbone M = 1 MoE as two
# token-major register-GEMV launches, checked against its CPU reference) beside moe-tune bench's
# default at the same point on the same card, in the order bench, probe, probe, bench.
# Usage: call2.sh OUT; carry build/probe, build/cuda/bin/moe-tune and build/cuda/lib.
out=${1:?out}
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader
bench() {
  timeout 120 $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 1 2 --config default \
    --cache-dir .cache/moe-tune --json "$out/bench_$1.json" > "$out/bench_$1.log" 2>&1
  echo "bench $1 exit $?"; grep -E "^ +[0-9]+ " "$out/bench_$1.log"
}
bench r1
for r in 1 2; do timeout 120 build/probe/m1_gemv_probe 2>&1 | tee "$out/m1_gemv_probe_r$r.txt"; echo "probe exit $?"; done
bench r2
