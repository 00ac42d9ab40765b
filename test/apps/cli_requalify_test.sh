#!/usr/bin/env bash
# `moe-tune requalify` through the real binary, without a GPU: a row tuned by a replayed run is
# re-checked through the same protocol under replay models that say what a new toolchain
# could: nothing changed (still_qualifies, exit 0), the gain is gone (no_longer_qualifies),
# the kernel no longer compiles (does_not_compile), it computes wrong (wrong_result); a row of
# another backend's kernels is skipped. Usage: cli_requalify_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/cli_harness.sh"

model=$source_dir/test/apps/replay_model_small.json
list=$source_dir/test/apps/replay_untuned_small.csv
space=$source_dir/search_spaces/ci.json
cd "$work" || exit 1

"$moe_tune" tune --replay "$model" -o "$work/t.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 >"$work/tune.txt" 2>&1 || { fail "tune exited $?"; tail "$work/tune.txt"; }
[[ $(($(wc -l <"$work/t.csv") - 1)) -eq 1 ]] || fail "the replayed tune should write one row"
row=$(sed -n 2p "$work/t.csv")
pair="$(cut -d, -f18 <<<"$row")+$(cut -d, -f21 <<<"$row")"
# The table to requalify: that row, plus a row of CK kernels (another backend) at token 32.
{
  cat "$work/t.csv"
  awk -F, -v OFS=, '{ $3 = 32; $18 = "moe_ck2stages_gemm1_256x32x64x128_1x4_MulABScaleShuffled_v3"; print }' <<<"$row"
} >"$work/table.csv"
"$moe_tune" validate "$work/table.csv" >/dev/null 2>&1 || fail "the test table does not validate"

# run NAME MODEL: requalify the table; leaves rc and the report in $work/NAME/.
run() {
  "$moe_tune" requalify "$work/table.csv" --replay "$2" --report "$work/$1" \
    --cache-dir "$work/cache" -j 2 >"$work/$1.txt" 2>&1
  rc=$?
}
verdict_of_line2() { sed -nE 's/^\| 2 \| 16 \| 16 \| [^|]+ \| ([a-z_]+) \|.*/\1/p' "$work/$1/requalify.md"; }

run same "$model"
if [[ $rc -eq 0 && $(verdict_of_line2 same) == still_qualifies ]]; then
  ok "unchanged model: still_qualifies, exit 0"
else
  fail "unchanged model: exit $rc, verdict '$(verdict_of_line2 same)'"; tail -20 "$work/same.txt"
fi
grep -q '| 3 | 32 | — | .* | skipped | not a moe-tune kernel, skipped' "$work/same/requalify.md" ||
  fail "the CK row is not reported as 'not a moe-tune kernel, skipped'"
grep -q '"verdict": "still_qualifies"' "$work/same/requalify.json" || fail "requalify.json lacks the verdict"
grep -q '"sampler": "replay"' "$work/same/requalify.json" || fail "requalify.json does not say replay"
[[ -f $work/same/manifest_line2.json ]] || fail "no manifest declared for the re-checked row"
cmp -s "$work/t.csv" <(head -2 "$work/table.csv") || fail "requalify modified the table"

# The gain is gone: the row's pair now runs like the default.
sed 's/: 97.0/: 100.0/' "$model" >"$work/gone.json"
run gone "$work/gone.json"
v=$(verdict_of_line2 gone)
if [[ $rc -ne 0 && $v == no_longer_qualifies ]] && grep -q 'line 2: no_longer_qualifies: .*µs' "$work/gone.txt"; then
  ok "gain gone: no_longer_qualifies with figures, exit $rc"
else
  fail "gain gone: exit $rc, verdict '$v'"; tail -20 "$work/gone.txt"
fi

# What a compiler upgrade can do: the kernel no longer builds, or builds into wrong code.
printf '{"seed": 7, "preparation": {"%s": {"status": "compile_error", "detail": "error: ptxas: too many resources"}}}\n' "$pair" >"$work/broken.json"
run broken "$work/broken.json"
v=$(verdict_of_line2 broken)
[[ $rc -ne 0 && $v == does_not_compile ]] && grep -q 'too many resources' "$work/broken/requalify.md" &&
  ok "broken kernel: does_not_compile with the compiler's message" ||
  { fail "broken kernel: exit $rc, verdict '$v'"; tail -20 "$work/broken.txt"; }
printf '{"seed": 7, "verification": {"%s": {"passed": false, "detail": "y mismatch", "max_abs": 0.5}}}\n' "$pair" >"$work/wrong.json"
run wrong "$work/wrong.json"
v=$(verdict_of_line2 wrong)
[[ $rc -ne 0 && $v == wrong_result ]] && ok "wrong code: wrong_result" ||
  { fail "wrong code: exit $rc, verdict '$v'"; tail -20 "$work/wrong.txt"; }

# Not a tuned table: refused.
out=$("$moe_tune" requalify "$list" --replay "$model" --report "$work/untuned" 2>&1)
rc=$?
[[ $rc -ne 0 ]] && grep -q 'not a tuned one' <<<"$out" && ok "an untuned list is refused" ||
  { fail "untuned list: exit $rc"; echo "$out" | tail -3; }

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI requalify checks passed"
