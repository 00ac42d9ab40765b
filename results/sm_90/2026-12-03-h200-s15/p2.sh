#!/usr/bin/env bash
# Session 15, probe 2 (issue #13): probe 1 found the 8-token wgmma kernels faster with fewer
# registers or LDS per CTA (more CTAs per SM): stage one t8x64x256_w8 with a ring of 3 (48
# registers, 3 CTAs per SM: backbone M = 64 274 -> 248 us), stage two with waves 4 and a ring
# of 3 (53 registers: 182 -> 171) or 4 warps with a ring of 6 (EP M = 64 227 -> 189); and the
# one-warpgroup wgmma stage one ahead of the swapped one at backbone M = 1 (18.3 -> 16.9).
# This run: those combined and their neighbours (8-token family: backbone, draft, EP at
# M = 1 / 8 / 64), the same question for the 16-token pair (backbone, draft at M = 256 / 512),
# two rounds of the 8-token family. Logs into OUT. Usage: p2.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
pair() { echo "moetune_s1_a16w4_bf16_$1_kp1_nk16_$2_wg_gi_dw0,moetune_s2_a16w4_bf16_$3_kp1_nk16_$4_wg_ks1_dw0_atomic"; }
eight=(default
  "$(pair t8x32x256_w4 wv0_st4 t8x64x128_w4 wv4_st6)"
  "$(pair t8x64x256_w8 wv0_st3 t8x128x128_w8 wv4_st3)"
  "$(pair t8x64x128_w8 wv4_st3 t8x64x128_w4 wv4_st6)"
  "$(pair t8x64x128_w8 wv4_st4 t8x64x128_w4 wv6_st4)"
  "$(pair t8x32x256_w4 wv0_st3 t8x64x128_w4 wv5_st6)"
  "$(pair t8x64x256_w8 wv0_st3 t8x64x128_w4 wv4_st6)")
sixteen=(default
  "$(pair t16x64x128_w8 wv0_st3 t16x128x128_w8 wv0_st3)"
  "$(pair t16x64x128_w8 wv0_st4 t16x128x128_w8 wv0_st4)"
  "$(pair t16x64x256_w8 wv0_st3 t16x64x128_w4 wv0_st6)"
  "$(pair t16x64x128_w8 wv3_st3 t16x64x128_w4 wv4_st4)"
  "$(pair t8x64x256_w8 wv0_st3 t8x128x128_w8 wv4_st3)")
bench() {  # name list-name args...
  local n=$1; local -n list=$2; shift 2; local s=$SECONDS
  ${DRY:-} timeout 200 build/cuda/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" --config "${list[@]}" > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $out/bench_$n.log | cut -c1-100
}
for round in 1 2; do
  bench backbone8_$round eight --shape 5120,640,384,6 --m 1 8 64
  bench draft8_$round eight --shape 5120,640,128,3 --m 1 8 64
  bench ep8_$round eight --shape 5120,2304,96,6 --m 1 8 64
done
bench backbone16 sixteen --shape 5120,640,384,6 --m 256 512
bench draft16 sixteen --shape 5120,640,128,3 --m 256 512
cd $out && tar czf logs.tgz bench_*.log && rm bench_*.log
