#!/usr/bin/env bash
# Session 14, probe 4 (issue #13): A8W4's defaults timed alternating OLD (HEAD 465d522) / NEW
# (this tree) twice on the backbone, M = 1 ... 512 (probe 3 timed A16W4 only).
# Logs straight into OUT. Usage: p4.sh OUT   (carry build/{cuda,old}/{bin,lib})
set -uo pipefail
out=${1:?out}
bench() {  # variant name args...
  local d=build/$1 n=$1_$2; shift 2; local s=$SECONDS
  LD_LIBRARY_PATH=$d/lib:/usr/local/cuda/lib64 timeout 60 $d/bin/moe-tune bench --roofline --samples 7 \
    --cache-dir /tmp/cache_${d//\//_} "$@" > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $out/bench_$n.log | cut -c1-120
}
for round in 1 2; do
  for v in old cuda; do bench $v a8w4_$round --shape 5120,640,384,6 --dtype a8w4 --m 1 8 64 512; done
done
