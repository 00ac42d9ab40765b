#!/usr/bin/env bash
# Session 40's third call: gemv_probe (this folder: the token-major register-GEMV MoE at M = 1
# and 2 on the backbone, the draft and EP, checked against its CPU reference) beside moe-tune
# bench's default at the same points on the same card (bench, probe, bench).
# Usage: call3.sh OUT; carry build/probe, build/cuda/bin/moe-tune and build/cuda/lib.
out=${1:?out}
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader
bench() {
  for sh in 5120,640,384,6 5120,640,128,3 5120,2304,96,6; do
    timeout 100 $b/bin/moe-tune bench --shape $sh --dtype a16w4 --m 1 2 --config default \
      --cache-dir .cache/moe-tune --json "$out/bench_$1_${sh//,/_}.json" > "$out/bench_$1_${sh//,/_}.log" 2>&1
    echo "bench $1 $sh exit $?"; grep -E "^ +[0-9]+ " "$out/bench_$1_${sh//,/_}.log"
  done
}
bench r1
timeout 200 build/probe/gemv_probe 2>&1 | tee "$out/gemv_probe.txt"; echo "probe exit $?"
bench r2
