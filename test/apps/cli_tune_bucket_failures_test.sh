#!/usr/bin/env bash
# Buckets that cannot be tuned through no candidate's fault, through the real binary on
# replay models (replay_model_small.json plus one fault, added here so the rest stays equal):
#   1. the token-128 bucket's baseline fails verification: its candidates end baseline_failed
#      (not wrong_result), summary.md names the bucket, the token-16 row is still written, and
#      `tune` exits 4;
#   2. the token-16 bucket's set-up fails (the model's setup_failure): it ends setup_failed,
#      is reported but not journaled, token 128 is decided, exit 5; then `--resume` with the
#      fault gone decides token 16 (its row written) without measuring token 128 again.
# Usage: cli_tune_bucket_failures_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/cli_harness.sh"
command -v jq >/dev/null || { echo "FAIL: jq is required by this test"; exit 1; }

small=$source_dir/test/apps/replay_model_small.json
list=$source_dir/test/apps/replay_untuned_small.csv
space=$source_dir/search_spaces/ci.json
cd "$work" || exit 1
common=(--space "$space" -i "$list" --cache-dir "$work/cache" -j 2)

# The model with one more field: inserted right after its opening brace.
with_field() { sed "1a\\  $1," "$small"; }

# The token-128 baseline's pipeline name, from the plan the binary prints.
"$moe_tune" tune --replay "$small" -o "$work/plain.csv" "${common[@]}" >"$work/plain.txt" 2>&1 ||
  fail "the fault-free replay exited $?"
baseline=$(sed -nE 's/^  line [0-9]+: token 128 .* baseline ([^ ]+) \+ ([^ ]+)$/\1+\2/p' "$work/plain.txt")
[[ -n $baseline ]] || { fail "no token-128 baseline in the plan output"; exit 1; }
grep -q '^code twins: not looked for in a replay' "$work/plain.txt" &&
  ok "a replay says it does not look for code twins" || fail "no code-twin line for a replay"

# 1. The baseline fails verification.
with_field "\"verification\": {\"$baseline\": {\"passed\": false, \"failure\": \"wrong_result\", \"detail\": \"y differs at row 3 (injected)\"}}" \
  >"$work/baseline_fails.json"
"$moe_tune" tune --replay "$work/baseline_fails.json" -o "$work/b.csv" "${common[@]}" >"$work/b.txt" 2>&1
rc=$?
[[ $rc -eq 4 ]] && ok "baseline failure -> exit 4" || { fail "baseline failure exited $rc, want 4"; tail -5 "$work/b.txt"; }
report=$work/b_replay_report/report.json
bucket128=$(jq '.buckets[] | select(.token == 128)' "$report")
if [[ $(jq -r .status <<<"$bucket128") == baseline_failed &&
      $(jq -r .baseline_failure.kind <<<"$bucket128") == wrong_result ]]; then
  ok "report: token 128 status baseline_failed (wrong_result)"
else
  fail "report: token 128 is $(jq -c '{status, baseline_failure}' <<<"$bucket128")"
fi
# Every candidate that was not pruned and is not the baseline itself: baseline_failed, and its
# reason names the baseline's failure; none inherits wrong_result.
open=$(jq '[.candidates[] | select(.outcome != "pruned" and .pipeline != null)] | length' <<<"$bucket128")
named=$(jq --arg b "$baseline" '[.candidates[] | select(.outcome == "baseline_failed" and
  (.reason | contains("the baseline " + $b + " failed (wrong_result): verification: y differs")))] | length' <<<"$bucket128")
wrong=$(jq '[.candidates[] | select(.outcome == "wrong_result")] | length' <<<"$bucket128")
if [[ $open -gt 0 && $named -eq $open && $wrong -eq 0 ]]; then
  ok "$named candidate(s) baseline_failed with the baseline's failure as reason"
else
  fail "$open open candidates, $named baseline_failed naming the baseline, $wrong wrong_result"
fi
summary=$work/b_replay_report/summary.md
grep -q '^- \*\*baseline failed\*\* in bucket token=128 (line 3): wrong_result: verification: y differs' "$summary" &&
  ok "summary.md names the token-128 bucket" || { fail "summary.md has no baseline-failed line"; cat "$summary"; }
grep -qE '^\| 128 \|.*\| baseline failed: wrong_result' "$summary" || fail "the table line of token 128 does not say baseline failed"
grep -q ',16,1024,256,32,4,' "$work/b.csv" 2>/dev/null && ok "the token-16 row is still written" ||
  fail "the token-16 row is missing after the token-128 baseline failed"
grep -q '^1 bucket(s) not tuned because their baseline failed' "$work/b.txt" || fail "no closing line on the baseline failure"

# 2. The token-16 bucket's set-up fails; then --resume without the fault.
# The model file keeps its path (the run's device is "replay of PATH"); the fault is removed
# from it before --resume, as one fixes a machine and resumes.
model=$work/model.json
with_field '"setup_failure": {"16": "cannot allocate the weights (injected)"}' >"$model"
"$moe_tune" tune --replay "$model" -o "$work/s.csv" --report "$work/s_report" \
  "${common[@]}" >"$work/s.txt" 2>&1
rc=$?
[[ $rc -eq 5 ]] && ok "set-up failure -> exit 5" || { fail "set-up failure exited $rc, want 5"; tail -5 "$work/s.txt"; }
report=$work/s_report/report.json
if [[ $(jq -r '.buckets[] | select(.token == 16) | .status' "$report") == setup_failed &&
      $(jq -r '.buckets[] | select(.token == 16) | .setup_failure' "$report") == *"bucket token=16 (line 2): cannot allocate the weights (injected)"* &&
      $(jq -r '.buckets[] | select(.token == 128) | .status' "$report") == not_qualified ]]; then
  ok "report: token 16 setup_failed with the error, token 128 decided"
else
  fail "report: $(jq -c '[.buckets[] | {token, status, setup_failure}]' "$report")"
fi
bad=$(jq '[.buckets[] | select(.token == 16) | .candidates[] | select(.outcome != "setup_failed" and .outcome != "pruned" and .pipeline != null)] | length' "$report")
[[ $bad -eq 0 ]] || fail "$bad token-16 candidate(s) not setup_failed"
journal=$work/s_report/journal.jsonl
decided=$(($(wc -l <"$journal") - 1))
if [[ $decided -eq 1 && $(tail -n +2 "$journal" | jq -r .line) == 3 ]]; then
  ok "journal holds token 128 only (token 16 not decided)"
else
  fail "journal holds $decided decided bucket(s), want only line 3 (token 128)"
fi
grep -q '^- \*\*set-up failed\*\* in bucket token=16 (line 2)' "$work/s_report/summary.md" &&
  ok "summary.md names the token-16 bucket" || fail "summary.md has no set-up-failed line"
[[ ! -s $work/s.csv ]] || ! grep -q ',16,1024,256,32,4,' "$work/s.csv" || fail "a row for the failed token-16 bucket"

cp "$small" "$model"
"$moe_tune" tune --replay "$model" -o "$work/s.csv" --report "$work/s_report" --resume \
  "${common[@]}" >"$work/r.txt" 2>&1
rc=$?
[[ $rc -eq 0 ]] && ok "--resume without the fault -> 0" || { fail "--resume exited $rc"; tail -8 "$work/r.txt"; }
grep -q 'holds 1 decided bucket' "$work/r.txt" || fail "--resume did not take token 128 from the journal"
grep -q ',16,1024,256,32,4,' "$work/s.csv" 2>/dev/null && ok "--resume decided token 16 and wrote its row" ||
  fail "no token-16 row after --resume"
[[ $(jq -r '.buckets[] | select(.token == 16) | .status' "$work/s_report/report.json") == qualified ]] ||
  fail "token 16 is not qualified after --resume"
[[ $(($(wc -l <"$journal") - 1)) -eq 2 ]] || fail "the journal does not hold both buckets after --resume"

# The exit codes are documented where users look.
help=$("$moe_tune" tune --help 2>&1)
grep -q '4 a bucket.s baseline' <<<"$help" && grep -q '5 a bucket' <<<"$help" &&
  ok "tune --help documents exit codes 4 and 5" || fail "tune --help lacks exit codes 4/5"

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI bucket-failure checks passed"
