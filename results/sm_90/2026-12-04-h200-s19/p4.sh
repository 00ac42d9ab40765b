#!/usr/bin/env bash
# Session 19, probe 4 (#13): A8W4's one-warpgroup 8-token stage one (128-K tiles) split over K
# (final_b: with A16W4's split, A8W4 / A16W4 at backbone M = 1 went 1.12 -> 1.23). Backbone,
# draft and EP at M = 1, 2, 4: the default against ks2 and ks4 with the default's stage two.
# Usage: p4.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
bench() {  # name timeout args...
  local n=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t $b/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache --dtype a8w4 "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a8w4_fp8_//g'
}
s1=moetune_s1_a8w4_fp8_t8x32x128_w4_kp1_nk16_wv0_st4_wg; s2=moetune_s2_a8w4_fp8_t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
for round in 1 2; do
  c=(default ${s1}_ks2_gi_dw0,$s2 ${s1}_ks4_gi_dw0,$s2); [[ $round == 2 ]] && c=(${s1}_ks4_gi_dw0,$s2 ${s1}_ks2_gi_dw0,$s2 default)
  bench bb_$round 60 --shape 5120,640,384,6 --m 1 2 4 --config "${c[@]}"
  bench draft_$round 40 --shape 5120,640,128,3 --m 1 2 4 --config "${c[@]}"
  bench ep_$round 40 --shape 5120,2304,96,6 --m 1 --config "${c[@]}"
done
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
