#!/usr/bin/env bash
# Session 16, probe 1 (issue #13): the producer-warp wgmma loop (`_wp`, Mainloop 5: one extra
# warp fills the ring with bulk copies of the weights and cp.async of the token rows, mbarriers
# hand the stages over, no CTA barrier per k-tile) against the landed default and its own
# non-producer twins, every row checked against the CPU reference by bench. Logs into OUT
# (tarred). Usage: p1.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
s1=moetune_s1_a16w4_bf16_ s2=moetune_s2_a16w4_bf16_
# pair BM ST1 ST2 WP: the two-warpgroup wgmma pair of BM-token blocks, rings ST1/ST2, WP "" or _wp
pair() {
  local k1=256; [[ $1 == 64 ]] && k1=128
  echo "${s1}t$1x64x${k1}_w8_kp1_nk16_wv0_st$2_wg$4_gi_dw0,${s2}t$1x128x128_w8_kp1_nk16_wv0_st$3_wg$4_ks1_dw0_atomic"
}
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 170 build/cuda/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s %s | s1 %s s2 %s tot %s %s\n", $2, $4, substr($5,1,140), $7, $8, $9, $14}'
}
small=(default "$(pair 8 3 3 _wp)" "$(pair 8 4 4 _wp)" "$(pair 16 3 3 _wp)" "$(pair 16 4 4 _wp)" "$(pair 16 3 3 "")")
bench backbone --shape 5120,640,384,6 --m 8 64 512 --config "${small[@]}"
bench draft --shape 5120,640,128,3 --m 64 512 --config "${small[@]}"
bench ep --shape 5120,2304,96,6 --m 64 512 --config "${small[@]}"
big=(default "$(pair 64 3 3 _wp)" "$(pair 64 4 4 _wp)")
bench backbone_4096 --shape 5120,640,384,6 --m 4096 --config "${big[@]}"
bench ep_4096 --shape 5120,2304,96,6 --m 4096 --config "${big[@]}"
cd $out && tar czf logs.tgz *.log *.json *.md && rm -f *.log *.json *.md
