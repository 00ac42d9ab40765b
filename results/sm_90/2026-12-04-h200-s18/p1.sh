#!/usr/bin/env bash
# Session 18, probe 1 (#13): stage two's wgmma kernel in several passes over block_n (one copy
# ring across 16 x warps-column passes, each pass's result out through a per-warp C tile):
# the [gpu] gates that cover it, then `bench` of the default pair against the same stage one
# with stage two in 2-5 passes and rings of 3-5, per point; Nsight Compute of stage two at
# backbone M = 512 for the default and one pass form. Logs into OUT (tarred).
# Usage: p1.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
mkdir -p $out
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
s=$SECONDS
timeout 200 build/cuda/bin/moetune_test_exec "gates: A16W4 on the DSv4.1-Flash backbone (E384 top6 H5120 I640)" \
  "gates: MXFP4 scales outside the fast decode range, the wgmma main loop" > $out/gates.log 2>&1
echo "gates: exit $?, $((SECONDS-s)) s"; tail -3 $out/gates.log
p=moetune_s2_a16w4_bf16_t
q=_kp1_nk16_
bench() {  # name shape M stage1 stage2...
  local n=$1 shape=$2 m=$3 s1=$4; shift 4; local s=$SECONDS cfg=()
  for s2 in "$@"; do cfg+=("moetune_s1_a16w4_bf16_t${s1}_gi_dw0,${p}${s2}_ks1_dw0_atomic"); done
  timeout 150 build/cuda/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache --shape $shape --m $m \
    --config "${cfg[@]}" --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{split($5,a,"+"); printf "M=%s %s | s1 %s s2 %s tot %s ok %s\n", $4, a[2], $7, $8, $9, $14}'
}
bb=5120,640,384,6; dr=5120,640,128,3; ep=5120,2304,96,6
w8=_w8${q}
bench bb1 $bb 1 8x32x256_w4${q}wv0_st4_wg 8x128x128${w8}wv0_st4_wg 8x640x128${w8}wv0_st4_wg 8x640x128${w8}wv0_st5_wg
bench bb8 $bb 8 8x32x256_w4${q}wv0_st4_wg 8x128x128${w8}wv4_st3_wg 8x640x128${w8}wv4_st4_wg 8x640x128${w8}wv4_st5_wg
bench bb64 $bb 64 8x64x256${w8}wv0_st3_wg 8x128x128${w8}wv4_st3_wg 8x256x128${w8}wv4_st3_wg 8x256x128${w8}wv4_st4_wg \
  8x640x128${w8}wv4_st3_wg 8x640x128${w8}wv4_st4_wg 8x640x128${w8}wv4_st5_wg 8x640x128${w8}wv0_st4_wg
bench bb512 $bb 512 16x64x256${w8}wv0_st3_wg 16x128x128${w8}wv0_st3_wg 16x256x128${w8}wv0_st3_wg 16x256x128${w8}wv0_st4_wg \
  16x512x128${w8}wv0_st4_wg 16x640x128${w8}wv0_st3_wg 16x640x128${w8}wv0_st4_wg 16x640x128${w8}wv0_st5_wg
bench bb4096 $bb 4096 64x64x128${w8}wv0_st3_wg 64x128x128${w8}wv0_st3_wg 64x256x128${w8}wv0_st3_wg \
  64x128x128_w4${q}wv0_st3_wg 64x256x128_w4${q}wv0_st3_wg
bench dr512 $dr 512 16x64x256${w8}wv0_st3_wg 16x128x128${w8}wv0_st3_wg 16x640x128${w8}wv0_st4_wg 16x640x128${w8}wv0_st5_wg
bench dr4096 $dr 4096 64x64x128${w8}wv0_st3_wg 64x128x128${w8}wv0_st3_wg 64x256x128${w8}wv0_st3_wg
bench ep64 $ep 64 8x64x256${w8}wv0_st3_wg 8x128x128${w8}wv4_st3_wg 8x640x128${w8}wv4_st4_wg
bench ep512 $ep 512 64x64x128${w8}wv0_st3_wg 64x128x128${w8}wv0_st3_wg 64x256x128${w8}wv0_st3_wg
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for s2 in 16x128x128${w8}wv0_st3_wg 16x640x128${w8}wv0_st4_wg; do
  s=$SECONDS
  timeout 100 $NCU --clock-control none -k regex:moe_stage2 -c 1 --section WarpStateStats --section SchedulerStats \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    build/cuda/bin/moe-tune bench --shape $bb --dtype a16w4 --m 512 --samples 1 --repeats 1 --cache-dir /tmp/cache \
    --config "moetune_s1_a16w4_bf16_t16x64x256${w8}wv0_st3_wg_gi_dw0,${p}${s2}_ks1_dw0_atomic" > $out/ncu_$s2.log 2>&1
  echo "ncu $s2: exit $?, $((SECONDS-s)) s"
  grep -E "Duration|Registers Per|Achieved Occupancy|No Eligible|DRAM Throughput|L2 Cache Throughput|Warp Cycles Per Issued" $out/ncu_$s2.log | head -8
done
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
