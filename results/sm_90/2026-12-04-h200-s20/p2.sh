#!/usr/bin/env bash
# Session 20, probe 2 (#13): three CTAs per SM for the 64-token wgmma kernels. p1 found EP
# M = 4096's stage one (64-token blocks, 2 CTAs of 8 warps per SM, 25 % occupancy) at 46 %
# tensor-pipe and 51 % issue activity, its warps stalled on fixed-latency dependencies, the
# dispatch, L1TEX and the k-tile barrier: latency that more warps would hide. The ring now keeps
# the token rows and the weight parts apart (only the token rows 1024-aligned), so a 64-token
# stage of 128 K is 25088 B instead of 25600 and three CTAs fit in 228 KB; with the k16 decode
# and waves 3 ptxas keeps stage one at 80 registers. Bench (every row checked against the CPU
# reference): the default; the 64-token k16 pair with waves 3 (3 CTAs per SM) and waves 0
# (2); the 32-token k16 pair with waves 4 / 3; against the previous ring (moe-tune-base) for
# the default. First the [gpu] gates of the wgmma section (every block size, both dtypes)
# on the new ring. Then Nsight Compute of the 3-CTA stage one at EP M = 4096.
# Usage: p2.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
wg="the wgmma main loop on both stages, 8-, 32-, 64- and 128-token blocks"
for d in A16W4 A8W4; do
  s=$SECONDS
  timeout 200 $b/bin/moetune_test_exec "gates: $d on the DSv4.1-Flash backbone*" -c "$wg" > $out/gates_$d.log 2>&1
  echo "gates $d: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED" $out/gates_$d.log | head -5
done
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
W3=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic
W0=${s1}t64x64x128_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic
W3a=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic
T32=${s1}t32x64x128_w8_kp1_nk16_wv4_st3_wg_k16_gi_dw0,${s2}t32x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic
bench() {  # name binary timeout args...
  local n=$1 bin=$2 t=$3; shift 3; local s=$SECONDS
  timeout $t $b/bin/$bin bench --roofline --samples 7 --cache-dir /tmp/cache_$bin "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a16w4_bf16_//g'
}
for round in 1 2; do
  bench ep_$round moe-tune 150 --shape 5120,2304,96,6 --m 512 4096 --config default $W3 $W0 $W3a $T32
  bench ep_base_$round moe-tune-base 60 --shape 5120,2304,96,6 --m 512 4096 --config default
done
bench draft moe-tune 120 --shape 5120,640,128,3 --m 512 4096 --config default $W3 $W0 $W3a $T32
bench bb moe-tune 150 --shape 5120,640,384,6 --m 512 4096 16384 --config default $W3 $W0 $W3a $T32
bench bb_base moe-tune-base 100 --shape 5120,640,384,6 --m 512 4096 16384 --config default
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
s=$SECONDS
timeout 120 $NCU --clock-control none -k regex:moe_stage -c 2 --section SpeedOfLight --section WarpStateStats \
  --section Occupancy --section LaunchStats \
  --metrics "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,regex:^smsp__average_warps_issue_stalled_.*_per_issue_active.ratio$" \
  $b/bin/moe-tune bench --shape 5120,2304,96,6 --dtype a16w4 --m 4096 --samples 1 --repeats 1 --cache-dir /tmp/cache_moe-tune \
  --config $W3 > $out/ncu_w3.log 2>&1
echo "ncu w3: exit $?, $((SECONDS-s)) s"
grep -E "Duration|DRAM Throughput|Issue Slots|Warp Cycles Per Issued|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|pipe_tensor" $out/ncu_w3.log | head -30
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
