#!/usr/bin/env bash
# `moe-tune bench --config` checks the named pairs before it looks for a GPU: a name that does
# not parse, or two stages that cannot run as one pipeline (another block_m, or another format
# of h), is an error naming the pair (exit 3) on any machine. Usage: cli_bench_pairs_test.sh MOE_TUNE
set -u
moe_tune=$1
failures=0
s1=moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st4_wg
s2=moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg
expect() {  # expect EXIT_CODE PATTERN CONFIG
  local want=$1 pattern=$2 config=$3 out rc
  out=$("$moe_tune" bench --shape 5120,640,384,6 --dtype a8w4 --m 8 --config "$config" 2>&1)
  rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: bench --config $config exited $rc (expected $want), output:"; echo "$out" | head -5
    failures=$((failures + 1))
  else
    echo "ok: $pattern -> $rc"
  fi
}
expect 3 "stage one writes h as bf16 but stage two reads fp8 codes and scales" \
  "${s1}_hb_gi_dw0,${s2}_ks1_dw0_atomic"
expect 3 "disagree on block_m \(16 and 64\)" \
  "${s1/t64x64x128/t16x64x256}_hb_gi_dw0,${s2}_k16_hb_ks1_dw0_atomic"
expect 3 "kernel name 'moetune_s1_bogus'" "moetune_s1_bogus,${s2}_ks1_dw0_atomic"
# A valid pair gets past the check: then either the GPU runs it or bench says it needs one.
if "$moe_tune" bench --shape 5120,640,384,6 --dtype a8w4 --m 8 --config "${s1}_hb_gi_dw0,${s2}_k16_hb_ks1_dw0_atomic" \
  --samples 1 --repeats 1 2>&1 | grep -qE "stage one writes h|disagree|kernel name"; then
  echo "FAIL: a valid bf16-h pair was refused"; failures=$((failures + 1))
fi
# x's format is stage one's alone: an `_xb` stage one pairs with a stage two of either h format.
for s2_name in "${s2}_k16_hb_ks1_dw0_atomic" "${s2/wv3_st3/wv0_st4}_ks1_dw0_atomic"; do
  h=$([[ $s2_name == *_hb_* ]] && echo _hb)
  if "$moe_tune" bench --shape 5120,640,384,6 --dtype a8w4 --m 8 --config "${s1}${h}_xb_gi_dw0,$s2_name" \
    --samples 1 --repeats 1 2>&1 | grep -qE "stage one writes h|disagree|kernel name"; then
    echo "FAIL: a valid pair with an _xb stage one was refused ($s2_name)"; failures=$((failures + 1))
  fi
done
exit $((failures > 0))
