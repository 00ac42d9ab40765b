#!/usr/bin/env bash
# Probe 2: Nsight Compute on the staged pair A at backbone M = 4096 (stage one and stage two).
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
A=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
timeout 300 $NCU -k regex:moe_stage -c 2 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
  $b/bin/moe-tune bench --shape 5120,640,384,6 --m 4096 --samples 1 --repeats 1 --cache-dir /tmp/mt-cache --config "$A" > $out/ncu_A_m4096.txt 2>&1
echo "ncu exit $?"
