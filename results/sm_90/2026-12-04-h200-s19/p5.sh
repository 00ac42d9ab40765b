#!/usr/bin/env bash
# Session 19, probe 5 (#13): the stage-one epilogue's C-tile reads, four floats at a time (one
# code path for the split and the unsplit kernels, this session) against the scalar reads of
# session 18 (binary moe-tune-s18epi: this tree with the unsplit path's epilogue as it was),
# default pairs, backbone A16W4 M = 8, 64, 512, 4096 and A8W4 M = 8, 512, two rounds in
# swapped order. Usage: p5.sh OUT (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
for round in 1 2; do
  order=(moe-tune moe-tune-s18epi); [[ $round == 2 ]] && order=(moe-tune-s18epi moe-tune)
  for bin in "${order[@]}"; do
    for d in a16w4 a8w4; do
      m="8 64 512 4096"; [[ $d == a8w4 ]] && m="8 512"
      n=${d}_${bin}_$round
      timeout 60 build/cuda/bin/$bin bench --roofline --samples 7 --cache-dir /tmp/cache_$bin --shape 5120,640,384,6 --dtype $d \
        --m $m --config default --markdown $out/$n.md > $out/$n.log 2>&1
      echo "$n: exit $?"; grep -E "^\| E" $out/$n.md | awk -F'|' '{printf "  M=%s s1 %s s2 %s tot %s\n", $4, $7, $8, $9}'
    done
  done
done
cd $out && tar czf logs.tgz *.log *.md 2>/dev/null; rm -f *.log *.md
