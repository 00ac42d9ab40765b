#!/usr/bin/env bash
# End-to-end checks of `moe-tune validate` through the real binary: exit codes and the
# file:line:col of the first finding. Usage: cli_validate_test.sh MOE_TUNE SOURCE_DIR SHARED_DIR
set -u
moe_tune=$1 source_dir=$2 shared_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

expect() {  # expect EXIT_CODE PATTERN -- ARGS...
  local want=$1 pattern=$2
  shift 3
  local out rc
  out=$("$moe_tune" validate "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL: validate $* exited $rc, expected $want"; echo "$out" | head -5; failures=$((failures + 1))
  elif [[ -n $pattern ]] && ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: validate $* printed no line matching '$pattern'"; echo "$out" | head -5
    failures=$((failures + 1))
  else
    echo "ok: validate $(basename "${@: -1}") -> $rc"
  fi
}

# Every real AITER table and every shipped shape list is accepted, alone and together.
expect 0 "" -- "$shared_dir"/aiter-data/*.csv
expect 0 "" -- "$source_dir"/shapes/*.csv

header=token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1
good=8,5120,640,384,6,ActivationType.Silu,torch.bfloat16,torch.bfloat16,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0

printf '%s\n%s\n' "$header" "${good/ActivationType.Silu/ActivationType.Sliu}" >"$work/enum.csv"
expect 1 "enum.csv:2:[0-9]+: error" -- "$work/enum.csv"

printf '%s\n%s\n%s\n' "$header" "$good" "$good" >"$work/dup.csv"
expect 1 "dup.csv:3" -- "$work/dup.csv"

printf '%s\r\n%s\r\n' "$header" "$good" >"$work/crlf.csv"
expect 2 "crlf.csv:1:[0-9]+: error" -- "$work/crlf.csv"

: >"$work/empty.csv"
expect 2 "empty.csv" -- "$work/empty.csv"

expect 2 "missing.csv" -- "$work/missing.csv"

printf '%s\n%s\n' "$header" "${good/,6,/,400,}" >"$work/topk.csv"
expect 1 "topk.csv:2:[0-9]+: error" -- "$work/topk.csv"

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI validate checks passed"
