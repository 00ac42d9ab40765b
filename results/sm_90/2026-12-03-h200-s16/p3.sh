#!/usr/bin/env bash
# Session 16, probe 3 (issue #13): A16W4 at M = 1 and 2, the default (swapped stage one below
# 0.04 tokens per expert) against the one-warpgroup 8-token wgmma stage one with the same
# stage two, two rounds in swapped order, on the backbone (120 wgmma CTAs at M = 1), the draft
# (60) and a wide-expert shape (H5120 I1280 E256 top8: 320). Logs into OUT (tarred).
# Usage: p3.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
s1=moetune_s1_a16w4_bf16_ s2=moetune_s2_a16w4_bf16_
wg1=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 120 build/cuda/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s %s | s1 %s s2 %s tot %s %s\n", $2, $4, substr($5,1,70), $7, $8, $9, $14}'
}
for round in 1 2; do
  if [[ $round == 1 ]]; then order=(default "$wg1"); else order=("$wg1" default); fi
  bench backbone_$round --shape 5120,640,384,6 --m 1 2 --config "${order[@]}"
  bench draft_$round --shape 5120,640,128,3 --m 1 2 --config "${order[@]}"
  bench wide_$round --shape 5120,1280,256,8 --m 1 --config "${order[@]}"
done
cd $out && tar czf logs.tgz *.log *.json *.md && rm -f *.log *.json *.md
