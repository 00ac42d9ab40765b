#!/usr/bin/env bash
# Session 21's prepared GPU pass (#13), not yet run: session 21 had no GPU. An A8W4 pair that
# keeps h in bf16 (`_hb`: stage one quantises h per 1x32 as before and writes code x 2^scale
# as bf16; stage two is then the A16W4 stage two, without A8W4's per-32-K scratch sums).
# 1. The [gpu] gates that carry `_hb` pairs: the A8W4 backbone's wgmma section (every block
#    size, the 64-K and the k16 stage two), the out-of-range-scale wgmma gate (the A16W4
#    exact decode on A8W4's w2), the runtime's tuned row (bucket 16 is an `_hb` pair on sm_90).
# 2. Whole MoE, A8W4 backbone, per M: the A8W4 default against the same stage one with `_hb`
#    and the A16W4 default's stage two (as the `_hb` stage two: the same kernel), and the
#    A16W4 default for the A8W4 / A16W4 ratio; two rounds, the order reversed in the second.
# Usage: p1.sh OUT   (carry build/cuda/{bin,lib}); logs into OUT (tarred).
set -uo pipefail
out=${1:?out}
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
wg="the wgmma main loop on both stages, 8-, 32-, 64- and 128-token blocks"
gate() {  # log binary args...
  local log=$1 bin=$2; shift 2; local s=$SECONDS
  timeout 300 $b/bin/$bin "$@" > $out/$log.log 2>&1
  echo "$log: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED" $out/$log.log | head -5
}
gate gates_a8w4_wgmma moetune_test_exec "gates: A8W4 on the DSv4.1-Flash backbone" -c "$wg"
gate gates_scales_wgmma moetune_test_exec "gates: MXFP4 scales outside the fast decode range, the wgmma main loop"
gate runtime_reference moetune_test_runtime "forward matches the CPU reference on every data path"
s1=moetune_s1_a8w4_fp8_; s2=moetune_s2_a8w4_fp8_
declare -A HB
HB[1]=${s1}t8x32x128_w4_kp1_nk16_wv0_st4_wg_hb_ks4_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_hb_ks1_dw0_atomic
HB[8]=${s1}t8x32x128_w4_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
HB[64]=${HB[8]}
HB[512]=${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_ks1_dw0_atomic
HB[4096]=${s1}t64x64x128_w8_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 240 $b/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache_s21 "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | %s | s1 %s s2 %s tot %s %s\n", $2, $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a8w4_fp8_//g'
}
for round in 1 2; do
  for M in 1 8 64 512 4096; do
    if ((round == 1)); then cfgs=(default ${HB[$M]}); else cfgs=(${HB[$M]} default); fi
    bench a8w4_M${M}_r$round --shape 5120,640,384,6 --dtype a8w4 --m $M --config "${cfgs[@]}"
  done
  bench a16w4_r$round --shape 5120,640,384,6 --dtype a16w4 --m 1 8 64 512 4096 --config default
done
tar czf $out/logs.tgz -C $out $(cd $out && ls *.log *.md *.json *.txt 2>/dev/null) && rm -f $out/*.log $out/*.md $out/*.json
