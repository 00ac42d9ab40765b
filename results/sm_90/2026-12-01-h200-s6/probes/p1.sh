#!/usr/bin/env bash
# Probe 1 (session 6): the GPU tests on the committed tree (the #14 err-share change's first
# GPU run), a sweep of staged tile shapes at 8-64 tokens per expert (more weight bytes in flight
# per CTA: block_k 128, 4-5 stages, 128-column stage-one tiles), and Nsight Compute on the
# default pairs at backbone M = 64 (swapped) and M = 512 (staged). Usage: p1.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
STEP_LIMIT=200 bash test/gpu_pass.sh "$b" "$out/tests" tests > "$out/tests.log" 2>&1
grep -E "All tests|FAILED|failed|exit" "$out/tests.log" | tail -12
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
D=${s1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
K128=${s1}t32x64x128_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t32x128x128_w4_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
K128S4=${s1}t32x64x128_w4_kp1_nk16_wv0_st4_stg_gi_dw0,${s2}t32x128x128_w4_kp1_nk16_wv0_st4_stg_ks1_dw0_atomic
S5=${s1}t32x64x64_w4_kp1_nk16_wv0_st5_stg_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st5_stg_ks1_dw0_atomic
N128=${s1}t32x128x64_w4_kp1_nk16_wv0_st4_stg_gi_dw0,${s2}t32x128x64_w8_kp1_nk16_wv0_st4_stg_ks1_dw0_atomic
N128W8=${s1}t32x128x128_w8_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t32x256x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
SW=${s1}t8x8x256_w4_kp1_nk16_wv0_st2_sab_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv0_st2_sab_ks1_dw0_atomic
SW4=${s1}t8x8x256_w4_kp1_nk16_wv0_st4_sab_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv0_st4_sab_ks1_dw0_atomic
SWK=${s1}t8x8x512_w4_kp1_nk16_wv0_st2_sab_gi_dw0,${s2}t8x64x256_w4_kp1_nk16_wv0_st2_sab_ks1_dw0_atomic
LIM=200 t $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 512 --samples 5 --cache-dir $cache --config "$D" "$K128" "$K128S4" "$S5" "$N128" "$N128W8" "$SW" --json $out/bench_backbone512.json > $out/bench_backbone512.log 2>&1
grep -E "^\| E" $out/bench_backbone512.log | cut -c1-400 | sed 's/moetune_s[12]_a16w4_bf16_//g'
LIM=150 t $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 64 --samples 5 --cache-dir $cache --config "$SW" "$SW4" "$SWK" --json $out/bench_backbone64.json > $out/bench_backbone64.log 2>&1
grep -E "^\| E" $out/bench_backbone64.log | cut -c1-400 | sed 's/moetune_s[12]_a16w4_bf16_//g'
LIM=150 t $b/bin/moe-tune bench --roofline --shape 5120,640,128,3 --m 512 --samples 5 --cache-dir $cache --config "$D" "$K128" "$K128S4" "$S5" "$N128" "$N128W8" --json $out/bench_draft512.json > $out/bench_draft512.log 2>&1
grep -E "^\| E" $out/bench_draft512.log | cut -c1-400 | sed 's/moetune_s[12]_a16w4_bf16_//g'
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for pair in "512 $D" "64 $SW"; do
  set -- $pair
  LIM=150 t $NCU -k regex:moe_stage -c 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --m $1 --samples 1 --repeats 1 --cache-dir $cache --config "$2" > $out/ncu_m$1.txt 2>&1
done
grep -E "moe_stage|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Duration|Warp Cycles Per Issued|Theoretical Occ|Block Limit" $out/ncu_m*.txt | cut -c1-200
