#!/usr/bin/env bash
# Probe 3 (session 10): why the first wgmma pairs stream MXFP4 at only ~2 TB/s (backbone
# M = 512, 16-token blocks) and reach ~250 TFLOP/s at M = 4096 (64-token blocks): Nsight Compute
# on both stage-one kernels, and benches of the knobs that test the hypotheses (two
# warpgroups per CTA, so each token row read into LDS serves twice the weight rows; deeper
# rings; one warpgroup with more CTAs per SM).
# Usage: p3.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
pair() { echo "${s1}t$1_kp1_nk16_wv0_st$3_wg_gi_dw0,${s2}t$2_kp1_nk16_wv0_st$3_wg_ks1_dw0_atomic"; }
W16=$(pair 16x32x256_w4 16x64x128_w4 4)
W64=$(pair 64x64x128_w8 64x128x128_w8 3)
for spec in "512 $W16" "4096 $W64"; do
  set -- $spec
  LIM=150 t $NCU --clock-control none -k regex:moe_stage -c 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m $1 --samples 1 --repeats 1 --cache-dir $cache --config $2 > $out/ncu_$1.txt 2>&1
  grep -E "moe_stage|DRAM Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Duration|Warp Cycles Per Issued|Theoretical Occ|Block Limit|L2 Cache Throughput|L1/TEX Cache Throughput|Executed Ipc|Compute \(SM\) Throughput|Memory Throughput|Stall" $out/ncu_$1.txt | cut -c1-160
done
P="$W16 $(pair 16x64x256_w8 16x128x128_w8 4) $(pair 16x32x256_w4 16x64x128_w4 6) $(pair 8x64x256_w8 8x128x128_w8 4) $(pair 32x64x128_w8 32x128x128_w8 4)"
LIM=150 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 64 512 --samples 5 --cache-dir $cache \
  --config $P --json $out/bench_small.json > $out/bench_small.log 2>&1
grep -E "^ +[0-9]+ +[0-9.]+ " $out/bench_small.log
P="$W64 $(pair 64x64x128_w8 64x128x128_w8 4) $(pair 64x32x128_w4 64x64x128_w4 4) $(pair 32x64x128_w8 32x128x128_w8 4) $(pair 128x64x128_w8 128x128x128_w8 4)"
LIM=120 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 4096 --samples 5 --cache-dir $cache \
  --config $P --json $out/bench_large.json > $out/bench_large.log 2>&1
grep -E "^ +[0-9]+ +[0-9.]+ " $out/bench_large.log
