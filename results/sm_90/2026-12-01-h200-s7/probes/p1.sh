#!/usr/bin/env bash
# Probe 1 (session 7): is the staged kernel at 6-40 tokens per expert held back by occupancy?
# Narrower staged tiles (stage one 32 columns = 64 weight rows, stage two 64 columns) need
# ~36 KB of LDS instead of ~60 KB, so 4-6 CTAs fit per SM instead of 3; with and without an
# occupancy hint (waves). Backbone/draft/EP at M = 512 and backbone at M = 4096, against the
# default; then Nsight Compute on the default and the narrow pair at backbone M = 512.
# Usage: p1.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
N0=${s1}t32x32x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0,${s2}t32x64x64_w4_kp1_nk16_wv0_st3_stg_rp_ks1_dw0_atomic
N4=${s1}t32x32x64_w4_kp1_nk16_wv4_st3_stg_rp_gi_dw0,${s2}t32x64x64_w4_kp1_nk16_wv4_st3_stg_rp_ks1_dw0_atomic
N5=${s1}t32x32x64_w4_kp1_nk16_wv5_st3_stg_rp_gi_dw0,${s2}t32x64x64_w4_kp1_nk16_wv5_st3_stg_rp_ks1_dw0_atomic
N4S4=${s1}t32x32x64_w4_kp1_nk16_wv4_st4_stg_rp_gi_dw0,${s2}t32x64x64_w4_kp1_nk16_wv4_st4_stg_rp_ks1_dw0_atomic
W4=${s1}t32x64x64_w4_kp1_nk16_wv4_st3_stg_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st3_stg_rp_ks1_dw0_atomic
M64N=${s1}t64x32x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0,${s2}t64x64x64_w4_kp1_nk16_wv0_st3_stg_rp_ks1_dw0_atomic
M64N4=${s1}t64x32x64_w4_kp1_nk16_wv4_st3_stg_rp_gi_dw0,${s2}t64x64x64_w4_kp1_nk16_wv4_st3_stg_rp_ks1_dw0_atomic
for shape in "backbone 5120,640,384,6 512" "draft 5120,640,128,3 512" "ep 5120,2304,96,6 512"; do
  set -- $shape
  LIM=120 t $b/bin/moe-tune bench --roofline --shape $2 --m $3 --samples 5 --cache-dir $cache \
    --config default "$N0" "$N4" "$N5" "$N4S4" "$W4" --json $out/bench_$1_$3.json > $out/bench_$1_$3.log 2>&1
  grep -E "^\| E" $out/bench_$1_$3.log | cut -c1-400 | sed 's/moetune_s[12]_a16w4_bf16_//g'
done
LIM=120 t $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 4096 --samples 5 --cache-dir $cache \
  --config default "$N4" "$M64N" "$M64N4" --json $out/bench_backbone_4096.json > $out/bench_backbone_4096.log 2>&1
grep -E "^\| E" $out/bench_backbone_4096.log | cut -c1-400 | sed 's/moetune_s[12]_a16w4_bf16_//g'
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for cfg in default "$N4"; do
  tag=$([[ $cfg == default ]] && echo default || echo narrow)
  LIM=100 t $NCU -k regex:moe_stage -c 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --m 512 --samples 1 --repeats 1 --cache-dir $cache --config "$cfg" > $out/ncu_512_$tag.txt 2>&1
done
grep -E "moe_stage|DRAM Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Duration|Warp Cycles Per Issued|Theoretical Occ|Block Limit|Shared Memory Config|Dynamic Shared" $out/ncu_512_*.txt | cut -c1-180
tar czf $out/../p1.tgz -C $out .
