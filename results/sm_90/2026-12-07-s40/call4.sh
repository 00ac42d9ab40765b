#!/usr/bin/env bash
# Session 40's fourth call: gemv_probe (this folder; natural and wgmma-tile layouts) at M = 1, 2, 4, 8 on the three shapes, beside
# moe-tune bench's default at M = 4 and 8 (M = 1 and 2 were benched in call 3), bench, probe, bench.
# Output kept small (the device returns at most 8 files): probe.txt, bench_r1.txt, bench_r2.txt.
# Usage: call4.sh OUT; carry build/probe, build/cuda/bin/moe-tune and build/cuda/lib.
out=${1:?out}
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/card.txt"
bench() {
  for sh in 5120,640,384,6 5120,640,128,3 5120,2304,96,6; do
    echo "bench $1 $sh"
    timeout 100 $b/bin/moe-tune bench --shape $sh --dtype a16w4 --m 4 8 --config default --cache-dir .cache/moe-tune 2>&1 \
      | grep -E "^ +[0-9]+ |error"
  done | tee "$out/bench_$1.txt"
}
bench r1
timeout 300 build/probe/gemv_probe 2>&1 | tee "$out/probe.txt"; echo "probe exit $?"
bench r2
