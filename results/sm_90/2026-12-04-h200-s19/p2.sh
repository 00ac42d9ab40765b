#!/usr/bin/env bash
# Session 19, probe 2 (#13): stage one split over K in a thread-block cluster (ksplit 2-8,
# name token _ks<N>; kernels/moe_stage1.cuh, kernels/cluster_sm90.cuh). p1 found deeper copy
# rings change nothing at M = 1 (backbone stage one 16.8 -> 17.1 us with 6-8 k-tiles), so the
# stage is not short of bytes in flight; at 120 CTAs of 4 warps it has one warp per scheduler,
# each decoding 80 64-K steps in a row. Here: the [gpu] gates of the wgmma section (with the
# split-K variants) for A16W4 and A8W4, then the bench (default against split-K stage one at
# M = 1, 2, 4, 8; backbone, draft, EP), then Nsight Compute of the default stage one and the
# ks4 one at backbone M = 1 (warp states, occupancy, DRAM).
# Usage: p2.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
s=$SECONDS
wg="the wgmma main loop on both stages, 8-, 32-, 64- and 128-token blocks"
timeout 200 $b/bin/moetune_test_exec "gates: A16W4 on the DSv4.1-Flash backbone*" -c "$wg" > $out/gates_a16w4.log 2>&1
echo "gates a16w4: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED" $out/gates_a16w4.log | head -5
s=$SECONDS
timeout 120 $b/bin/moetune_test_exec "gates: A8W4 on the DSv4.1-Flash backbone" -c "$wg" > $out/gates_a8w4.log 2>&1
echo "gates a8w4: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED" $out/gates_a8w4.log | head -5
bench() {  # name timeout args...
  local n=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t $b/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a16w4_bf16_//g'
}
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
S1=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg; S1h=${s1}t8x32x128_w4_kp1_nk16_wv0_st4_wg
S2=${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg
pair() { echo ${1}_gi_dw0,${S2}_ks${2}_dw0_atomic; }
bench bb_ks 170 --shape 5120,640,384,6 --m 1 2 4 8 --config default $(pair ${S1}_ks2 1) $(pair ${S1}_ks4 1) \
  $(pair ${S1}_ks8 1) $(pair ${S1h}_ks4 1) $(pair ${S1h}_ks8 1) $(pair ${S1}_ks4 2) $(pair $S1 2)
bench draft_ks 120 --shape 5120,640,128,3 --m 1 2 4 --config default $(pair ${S1}_ks4 1) $(pair ${S1}_ks8 1) \
  $(pair ${S1h}_ks8 1) $(pair ${S1}_ks8 2)
bench ep_ks 120 --shape 5120,2304,96,6 --m 1 2 --config default $(pair ${S1}_ks2 1) $(pair ${S1}_ks4 1) $(pair ${S1}_ks8 1)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() {  # name kernel-regex config
  local s=$SECONDS
  timeout 100 $NCU --clock-control none -k regex:$2 -c 1 --section WarpStateStats --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 1 --samples 1 --repeats 1 --cache-dir /tmp/cache \
    --config $3 > $out/ncu_$1.log 2>&1
  echo "ncu $1: exit $?, $((SECONDS-s)) s"
  grep -E "Duration|DRAM Throughput|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Grid Size|Cluster" $out/ncu_$1.log | head -12
}
prof s1_default moe_stage1 default
prof s1_ks4 moe_stage1_ksplit $(pair ${S1}_ks4 1)
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
