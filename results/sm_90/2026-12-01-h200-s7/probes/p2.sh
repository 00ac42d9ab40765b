#!/usr/bin/env bash
# Probe 2 (session 7): the staged main loop with fragment decode (_stg_fd_rp). `verify` of its
# variants on the backbone (M = 512) and on a shape with a partial N tile and a ragged K
# (H2048 I544 E64 top4, M = 96), then bench A/Bs against the default at M = 64, 512, 4096.
# SKIP_VERIFY=1 leaves out the two verify runs (probe 2 was rerun that way after its bench
# part met a name-parser bug, fixed in the same session). Usage: p2.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
here=results/sm_90/2026-12-01-h200-s7/probes
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
if [[ -z ${SKIP_VERIFY:-} ]]; then
LIM=150 t $b/bin/moe-tune verify --space $here/p2_fd_space.json --dtype a16w4 --m 512 --cache-dir $cache --json $out/verify_backbone.json > $out/verify_backbone.log 2>&1
grep -cE "^  pass" $out/verify_backbone.log; grep -E "FAIL|passed|failed" $out/verify_backbone.log | tail -5
LIM=100 t $b/bin/moe-tune verify --space $here/p2_fd_space.json --dtype a16w4 --shape 2048,544,64,4 --m 96 --cache-dir $cache --json $out/verify_odd.json > $out/verify_odd.log 2>&1
grep -cE "^  pass" $out/verify_odd.log; grep -E "FAIL|passed|failed" $out/verify_odd.log | tail -5
fi
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
F1=${s1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_fd_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_fd_rp_ks1_dw0_atomic
F2=${s1}t32x64x64_w4_kp1_nk16_wv4_st3_stg_fd_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st3_stg_fd_rp_ks1_dw0_atomic
F3=${s1}t32x64x64_w4_kp1_nk16_wv4_st4_stg_fd_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st4_stg_fd_rp_ks1_dw0_atomic
F4=${s1}t32x32x64_w4_kp1_nk16_wv0_st4_stg_fd_rp_gi_dw0,${s2}t32x64x64_w4_kp1_nk16_wv0_st4_stg_fd_rp_ks1_dw0_atomic
F5=${s1}t64x32x64_w4_kp1_nk16_wv0_st4_stg_fd_rp_gi_dw0,${s2}t64x64x64_w4_kp1_nk16_wv0_st3_stg_fd_rp_ks1_dw0_atomic
F6=${s1}t64x64x64_w8_kp1_nk16_wv0_st3_stg_fd_rp_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_fd_rp_ks1_dw0_atomic
for shape in "backbone 5120,640,384,6 512" "draft 5120,640,128,3 512" "ep 5120,2304,96,6 512" "backbone 5120,640,384,6 64"; do
  set -- $shape
  LIM=120 t $b/bin/moe-tune bench --roofline --shape $2 --m $3 --samples 5 --cache-dir $cache \
    --config default "$F1" "$F2" "$F3" "$F4" --json $out/bench_$1_$3.json > $out/bench_$1_$3.log 2>&1
  grep -E "^ +[0-9]+ |moetune_s1" $out/bench_$1_$3.log | sed 's/moetune_s[12]_a16w4_bf16_//g' | sed 's/_kp1_nk16//g' | paste - - | awk '{print $1, $5, $6, $7, $8, $NF}'
done
LIM=120 t $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 4096 --samples 5 --cache-dir $cache \
  --config default "$F2" "$F5" "$F6" --json $out/bench_backbone_4096.json > $out/bench_backbone_4096.log 2>&1
grep -E "^ +[0-9]+ |moetune_s1" $out/bench_backbone_4096.log | sed 's/moetune_s[12]_a16w4_bf16_//g' | sed 's/_kp1_nk16//g' | paste - - | awk '{print $1, $5, $6, $7, $8, $NF}'
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
LIM=100 t $NCU -k regex:moe_stage -c 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats \
  $b/bin/moe-tune bench --shape 5120,640,384,6 --m 512 --samples 1 --repeats 1 --cache-dir $cache --config "$F2" > $out/ncu_512_fd.txt 2>&1
grep -E "moe_stage|DRAM Throughput|L1/TEX Cache|Achieved Occupancy|Registers Per|Issued Warp|No Eligible|Duration|Warp Cycles Per Issued|Theoretical Occ|Executed Instructions  " $out/ncu_512_fd.txt | cut -c1-150
tar czf $out/../p2.tgz -C $out .
