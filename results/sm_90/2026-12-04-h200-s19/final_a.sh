#!/usr/bin/env bash
# Session 19, final call A: this tree's GPU tests -- the whole [gpu] exec suite (stage one
# split over K in a cluster of 2, 5 and 8 CTAs under every gate, both dtypes), the runtime
# suite (the default's split-K stage one at M = 1 and 2 through the library), the Python
# package's tests and the README's example -- then the same-run A/B of the new default (split-K
# stage one where the one-warpgroup stage one has few CTAs) against session 16-18's pair
# (the same kernels unsplit) at M = 1, 2, 4 on the backbone and the draft, two rounds with
# the configuration order reversed.
# Lands in OUT as final_a.tgz. Usage: final_a.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $out/final_a
step() {  # name limit cmd...
  local n=$1 l=$2; shift 2; local s=$SECONDS
  timeout $l "$@" > $out/final_a/$n.log 2>&1
  echo "$n: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed|passed|Ran |^OK|Error" $out/final_a/$n.log | head -6
}
step exec_gpu 330 $b/bin/moetune_test_exec "[gpu]"
step runtime 100 $b/bin/moetune_test_runtime
MOETUNE_LIBRARY=$b/lib step python 90 python3 python/tests/test_fused_moe.py -v
MOETUNE_LIBRARY=$b/lib PYTHONPATH=python step example 40 python3 examples/run_layer.py \
  --table results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --tokens 1 2 8 64
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
unsplit=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
for round in 1 2; do
  for shape in backbone:5120,640,384,6 draft:5120,640,128,3; do
    n=${shape%%:*}; g=${shape#*:}
    cfg=(default $unsplit); [[ $round == 2 ]] && cfg=($unsplit default)
    s=$SECONDS
    timeout 60 $b/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache --shape $g --m 1 2 4 \
      --config "${cfg[@]}" --json $out/final_a/ab_${n}_$round.json --markdown $out/final_a/ab_${n}_$round.md \
      > $out/final_a/ab_${n}_$round.log 2>&1
    echo "ab $n round $round: exit $?, $((SECONDS-s)) s"
    grep -E "^\| E" $out/final_a/ab_${n}_$round.md | awk -F'|' '{split($5,a,"+"); gsub(/`|moetune_s[12]_a16w4_bf16_|_kp1_nk16/,"",a[1]); gsub(/`|moetune_s[12]_a16w4_bf16_|_kp1_nk16/,"",a[2]); printf "M=%s %s+%s | s1 %s s2 %s tot %s ok %s\n", $4, a[1], a[2], $7, $8, $9, $14}'
  done
done
cd $out && tar czf final_a.tgz final_a && rm -rf final_a
