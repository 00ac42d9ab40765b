#!/usr/bin/env bash
# Session 14, probe 2 (issue #13): the k loop of session 13 without its per-stage unroll and
# without its launch bound (this tree, NEW): the whole [gpu] exec suite (now with the 64-token
# 8-warp wgmma pair) and the runtime suite; then the defaults timed alternating OLD (HEAD
# 465d522) / NEW / ROUND (session 13's patch as it was: unrolled, launch bound), twice, on
# the backbone (M = 1 ... 4096) and EP (M = 64, 512).
# Logs straight into OUT. Usage: p2.sh OUT   (carry build/{cuda,old,v_round}/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
s=$SECONDS
timeout 260 build/cuda/bin/moetune_test_exec "[gpu]" > $out/exec_gpu.log 2>&1
echo "exec [gpu]: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $out/exec_gpu.log | head
s=$SECONDS
timeout 60 build/cuda/bin/moetune_test_runtime > $out/runtime.log 2>&1
echo "runtime: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $out/runtime.log | head
bench() {  # variant name args...
  local d=build/$1 n=$1_$2; shift 2; local s=$SECONDS
  LD_LIBRARY_PATH=$d/lib:/usr/local/cuda/lib64 timeout 60 $d/bin/moe-tune bench --roofline --samples 7 \
    --cache-dir /tmp/cache_${d//\//_} "$@" > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $out/bench_$n.log | cut -c1-120
}
for round in 1 2; do
  for v in old cuda v_round; do bench $v backbone_$round --shape 5120,640,384,6 --m 1 8 64 512 4096; done
done
for v in old cuda v_round; do bench $v ep --shape 5120,2304,96,6 --m 64 512; done
