#!/usr/bin/env bash
# End-to-end check of `moe-tune calibrate` through the real binary, without a GPU: on a quiet,
# unbiased replay model the null case never qualifies and a 2 % slowdown nearly always does
# (exit 0, "targets met", a JSON with every trial); on a model whose candidate arm is biased
# by placement the false-qualification target fails (exit 1); and without a GPU or --replay it
# refuses with a message. Usage: cli_calibrate_replay_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/cli_harness.sh"

model=$source_dir/test/apps/replay_model_small.json  # every unlisted pipeline 100 us, 0.2 % noise

"$moe_tune" calibrate --replay "$model" --trials 400 --power-trials 40 --slowdowns 1,2 \
  --json "$work/cal.json" >"$work/out.txt" 2>&1
rc=$?
if [[ $rc -ne 0 ]]; then
  fail "calibrate --replay on a quiet model exited $rc"; tail -20 "$work/out.txt"
else
  ok "calibrate --replay on a quiet model -> 0"
fi
grep -q 'REPLAY' "$work/out.txt" || fail "the output does not say it is a replay"
grep -qE '^trial 400/400: null 0/400' "$work/out.txt" || fail "no final progress line with 0/400 null qualifications"
grep -qE '^null +400 +0 +0\.0% +\[0\.0%, 0\.9%\]' "$work/out.txt" || {
  fail "the table's null row is not '400 trials, 0 qualified, [0.0%, 0.9%]'"; grep -E '^(case|null)' "$work/out.txt"; }
grep -qE '^slowdown 2% +40 +(39|40) ' "$work/out.txt" || {
  fail "the 2% slowdown did not qualify in 39 or 40 of 40 trials"; grep -E '^slowdown' "$work/out.txt"; }
grep -qE '^null: wins of 36 per trial \(wins:trials\).*; mean 1[78]\.[0-9]+ \(fair null 18\)' "$work/out.txt" || {
  fail "no centred null distribution line"; grep -E '^null:' "$work/out.txt"; }
grep -q '^null distribution CENTRED' "$work/out.txt" || fail "no 'null distribution CENTRED' verdict"
grep -q '^verdict: targets met' "$work/out.txt" || fail "no 'verdict: targets met'"
if [[ -f $work/cal.json ]]; then
  trials=$(grep -c '"first_block_seeds"' "$work/cal.json")
  [[ $trials -eq 480 ]] && ok "JSON holds all 480 trials" || fail "JSON holds $trials trials, want 480"
  grep -q '"wins_histogram"' "$work/cal.json" || fail "JSON lacks the null distribution"
  grep -q '"order_design": "balanced-random-v1"' "$work/cal.json" || fail "JSON lacks the order design"
  grep -q '"targets_met": true' "$work/cal.json" || fail "JSON lacks targets_met: true"
else
  fail "no --json file"
fi

# A candidate arm 2 % faster by placement alone: the calibration must report it.
sed 's/"cu_num": 132,/"cu_num": 132, "arm_bias": {"candidate": -0.02},/' "$model" >"$work/biased.json"
"$moe_tune" calibrate --replay "$work/biased.json" --trials 100 --power-trials 10 --slowdowns 2 \
  >"$work/biased.txt" 2>&1
rc=$?
if [[ $rc -eq 1 ]] && grep -q 'false qualification NOT MET' "$work/biased.txt"; then
  ok "a biased design fails the false-qualification target -> 1"
else
  fail "biased design: exit $rc"; tail -8 "$work/biased.txt"
fi

# Without --replay on a machine without a GPU: a clear refusal, non-zero.
if ! "$moe_tune" device >/dev/null 2>&1; then
  out=$("$moe_tune" calibrate --trials 1 2>&1)
  rc=$?
  if [[ $rc -ne 0 ]] && grep -q 'calibrate needs a GPU' <<<"$out"; then
    ok "calibrate without a GPU refused -> $rc"
  else
    fail "calibrate without a GPU: exit $rc: $out"
  fi
fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI calibrate --replay checks passed"
