#!/usr/bin/env bash
# Session 18, probe 3 (#13): the A16W4 wgmma k-tile decoded one k16 step at a time into two
# 4-register A buffers (each k16 step's wgmmas a commit group of their own) instead of whole
# 64-K steps into two 16-register buffers. Offline, ptxas (C7511/C7512) serialised every wgmma
# of the default stage two and of the 8-token 8-warp stage one for want of registers; the
# k16 form is pipelined everywhere with fewer registers. Same-run A/B of the default pair:
# build/cuda/bin/moe-tune-k16 (this form) against build/cuda/bin/moe-tune (the tree before
# it), backbone, draft and EP at M = 1, 8, 64, 512, 4096, two rounds in swapped order; then
# with the k16 binary the 64-token pair at 3 CTAs per SM (waves 3) at M = 4096.
# Logs into OUT (tarred). Usage: p3.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
mkdir -p $out
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
bench() {  # binary name args...
  local bin=$1 n=$2; shift 2; local s=$SECONDS
  timeout 150 build/cuda/bin/$bin bench --roofline --samples 7 --cache-dir /tmp/cache_$bin "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | s1 %s s2 %s tot %s %s\n", $2, $4, $7, $8, $9, $14}'
}
for round in 1 2; do
  if [[ $round == 1 ]]; then order=(moe-tune moe-tune-k16); else order=(moe-tune-k16 moe-tune); fi
  for bin in "${order[@]}"; do
    bench $bin backbone_${bin}_$round --shape 5120,640,384,6 --m 1 8 64 512 4096 --config default
    bench $bin draft_${bin}_$round --shape 5120,640,128,3 --m 1 8 64 512 4096 --config default
    bench $bin ep_${bin}_$round --shape 5120,2304,96,6 --m 1 8 64 512 4096 --config default
  done
done
p=moetune_s1_a16w4_bf16_t64x64x128_w8_kp1_nk16_wv; q=moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv
bench moe-tune-k16 bb4096_waves --shape 5120,640,384,6 --m 4096 --config default \
  ${p}3_st3_wg_gi_dw0,${q}0_st3_wg_ks1_dw0_atomic ${p}3_st3_wg_gi_dw0,${q}3_st3_wg_ks1_dw0_atomic
cd $out && tar czf logs.tgz *.log *.json *.md 2>/dev/null; rm -f *.log *.json *.md
