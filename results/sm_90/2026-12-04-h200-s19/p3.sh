#!/usr/bin/env bash
# Session 19, probe 3 (#13): what the default should take of p1 and p2.
#  a) split-K stage one with and without launch overlap (p2: at backbone M = 1 the ks4 stage
#     one alone 17.1 -> 13.0 us, the whole MoE only 28.5 -> 25.8): backbone M = 1, 2.
#  b) the draft at M = 2 and 4 (120 and 240 stage-one CTAs) with ks2 and ks4.
#  c) 128-token blocks with the k16 decode against the 64-token default at M = 4096 (p1: EP
#     and draft 1.4-2.5 % faster, the backbone 16 % slower), two rounds in swapped order, and
#     backbone M = 16384 (256 tokens per expert).
# Usage: p3.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
bench() {  # name timeout args...
  local n=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t $b/bin/moe-tune bench --roofline --cache-dir /tmp/cache "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a16w4_bf16_//g'
}
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
S1=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg; S2=${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
ks4=${S1}_ks4_gi_dw0,$S2; ks2=${S1}_ks2_gi_dw0,$S2; one=${S1}_gi_dw0,$S2
bench bb_ovl 60 --samples 7 --shape 5120,640,384,6 --m 1 2 --config $one $ks4 $ks2
bench bb_serial 60 --samples 7 --shape 5120,640,384,6 --m 1 2 --no-launch-overlap --config $one $ks4 $ks2
bench draft_ks 60 --samples 7 --shape 5120,640,128,3 --m 2 4 --config default $ks2 $ks4
t128k=${s1}t128x64x128_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0,${s2}t128x128x128_w8_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic
t64=${s1}t64x64x128_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic
for round in 1 2; do
  if [[ $round == 1 ]]; then c=("$t64" "$t128k"); else c=("$t128k" "$t64"); fi
  bench ep_big_$round 100 --samples 7 --shape 5120,2304,96,6 --m 4096 --config "${c[@]}"
  bench draft_big_$round 60 --samples 7 --shape 5120,640,128,3 --m 4096 --config "${c[@]}"
done
bench bb_16384 150 --samples 3 --shape 5120,640,384,6 --m 16384 --config "$t64" "$t128k"
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
