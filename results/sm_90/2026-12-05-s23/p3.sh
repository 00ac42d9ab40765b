#!/usr/bin/env bash
# Session 23's GPU pass (#13): the A8W4 stage one's epilogue on four lanes per MX block (was one
# thread per 32 columns), checked and timed against session 22's tree.
#   part check: the DeviceBuffer ordering test (session 22's fix, never run on a GPU), the A8W4
#               backbone gate (every section: each main loop and split-K reach the epilogue),
#               the out-of-range-scale gate's wgmma section, the runtime's reference test.
#   part ab:    whole MoE on the A8W4 backbone per M, the default and the _xb+_hb pair (the
#               A16W4 default's kernels at that M), by session 22's binary (moe-tune_s22: its
#               kernels are embedded, built from e7215a2) and by this tree's, the order of the
#               two binaries alternating from one M to the next; then the A16W4 default (its
#               kernels are the same in both trees) for the A8W4 / A16W4 ratio.
# Usage: p3.sh OUT PART...   (carry build/cuda/{bin,lib}); logs archived into OUT.
set -uo pipefail
out=${1:?out}; shift
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
cat $out/gpu.txt
gate() {  # log limit binary args...
  local log=$1 lim=$2 bin=$3; shift 3; local s=$SECONDS
  timeout $lim $b/bin/$bin "$@" > $out/$log.log 2>&1
  echo "$log: exit $?, $((SECONDS-s)) s"; grep -E "passed|failed|FAILED|No test cases|with expansion|skipped" $out/$log.log | head -8
}
s1=moetune_s1_a8w4_fp8_; s2=moetune_s2_a8w4_fp8_
declare -A P
XH1=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_hb_xb_ks4_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_hb_ks1_dw0_atomic
XH8=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_hb_xb_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
XH64w=${s1}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_hb_xb_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
XH16=${s1}t16x64x256_w8_kp1_nk16_wv0_st3_wg_hb_xb_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_ks1_dw0_atomic
XH64=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_xb_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic
XB64=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_xb_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
P[1]="default $XH1"
P[8]="default $XH8"
P[64]="default $XH64w"
P[512]="default $XH16"
P[4096]="default $XH64 $XB64"
bench() {  # name binary args...
  local n=$1 bin=$2; shift 2; local s=$SECONDS
  timeout 240 $b/bin/$bin bench --roofline --samples 7 --cache-dir /tmp/cache_$bin "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a8w4_fp8_//g'
}
for part in "$@"; do
  echo "== $part"
  case $part in
    check)
      gate gpu_ordering 120 moetune_test_gpu "a synchronous memset or copy has finished before work queued on a stream"
      gate gates_a8w4 240 moetune_test_exec "gates: A8W4 on the DSv4.1-Flash backbone"
      gate gates_scales_wgmma 120 moetune_test_exec "gates: MXFP4 scales outside the fast decode range\, the wgmma main loop"
      gate runtime_reference 120 moetune_test_runtime "forward matches the CPU reference on every data path" ;;
    ab)
      order=(moe-tune_s22 moe-tune)
      for M in 4096 8 512 1 64; do
        for bin in "${order[@]}"; do
          bench a8w4_M${M}_$bin $bin --shape 5120,640,384,6 --dtype a8w4 --m $M --config ${P[$M]}
        done
        order=(${order[1]} ${order[0]})
      done
      bench a16w4 moe-tune --shape 5120,640,384,6 --dtype a16w4 --m 1 8 64 512 4096 --config default ;;
  esac
done
# Everything in one archive (the device returns a limited number of files).
(cd $out && tar czf logs_$(date +%H%M%S).tgz $(ls *.log *.md *.json *.txt 2>/dev/null) && rm -f *.log *.md *.json)
