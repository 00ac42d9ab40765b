#!/usr/bin/env bash
# Session 22's GPU pass (#13): session 21's `_hb` pair (h kept in bf16) and this session's
# `_xb` stage one (x upcast to bf16 by the sort's launch, A16W4's main loop with A8W4's
# epilogue), against the A8W4 default, whole MoE on the A8W4 backbone.
#   part gates: the [gpu] gates carrying _hb and _xb pairs (A8W4 backbone wgmma section, the
#               out-of-range-scale wgmma gate, the runtime's tuned row: bucket 16 an _hb pair
#               whose wgmma stage one reads x in bf16).
#   part r1 / r2: per M the default, the _hb pair, the _xb+_hb pair (both stages compiled as
#               the A16W4 default's kernels), at M = 4096 also _xb with fp8 h; r2 lists them in
#               reverse order. Then the A16W4 default for the A8W4 / A16W4 ratio.
# Usage: p2.sh OUT PART...   (carry build/cuda/{bin,lib}); logs into OUT.
set -uo pipefail
out=${1:?out}; shift
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
gate() {  # log binary args...
  local log=$1 bin=$2; shift 2; local s=$SECONDS
  timeout 300 $b/bin/$bin "$@" > $out/$log.log 2>&1
  echo "$log: exit $?, $((SECONDS-s)) s"; grep -E "passed|failed|FAILED|No test cases|with expansion" $out/$log.log | head -8
}
s1=moetune_s1_a8w4_fp8_; s2=moetune_s2_a8w4_fp8_
declare -A P
# session 21's _hb pairs: the A8W4 default's stage ones keeping h in bf16, A16W4's stage twos
HB1=${s1}t8x32x128_w4_kp1_nk16_wv0_st4_wg_hb_ks4_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_hb_ks1_dw0_atomic
HB8=${s1}t8x32x128_w4_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
HB16=${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_ks1_dw0_atomic
HB64=${s1}t64x64x128_w8_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic
# _xb + _hb: both stages the A16W4 default's kernels at that M (default_config.cpp; M = 64: XH64w)
XH1=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_hb_xb_ks4_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_hb_ks1_dw0_atomic
XH8=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_hb_xb_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
XH64w=${s1}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_hb_xb_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
XH16=${s1}t16x64x256_w8_kp1_nk16_wv0_st3_wg_hb_xb_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_ks1_dw0_atomic
XH64=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_xb_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic
# _xb with fp8 h: the A8W4 default's 64-token stage two
XB64=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_xb_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
P[1]="default $HB1 $XH1"
P[8]="default $HB8 $XH8"
P[64]="default $HB8 $XH64w"
P[512]="default $HB16 $XH16"
P[4096]="default $HB64 $XH64 $XB64"
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 240 $b/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache_s22 "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a8w4_fp8_//g'
}
for part in "$@"; do
  echo "== $part"
  case $part in
    gates)
      gate gates_a8w4_wgmma moetune_test_exec "gates: A8W4 on the DSv4.1-Flash backbone" -c "the wgmma main loop on both stages, 8-, 32-, 64- and 128-token blocks"
      # (Catch2 reads a comma in a test name as "or": escaped.)
      gate gates_scales_wgmma moetune_test_exec "gates: MXFP4 scales outside the fast decode range\, the wgmma main loop"
      gate runtime_reference moetune_test_runtime "forward matches the CPU reference on every data path" ;;
    r1|r2)
      for M in 1 8 64 512 4096; do
        cfgs=(${P[$M]})
        if [[ $part == r2 ]]; then rev=(); for ((i=${#cfgs[@]}-1; i>=0; i--)); do rev+=(${cfgs[i]}); done; cfgs=("${rev[@]}"); fi
        bench a8w4_M${M}_$part --shape 5120,640,384,6 --dtype a8w4 --m $M --config "${cfgs[@]}"
      done
      bench a16w4_$part --shape 5120,640,384,6 --dtype a16w4 --m 1 8 64 512 4096 --config default ;;
    # After the verifier's NaN fill was found racing the sort launch's upcast at M = 4096 (the
    # fill ran on the legacy stream, the MoE on a non-blocking one; fixed in DeviceBuffer):
    # M = 4096 again in r1's reversed order, then M = 512 and A16W4 at both.
    big)
      bench a8w4_M4096_big --shape 5120,640,384,6 --dtype a8w4 --m 4096 --config $XB64 $XH64 $HB64 default
      bench a8w4_M512_big --shape 5120,640,384,6 --dtype a8w4 --m 512 --config $XH16 default
      bench a16w4_big --shape 5120,640,384,6 --dtype a16w4 --m 512 4096 --config default ;;
    scales)
      gate gates_scales_wgmma moetune_test_exec "gates: MXFP4 scales outside the fast decode range\, the wgmma main loop" ;;
    wgmma)
      gate gates_a8w4_wgmma moetune_test_exec "gates: A8W4 on the DSv4.1-Flash backbone" -c "the wgmma main loop on both stages, 8-, 32-, 64- and 128-token blocks" ;;
  esac
done
# Everything in one archive (the device returns a limited number of files).
(cd $out && tar czf logs_$(date +%H%M%S).tgz $(ls *.log *.md *.json *.txt 2>/dev/null) && rm -f *.log *.md *.json)
