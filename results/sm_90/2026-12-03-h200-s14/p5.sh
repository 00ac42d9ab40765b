#!/usr/bin/env bash
# Session 14, probe 5 (issue #13): probe 4 found A8W4 slower with this session's k loop
# (backbone M = 8 105 -> 119 us, stage one 67 -> 79). Is it the launch bound? A8NB = this
# tree with A8W4 kernels left unbounded (the bound only for A16W4), alternating with OLD and NEW.
# NEW here is build/v_noround: probe 1's binary, the same k loop and bound as NEW (same registers).
# Logs straight into OUT. Usage: p5.sh OUT   (carry build/{old,v_noround,v_a8nb}/{bin,lib})
set -uo pipefail
out=${1:?out}
bench() {  # variant name args...
  local d=build/$1 n=$1_$2; shift 2; local s=$SECONDS
  LD_LIBRARY_PATH=$d/lib:/usr/local/cuda/lib64 timeout 40 $d/bin/moe-tune bench --roofline --samples 7 \
    --cache-dir /tmp/cache_${d//\//_} "$@" > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $out/bench_$n.log | cut -c1-120
}
for v in old v_noround v_a8nb; do bench $v a8w4 --shape 5120,640,384,6 --dtype a8w4 --m 1 8 64 512; done
