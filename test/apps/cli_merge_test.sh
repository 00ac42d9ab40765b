#!/usr/bin/env bash
# End-to-end checks of `moe-tune merge` through the real binary: exact bytes of the merged
# table, exit codes, the collision message, --dry-run and a failed write.
# Usage: cli_merge_test.sh MOE_TUNE
set -u
moe_tune=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

header=gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage,xbf16,flat,tflops,bw,_tag
row() {  # row TOKEN US1 US
  echo "gfx950,256,$1,7168,512,384,6,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fn,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,32,0,$2,k1,0.0%,8.8572,k2,0.0%,$3,0,0,0,6.31,202009.64,"
}
# Untouched rows use a spelling the writer would not produce (12.07190): they must survive.
reset() {
  mkdir -p "$work/configs"
  printf '%s\n%s\n%s\n%s\n' "$header" "$(row 1 12.07190 20.9291)" "$(row 2 12.0719 20.9291)" \
    "$(row 8 12.07190 20.9291)" >"$work/configs/table.csv"
  printf '%s\n%s\n' "$header" "$(row 64 1.0 9.8572)" >"$work/configs/other.csv"
  printf 'M,N,K\n1,2,3\n' >"$work/configs/gemm.csv"
  printf '%s\n%s\n%s\n' "$header" "$(row 16 3.0 11.8572)" "$(row 2 10.0 18.8572)" >"$work/new.csv"
  cp "$work/configs/table.csv" "$work/before.csv"
}
run() { out=$("$moe_tune" merge "$@" 2>&1); rc=$?; }

# 1. A merge: row 2 replaced on line 3, row 16 appended, every other byte identical.
reset
run --into "$work/configs/table.csv" --siblings "$work/configs" "$work/new.csv"
printf '%s\n%s\n%s\n%s\n%s\n' "$header" "$(row 1 12.07190 20.9291)" "$(row 2 10.0 18.8572)" \
  "$(row 8 12.07190 20.9291)" "$(row 16 3.0 11.8572)" >"$work/expected.csv"
if [[ $rc -ne 0 ]]; then fail "merge exited $rc: $out"
elif ! cmp -s "$work/configs/table.csv" "$work/expected.csv"; then
  fail "merged bytes differ"; diff "$work/expected.csv" "$work/configs/table.csv"
else echo "ok: merge -> 0, exact bytes"; fi

# 2. --dry-run: the diff names the lines, and nothing is written.
reset
run --into "$work/configs/table.csv" --siblings "$work/configs" "$work/new.csv" --dry-run
if [[ $rc -ne 0 ]]; then fail "dry run exited $rc: $out"
elif ! cmp -s "$work/configs/table.csv" "$work/before.csv"; then fail "dry run wrote the table"
elif ! grep -qx -- "@@ -3,1 +3,1 @@" <<<"$out" || ! grep -qx -- "-$(row 2 12.0719 20.9291)" <<<"$out" ||
     ! grep -qx -- "+$(row 2 10.0 18.8572)" <<<"$out" || ! grep -qx -- "@@ -4,0 +5,1 @@" <<<"$out"; then
  fail "dry run diff lacks the expected hunks"; echo "$out"
elif ls -A "$work/configs" | grep -q '^\.'; then fail "dry run left a temporary file"
else echo "ok: merge --dry-run -> 0, nothing written"; fi

# 3. A key another tuned table defines: exit 1, both places named, nothing written.
reset
printf '%s\n%s\n' "$header" "$(row 64 2.0 10.8572)" >"$work/new.csv"
run --into "$work/configs/table.csv" --siblings "$work/configs" "$work/new.csv"
if [[ $rc -ne 1 ]]; then fail "collision exited $rc, expected 1: $out"
elif ! grep -qF "$work/new.csv:2 and $work/configs/other.csv:2 both define" <<<"$out"; then
  fail "collision message does not name both places"; echo "$out"
elif ! cmp -s "$work/configs/table.csv" "$work/before.csv"; then fail "a refused merge wrote"
else echo "ok: collision -> 1, names new.csv:2 and other.csv:2"; fi

# 4. A validation error in NEW.csv: exit 1 with file:line:col.
reset
printf '%s\n%s\n' "$header" "$(row 16 3.0 11.8572 | sed 's/ActivationType.Silu/ActivationType.Sliu/')" >"$work/new.csv"
run --into "$work/configs/table.csv" "$work/new.csv"
if [[ $rc -ne 1 ]]; then fail "bad enum exited $rc, expected 1: $out"
elif ! grep -qE "new.csv:2:[0-9]+: error" <<<"$out"; then fail "no new.csv:2:col error"; echo "$out"
elif ! cmp -s "$work/configs/table.csv" "$work/before.csv"; then fail "a refused merge wrote"
else echo "ok: validation error -> 1"; fi

# 5. Unreadable input: exit 2.
reset
run --into "$work/configs/table.csv" "$work/missing.csv"
[[ $rc -eq 2 ]] && grep -q "missing.csv" <<<"$out" && echo "ok: missing NEW.csv -> 2" || fail "missing NEW.csv exited $rc: $out"
run --into "$work/missing-table.csv" "$work/new.csv"
[[ $rc -eq 2 ]] && echo "ok: missing TABLE -> 2" || fail "missing TABLE exited $rc: $out"
printf '%s\r\n' "$header" >"$work/crlf.csv"
run --into "$work/configs/table.csv" "$work/crlf.csv"
[[ $rc -eq 2 ]] && echo "ok: CRLF NEW.csv -> 2" || fail "CRLF NEW.csv exited $rc: $out"

# 6. A write that fails (a file-size limit of 0 makes every write fail, even for root): non-zero
#    exit, the original untouched, no temporary file left.
reset
out=$( (ulimit -f 0; trap '' XFSZ; "$moe_tune" merge --into "$work/configs/table.csv" "$work/new.csv") 2>&1)
rc=$?
if [[ $rc -eq 0 ]]; then fail "a failed write exited 0: $out"
elif ! cmp -s "$work/configs/table.csv" "$work/before.csv"; then fail "a failed write changed the table"
elif ls -A "$work/configs" | grep -q '^\.'; then fail "a failed write left a temporary file"
else echo "ok: failed write -> $rc, original untouched"; fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI merge checks passed"
