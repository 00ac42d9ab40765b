#!/usr/bin/env bash
# Session 20, probe 3 (#13): the 16-token stage one (the default from 6 to 16 tokens per
# expert) at more CTAs per SM. p1 had backbone M = 512's (t16x64x256, ring of 3, 64-K decode)
# at 114 registers, 2 CTAs of 8 warps per SM (24 % occupancy), tensor 19 %, issue 58 %, DRAM
# 69 %. With 128-K k-tiles a stage is 12800 B, so 3-4 CTAs fit in LDS, and with the k16 decode
# ptxas keeps 52 registers. Stage one candidates (stage two the default's 16-token k16 kernel):
# 128-K k16 rings of 4 at waves 3 and 4, a ring of 3 at waves 4, a ring of 5 at waves 3; and the
# 32-token k16 pair p2 found ahead at the draft's M = 512. Two rounds, the order reversed.
# Usage: p3.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
S2=${s2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic
A=${s1}t16x64x128_w8_kp1_nk16_wv3_st4_wg_k16_gi_dw0,$S2
B=${s1}t16x64x128_w8_kp1_nk16_wv4_st4_wg_k16_gi_dw0,$S2
C=${s1}t16x64x128_w8_kp1_nk16_wv4_st3_wg_k16_gi_dw0,$S2
D=${s1}t16x64x128_w8_kp1_nk16_wv3_st5_wg_k16_gi_dw0,$S2
T32=${s1}t32x64x128_w8_kp1_nk16_wv4_st3_wg_k16_gi_dw0,${s2}t32x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic
bench() {  # name timeout args...
  local n=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t $b/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed -e 's/moetune_s[12]_a16w4_bf16_//g' -e 's/_kp1_nk16//g'
}
bench bb_1 100 --shape 5120,640,384,6 --m 256 512 --config default $A $B $C $D $T32
bench draft_1 80 --shape 5120,640,128,3 --m 256 512 --config default $A $B $C $D $T32
bench bb_2 100 --shape 5120,640,384,6 --m 256 512 --config $T32 $D $C $B $A default
bench draft_2 80 --shape 5120,640,128,3 --m 256 512 --config $T32 $D $C $B $A default
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
