#!/usr/bin/env bash
# End-to-end check of `moe-tune tune --replay` through the real binary, without a GPU: plan,
# compile (search_spaces/ci.json, so it stays quick), the whole qualification protocol on
# replayed samples, and emission. The model (replay_model_small.json) makes the token-16
# bucket of replay_untuned_small.csv qualify and the token-128 bucket not, so "only qualified
# rows" is a real check. Usage: cli_tune_replay_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/cli_harness.sh"

model=$source_dir/test/apps/replay_model_small.json
list=$source_dir/test/apps/replay_untuned_small.csv
space=$source_dir/search_spaces/ci.json
buckets=$(($(wc -l <"$list") - 1))  # data rows of the untuned list: one bucket each

# Run from $work so that a default written under results/ (which a replay must never do)
# would be seen below.
cd "$work" || exit 1
"$moe_tune" tune --replay "$model" -o "$work/t.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 >"$work/out.txt" 2>&1
rc=$?
if [[ $rc -ne 0 ]]; then
  fail "tune --replay exited $rc"; tail -20 "$work/out.txt"
else
  ok "tune --replay -> 0"
fi

report_dir=$work/t_replay_report
report=$report_dir/report.json
[[ -e $work/results ]] && fail "a replayed run wrote under results/"
[[ -f $report ]] || fail "no $report (the default report dir is <-o stem>_replay_report/)"

# The tuned CSV: present, valid, and exactly the qualified buckets' rows.
if [[ -f $work/t.csv ]]; then
  if "$moe_tune" validate "$work/t.csv" >"$work/validate.txt" 2>&1; then
    ok "validate accepts t.csv"
  else
    fail "validate rejects t.csv"; cat "$work/validate.txt"
  fi
  rows=$(($(wc -l <"$work/t.csv") - 1))
  qualified=$(grep -c '^      "qualified": true' "$report")
  if [[ $rows -eq $qualified && $qualified -ge 1 && $qualified -lt $buckets ]]; then
    ok "$rows row(s) written = $qualified qualified bucket(s) of $buckets"
  else
    fail "$rows rows written, $qualified of $buckets buckets qualified (want rows = qualified, 1 <= qualified < buckets)"
  fi
  grep -q ',16,1024,256,32,4,' "$work/t.csv" || fail "the token-16 bucket's row is missing"
  grep -q ',128,1024,256,32,4,' "$work/t.csv" && fail "the token-128 bucket (not qualified) has a row"
else
  fail "no tuned CSV at $work/t.csv"
fi

# Every replayed row is tagged: `_tag` (the last column of AITER's newest header) = replay.
if [[ -f $work/t.csv ]]; then
  untagged=$(tail -n +2 "$work/t.csv" | grep -vc ',replay$')
  [[ $untagged -eq 0 ]] && ok "every replayed row carries _tag=replay" ||
    fail "$untagged replayed row(s) without _tag=replay"
fi

# The report: marked as a replay, one bucket per list row, one outcome per plan candidate.
if grep -q '"sampler": "replay"' "$report"; then ok "report says sampler replay"; else fail "report lacks \"sampler\": \"replay\""; fi
n_buckets=$(grep -c '^      "token": ' "$report")
[[ $n_buckets -eq $buckets ]] || fail "report has $n_buckets buckets, the list $buckets"
planned=$(sed -nE 's/^  line [0-9]+: token .*: ([0-9]+) candidates .*/\1/p' "$work/out.txt" |
  awk '{ n += $1 } END { print n + 0 }')
# Keys of a candidate are written sorted: "config" is followed by its "outcome".
outcomes=$(awk '/^          "config": / { getline; if ($0 ~ /"outcome": "(pruned|compile_error|launch_error|timeout|wrong_result|slower|not_significant|control_failed|qualified)"/) n++ } END { print n + 0 }' "$report")
configs=$(grep -c '^          "config": ' "$report")
if [[ -n $planned && $planned -gt 0 && $outcomes -eq $planned && $configs -eq $planned ]]; then
  ok "$outcomes outcomes for $planned planned candidates"
else
  fail "planned ${planned:-?} candidates, report has $configs candidates and $outcomes valid outcomes"
fi

# The summary: one table row per bucket, and it says it is not a measurement.
summary=$report_dir/summary.md
lines=$(grep -cE '^\| [0-9]+ \|' "$summary" 2>/dev/null)
[[ ${lines:-0} -eq $buckets ]] || fail "summary.md has ${lines:-0} bucket lines, want $buckets"
grep -q 'replayed samples (not a measurement)' "$summary" || fail "summary.md does not say it is replayed"
# ... and where the time went: the compile step, then one line per bucket and a total.
grep -q '^Compile (once, before any bucket): ' "$summary" || fail "summary.md has no compile line"
split=$(grep -cE '^\| token [0-9]+ \(line [0-9]+\) \|( [0-9.]+ \|){7}$' "$summary" 2>/dev/null)
[[ ${split:-0} -eq $buckets ]] || fail "summary.md's time split has ${split:-0} bucket lines, want $buckets"
grep -q '"compile": {' "$report" && grep -q '"seconds": {' "$report" ||
  fail "report.json lacks the compile step or a bucket's seconds"

# Manifests: one file per bucket that reached confirmation, among them the qualified one.
declared=$(grep -c '^      "manifest": {' "$report")
files=$(find "$report_dir" -name 'manifest_line*.json' | wc -l)
if [[ $declared -ge 1 && $files -eq $declared && -f $report_dir/manifest_line2.json ]]; then
  ok "$files manifest file(s)"
else
  fail "$files manifest files for $declared declared manifests (manifest_line2.json expected)"
fi

# Without -o a replay is refused, before anything is written.
mkdir "$work/no_o" && cd "$work/no_o" || exit 1
out=$("$moe_tune" tune --replay "$model" --space "$space" -i "$list" --cache-dir "$work/cache" 2>&1)
rc=$?
if [[ $rc -eq 0 ]]; then
  fail "tune --replay without -o exited 0"
elif ! grep -q -- '-o' <<<"$out"; then
  fail "tune --replay without -o: the message does not ask for -o"; echo "$out" | head -5
elif [[ -n $(ls -A "$work/no_o") ]]; then
  fail "tune --replay without -o wrote files"
else
  ok "tune --replay without -o refused -> $rc"
fi

# A replay never writes under results/ (the repository's, or ./results): -o, --report and
# --journal are resolved first (.., symlinks) and refused before anything is written.
cd "$work" || exit 1
guard=replay_guard_$$
ln -s "$source_dir/results" "$work/results_link"
mkdir -p "$work/x"
refused_replay() {  # DESCRIPTION PATHS-THAT-MUST-NOT-EXIST -- TUNE-ARGS...
  local what=$1; shift
  local -a must_not_exist=()
  while [[ $1 != -- ]]; do must_not_exist+=("$1"); shift; done; shift
  local out rc leaked=0
  out=$("$moe_tune" tune --replay "$model" --space "$space" -i "$list" --cache-dir "$work/cache" \
    -j 2 "$@" 2>&1)
  rc=$?
  for p in "${must_not_exist[@]}"; do
    if [[ -e $p ]]; then leaked=1; rm -rf -- "$p"; fi  # never leave a test file in the repo
  done
  if [[ $rc -ne 0 && $leaked -eq 0 ]] && grep -q 'a replayed run never writes under .*results' <<<"$out"; then
    ok "$what refused -> $rc, nothing written"
  else
    fail "$what: exit $rc, wrote files: $leaked"; echo "$out" | tail -3
  fi
}
refused_replay "-o into <repo>/results via .." "$source_dir/results/$guard.csv" \
  "$source_dir/results/${guard}_replay_report" -- -o "$source_dir/shapes/../results/$guard.csv"
refused_replay "-o through a symlink to <repo>/results" "$source_dir/results/$guard.csv" \
  "$source_dir/results/${guard}_replay_report" -- -o "$work/x/../results_link/$guard.csv"
refused_replay "--report inside <repo>/results" "$work/g.csv" "$source_dir/results/$guard" -- \
  -o "$work/g.csv" --report "$source_dir/results/../results/$guard"
refused_replay "--journal inside <repo>/results" "$work/g.csv" "$work/g_replay_report" \
  "$source_dir/results/$guard.jsonl" -- -o "$work/g.csv" --journal "$work/results_link/$guard.jsonl"
refused_replay "-o ./x/../results/ (the measurement default)" "$work/results" -- \
  -o ./x/../results/t.csv

# A re-tune in which the token-16 bucket no longer qualifies (its 3 % faster pipeline gone from
# the model) withdraws that bucket's old row and says so; the other lines stay byte for byte.
sed '/: 97.0,$/d' "$model" >"$work/model_noq.json"
cmp -s "$model" "$work/model_noq.json" && fail "could not derive the non-qualifying model"
row16=$(grep ',16,1024,256,32,4,' "$work/t.csv")
other=${row16/sm_90,132,/sm_90,114,}  # the same bucket on another machine: an unrelated key
{ head -1 "$work/t.csv"; echo "$other"; echo "$row16"; printf '%s' "$other" | sed 's/,16,1024,/,32,1024,/'; } >"$work/w.csv"
expected=$(grep -vxF -- "$row16" "$work/w.csv")
"$moe_tune" tune --replay "$work/model_noq.json" -o "$work/w.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 >"$work/out_w.txt" 2>&1 || fail "re-tune exited $?"
if [[ "$(cat "$work/w.csv")" == "$expected" ]] && [[ $(tail -c 1 "$work/w.csv" | od -An -c) != *'\n'* ]]; then
  ok "re-tune withdrew the token-16 row; the other lines byte for byte (no final newline added)"
else
  fail "re-tune: w.csv is not the old table less the token-16 row"; diff <(echo "$expected") "$work/w.csv"
fi
grep -qF "withdrawn: $work/w.csv:3: $row16 (" "$work/out_w.txt" || fail "the withdrawal was not printed"
grep -qF "\"row\": \"$row16\"" "$work/w_replay_report/report.json" ||
  fail "report.json has no withdrawn_rows entry with the removed line"
grep -q '"withdrawn_rows": \[' "$work/w_replay_report/report.json" || fail "report.json lacks withdrawn_rows"
grep -qF "## Withdrawn rows" "$work/w_replay_report/summary.md" &&
  grep -qF "\`$row16\`" "$work/w_replay_report/summary.md" || fail "summary.md does not list the withdrawn row"
# When the last row goes, the header stays.
{ head -1 "$work/t.csv"; echo "$row16"; } >"$work/w1.csv"
"$moe_tune" tune --replay "$work/model_noq.json" -o "$work/w1.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 >/dev/null 2>&1 || fail "re-tune of a one-row table exited $?"
if [[ "$(cat "$work/w1.csv")" == "$(head -1 "$work/t.csv")" ]]; then
  ok "every row withdrawn: the header stays"
else
  fail "every row withdrawn: the table is not its header"; cat "$work/w1.csv"
fi
# A table of an older layout (no _tag column) cannot hold replayed rows: refused up front.
printf '%s\n' "$(head -1 "$work/t.csv" | sed 's/,_tag$//')" >"$work/old.csv"
out=$("$moe_tune" tune --replay "$model" -o "$work/old.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 2>&1)
rc=$?
if [[ $rc -ne 0 ]] && grep -qF "$work/old.csv:1: the table has no '_tag' column" <<<"$out" &&
   [[ ! -e $work/old_replay_report ]]; then
  ok "a table without _tag refused before the run -> $rc"
else
  fail "a table without _tag: exit $rc"; echo "$out" | tail -3
fi

# --calibration: calibrate's measured null-case rate is stated in the summary and the report;
# a file measured for another design is refused before anything is timed.
cd "$work" || exit 1
# (calibrate exits 1 here: 20 null trials and no power case cannot meet its own targets; the
# JSON it writes is what --calibration reads.)
# Calibrated on the token-16 bucket's own workload (shape, M and default baseline).
"$moe_tune" calibrate --replay "$model" --shape 1024,256,32,4 --m 16 --trials 20 --power-trials 0 \
  --json "$work/cal.json" >/dev/null 2>&1
[[ -f $work/cal.json ]] || fail "calibrate --replay wrote no calibration file"
"$moe_tune" tune --replay "$model" -o "$work/c.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 --calibration "$work/cal.json" >"$work/out_cal.txt" 2>&1 ||
  fail "tune --calibration exited non-zero"
if grep -q "Calibrated false-qualification rate of this design: 0.0% (0/20 null trials qualified" \
     "$work/c_replay_report/summary.md" &&
   grep -q '"calibration": "0/20 null trials qualified' "$work/c_replay_report/report.json"; then
  ok "tune --calibration: the summary and the report state the measured rate"
else
  fail "tune --calibration: no calibrated rate in the summary/report"; grep -i calibrat "$work/c_replay_report/summary.md"
fi
# The rate is stated in the calibrated bucket's manifest only; the other bucket says why not.
manifests=$(grep -l '"false_qualification_rate": 0.0' "$work"/c_replay_report/manifest_line*.json 2>/dev/null | wc -l)
if [[ $manifests -eq 1 ]] && grep -q 'M=16' "$work/c_replay_report/manifest_line2.json"; then
  ok "tune --calibration: the rate is stated for the calibrated bucket only"
else
  fail "tune --calibration: $manifests manifest(s) state the rate"
fi
# A calibration of another M is no bucket of the run: refused before anything is timed.
"$moe_tune" calibrate --replay "$model" --shape 1024,256,32,4 --m 3 --trials 5 --power-trials 0 \
  --json "$work/cal_m3.json" >/dev/null 2>&1
out=$("$moe_tune" tune --replay "$model" -o "$work/e.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 --calibration "$work/cal_m3.json" 2>&1)
rc=$?
if [[ $rc -ne 0 ]] && grep -q "no bucket of this run" <<<"$out" && [[ ! -e $work/e.csv ]]; then
  ok "tune --calibration of another M refused -> $rc"
else
  fail "tune --calibration of another M: rc $rc"; echo "$out" | tail -3
fi
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['protocol']['pairs_per_block']=10; json.dump(d,open(sys.argv[2],'w'))" \
  "$work/cal.json" "$work/cal_other.json" 2>/dev/null ||
  sed 's/"pairs_per_block": *6/"pairs_per_block": 10/' "$work/cal.json" >"$work/cal_other.json"
out=$("$moe_tune" tune --replay "$model" -o "$work/d.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 --calibration "$work/cal_other.json" 2>&1)
rc=$?
if [[ $rc -ne 0 ]] && grep -q "pairs_per_block: calibrated 10, this run 6" <<<"$out" && [[ ! -e $work/d.csv ]]; then
  ok "tune --calibration of another design refused -> $rc"
else
  fail "tune --calibration of another design: rc $rc"; echo "$out" | tail -3
fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI tune --replay checks passed"
