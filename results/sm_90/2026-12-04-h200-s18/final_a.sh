#!/usr/bin/env bash
# Session 18, final call A: this tree's GPU tests -- the whole [gpu] exec suite (the k16
# decode on both stages under every gate, its exact path with out-of-range scales), the
# runtime suite, the Python package's tests and the README's example -- then the same-run A/B
# of the new default (k16 decode where the 64-K form is serialised) against sessions 15-17's
# pairs (the same tiles with the 64-K decode) at M = 8, 64, 512 on the backbone, the draft
# and EP, two rounds with the configuration order reversed.
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
step exec_gpu 260 $b/bin/moetune_test_exec "[gpu]"
step runtime 120 $b/bin/moetune_test_runtime
MOETUNE_LIBRARY=$b/lib step python 120 python3 python/tests/test_fused_moe.py -v
MOETUNE_LIBRARY=$b/lib PYTHONPATH=python step example 60 python3 examples/run_layer.py \
  --table results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --tokens 8 64 100
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
wg8_s15=${s1}t8x64x256_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_ks1_dw0_atomic
wg16_s15=${s1}t16x64x256_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic
m8_s15=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_ks1_dw0_atomic
for round in 1 2; do
  for shape in backbone:5120,640,384,6 draft:5120,640,128,3 ep:5120,2304,96,6; do
    n=${shape%%:*}; g=${shape#*:}
    cfg=(default $wg8_s15 $wg16_s15); [[ $n == backbone ]] && cfg+=($m8_s15)
    [[ $round == 2 ]] && cfg=($(printf '%s\n' "${cfg[@]}" | tac))
    s=$SECONDS
    timeout 150 $b/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache --shape $g --m 8 64 512 \
      --config "${cfg[@]}" --json $out/final_a/ab_${n}_$round.json --markdown $out/final_a/ab_${n}_$round.md \
      > $out/final_a/ab_${n}_$round.log 2>&1
    echo "ab $n round $round: exit $?, $((SECONDS-s)) s"
    grep -E "^\| E" $out/final_a/ab_${n}_$round.md | awk -F'|' '{split($5,a,"+"); gsub(/`|moetune_s[12]_a16w4_bf16_|_kp1_nk16/,"",a[1]); gsub(/`|moetune_s[12]_a16w4_bf16_|_kp1_nk16/,"",a[2]); printf "M=%s %s+%s | s1 %s s2 %s tot %s ok %s\n", $4, a[1], a[2], $7, $8, $9, $14}'
  done
done
cd $out && tar czf final_a.tgz final_a && rm -rf final_a
