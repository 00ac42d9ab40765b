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
# AITER's whole fMoE config tree (63 tables: fMoE, model overlays, grouped-MoE): AITER's own
# CSV test accepts every one, and so must validate, all files in one call (keys across files).
mapfile -t tree < <(find "$shared_dir"/aiter-data/aiter-configs -name '*.csv' | sort)
if [[ ${#tree[@]} -ne 63 ]]; then echo "FAIL: expected 63 tables in the tree, found ${#tree[@]}"; failures=$((failures + 1)); fi
expect 0 "^validate: 63 files, 0 errors" -- "${tree[@]}"

header=token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1
good=8,5120,640,384,6,ActivationType.Silu,torch.bfloat16,torch.bfloat16,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0

# What AITER's CSV test rejects is rejected, located: a conflict marker anywhere in the text,
mkdir -p "$work/main"
printf '%s
%s
' "$header" "${good/,1,0/,1,0>>>>>>>}" >"$work/marker.csv"
expect 2 "marker.csv:2:[0-9]+: error: git merge conflict marker '>>>>>>>'" -- "$work/marker.csv"
# us <= 0 in the main tuned table (only a warning in a model table),
theader=cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage,tflops,bw,_tag
trow=256,8,5120,640,384,6,ActivationType.Silu,torch.bfloat16,torch.bfloat16,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,32,0,1.0,k1,0.0,1.0,k2,0,0.0,0,1.0,1.0,
printf '%s\n%s\n' "$theader" "$trow" >"$work/main/tuned_fmoe.csv"
expect 1 "tuned_fmoe.csv:2:[0-9]+: error: column 'us': expected a positive total time in the main tuned table" -- "$work/main/tuned_fmoe.csv"
cp "$work/main/tuned_fmoe.csv" "$work/model_tuned_fmoe.csv"
expect 0 "model_tuned_fmoe.csv:2:[0-9]+: warning: us is '0.0'" -- "$work/model_tuned_fmoe.csv"
# and a duplicate under AITER's key, the legacy row's gfx filled from cu_num (256 -> gfx950).
printf 'gfx,%s\n%s\n' "$theader" "gfx950,${trow/,0.0,0,1.0,1.0,/,2.0,0,1.0,1.0,}" >"$work/modern.csv"
cp "$work/model_tuned_fmoe.csv" "$work/legacy.csv"
expect 1 "legacy.csv:2:1: error: duplicate key: .*modern.csv:2 and .*legacy.csv:2 both define gfx=gfx950 cu_num=256" -- "$work/modern.csv" "$work/legacy.csv"


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
