#!/usr/bin/env bash
# Session 20, probe 1 (#13): where the many-token wgmma kernels lose (Nsight Compute). The
# points behind the peer or far from the roofline at M >= 64: EP M = 4096 (0.82x the peer),
# EP M = 512, backbone M = 512. Per kernel: speed of light, pipe utilisation (the tensor pipe),
# issue slots, warp stall reasons per issued instruction, occupancy.
# Usage: p1.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --query-metrics > $out/metrics_list.txt 2>&1
grep -iE "tensor|gmma" $out/metrics_list.txt | head -40
prof() {  # name kernel-regex shape M
  local s=$SECONDS
  timeout 150 $NCU --clock-control none -k regex:$2 -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --section InstructionStats \
    --metrics "regex:^sm__pipe_.*(tensor|gmma|alu|fma|fmaheavy|shared).*cycles_active.avg.pct_of_peak_sustained_active$,regex:^smsp__average_warps_issue_stalled_.*_per_issue_active.ratio$,regex:^sm__ops_path_tensor_src_bf16_dst_fp32.sum$,smsp__inst_executed.sum" \
    $b/bin/moe-tune bench --shape $3 --dtype a16w4 --m $4 --samples 1 --repeats 1 --cache-dir /tmp/cache \
    --config default > $out/ncu_$1.log 2>&1
  echo "ncu $1: exit $?, $((SECONDS-s)) s"
  grep -E "Duration|DRAM Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Grid Size|tensor|gmma" $out/ncu_$1.log | head -24
  grep -E "issue_stalled" $out/ncu_$1.log | sort -k3 -g -r | head -8
}
prof ep4096_s1 moe_stage1 5120,2304,96,6 4096
prof ep4096_s2 moe_stage2 5120,2304,96,6 4096
prof ep512_s1 moe_stage1 5120,2304,96,6 512
prof bb512_s1 moe_stage1 5120,640,384,6 512
prof bb512_s2 moe_stage2 5120,640,384,6 512
cd $out && tar czf logs.tgz *.log *.txt 2>/dev/null; rm -f *.log metrics_list.txt
