#!/usr/bin/env bash
# Session 19, probe 1 (#13): three ideas, measured before any of them is landed.
#  a) Deep copy rings where the 8-token wgmma kernels have few CTAs (M = 1: the backbone's
#     stage one has 120 CTAs, one per SM, and a ring of 4 keeps only 2 k-tiles (~25 KB) in
#     flight per SM; stage two 240 CTAs with K = 640 in 5 k-tiles): stages 6 and 8, M = 1 and 8,
#     backbone, draft (also the wgmma stage one at its 60 CTAs) and EP.
#  b) 128-token wgmma blocks (an expert's weights decoded once per 128 tokens) at M = 4096,
#     with and without the k16 decode (138 / 150 registers), against the 64-token default.
#  c) 64-token wgmma chunks (one m64n64k16 per k16 step instead of two m64n32k16) in the
#     64- and 128-token kernels: binary moe-tune-c64 (kernels/moe_config.cuh's wg_chunk 64 for
#     block_m >= 64, otherwise the same tree), same run, M = 512 and 4096.
# Usage: p1.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
bench() {  # binary name timeout args...
  local bin=$1 n=$2 t=$3; shift 3; local s=$SECONDS
  timeout $t build/cuda/bin/$bin bench --roofline --samples 7 --cache-dir /tmp/cache_$bin "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a16w4_bf16_//g'
}
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
S1W4=${s1}t8x32x256_w4_kp1_nk16_wv0_st; S2W8=${s2}t8x128x128_w8_kp1_nk16_wv0_st
d6_4=${S1W4}6_wg_gi_dw0,${S2W8}4_wg_ks1_dw0_atomic
d8_4=${S1W4}8_wg_gi_dw0,${S2W8}4_wg_ks1_dw0_atomic
d8_6=${S1W4}8_wg_gi_dw0,${S2W8}6_wg_ks1_dw0_atomic
d8_8=${S1W4}8_wg_gi_dw0,${S2W8}8_wg_ks1_dw0_atomic
m8_s2=${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic  # M = 8's default stage two
d6_m8=${S1W4}6_wg_gi_dw0,$m8_s2
sw8_8=${s1}t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp_gi_dw0,${S2W8}8_wg_ks1_dw0_atomic
# a) deep rings
bench moe-tune bb_low 150 --shape 5120,640,384,6 --m 1 8 --config default $d6_4 $d8_4 $d8_6 $d8_8 $d6_m8
bench moe-tune draft_low 150 --shape 5120,640,128,3 --m 1 8 --config default $d8_4 $d8_6 $d8_8 $sw8_8
bench moe-tune ep_low 150 --shape 5120,2304,96,6 --m 1 8 --config default $d6_4 $d8_4 $d8_6 $d8_8
# b) and c) big blocks, 64-token chunks
t128=${s1}t128x64x128_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t128x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic
t128k=${s1}t128x64x128_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0,${s2}t128x128x128_w8_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic
t64=${s1}t64x64x128_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic
for bin in moe-tune moe-tune-c64; do
  bench $bin ep_big_$bin 170 --shape 5120,2304,96,6 --m 512 4096 --config $t64 $t128 $t128k
  bench $bin draft_big_$bin 120 --shape 5120,640,128,3 --m 4096 --config $t64 $t128 $t128k
  bench $bin bb_big_$bin 120 --shape 5120,640,384,6 --m 4096 --config $t64 $t128 $t128k
done
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
