#!/usr/bin/env bash
# Probe 6: swapped kernels with independent accumulator chains and byte-permute activations,
# staged kernel with the byte-permute weight decode. Verify + bench. Usage: p6.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s5/probes
mkdir -p "$out"; cache=/tmp/mt-cache
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
A=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
E=${s1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
W16=${s1}t16x8x128_w4_kp1_nk16_wv0_st4_sab_gi_dw0,${s2}t16x64x128_w4_kp1_nk16_wv0_st4_sab_ks1_dw0_atomic
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
for d in a16w4 a8w4 bf16; do
  LIM=60 t $b/bin/moe-tune verify --space $here/p6_swap_space.json --m 8 --dtype $d --cache-dir $cache --json $out/verify_swap_$d.json > $out/verify_swap_$d.log 2>&1
  tail -1 $out/verify_swap_$d.log
done
LIM=100 t $b/bin/moe-tune verify --space $here/p4_staged_space.json --m 64 --dtype a16w4 a8w4 --cache-dir $cache --json $out/verify_staged.json > $out/verify_staged.log 2>&1
tail -1 $out/verify_staged.log
LIM=150 t $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 1 8 64 512 4096 --samples 5 --cache-dir $cache --config default "$W16" "$E" "$A" --json $out/bench_backbone.json > $out/bench_backbone.log 2>&1
grep -E "^ +[0-9]+ |moetune_s1|error" $out/bench_backbone.log | cut -c1-150
LIM=100 t $b/bin/moe-tune bench --roofline --shape 5120,2304,96,6 --m 64 512 --samples 5 --cache-dir $cache --config default "$E" --json $out/bench_ep.json > $out/bench_ep.log 2>&1
grep -E "^ +[0-9]+ |moetune_s1|error" $out/bench_ep.log | cut -c1-150
LIM=60 t $b/bin/moe-tune bench --roofline --shape 5120,640,128,3 --m 64 512 --samples 5 --cache-dir $cache --config default "$E" --json $out/bench_draft.json > $out/bench_draft.log 2>&1
grep -E "^ +[0-9]+ |moetune_s1|error" $out/bench_draft.log | cut -c1-150
