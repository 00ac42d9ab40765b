#!/usr/bin/env bash
# Kill-and-resume of `moe-tune tune` through the real binary, without a GPU: a replayed run
# (replay_model_slow.json: a delay per sample, so it lasts seconds) is killed with SIGKILL as
# soon as its journal holds a decided bucket and before the run ends; `--resume` then must
# not measure the decided bucket again, must lose and duplicate nothing, and must end with the
# very rows an uninterrupted run writes. A journal of a different run (another search space,
# another seed) is refused, naming the field. Usage: cli_tune_resume_test.sh MOE_TUNE SOURCE_DIR
set -u
moe_tune=$1 source_dir=$2
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

model=$source_dir/test/apps/replay_model_slow.json
list=$source_dir/test/apps/replay_untuned_small.csv
space=$source_dir/search_spaces/ci.json
buckets=$(($(wc -l <"$list") - 1))
cd "$work" || exit 1
common=(--replay "$model" --space "$space" -i "$list" --cache-dir "$work/cache" -j 2)

# Compile once up front so the timed runs below spend their time in the protocol.
"$moe_tune" compile --space "$space" --arch sm_90 --cache-dir "$work/cache" -j 2 >/dev/null 2>&1

# 1. The reference: an uninterrupted run.
"$moe_tune" tune "${common[@]}" -o "$work/full.csv" >"$work/full.txt" 2>&1 ||
  { fail "uninterrupted run exited $?"; tail -20 "$work/full.txt"; }
[[ -f $work/full.csv ]] || fail "the uninterrupted run wrote no rows (the test needs >= 1)"

# 2. The same run, killed with SIGKILL once the journal holds a decided bucket.
journal=$work/r_replay_report/journal.jsonl
"$moe_tune" tune "${common[@]}" -o "$work/r.csv" >"$work/killed.txt" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do  # up to 120 s
  [[ -f $journal ]] && (($(wc -l <"$journal") >= 2)) && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -9 "$pid" 2>/dev/null; then
  wait "$pid" 2>/dev/null
  rc=$?
  pid=
  decided=$(($(wc -l <"$journal") - 1))
  if [[ $rc -eq 137 && $decided -ge 1 && $decided -lt $buckets && ! -e $work/r.csv ]]; then
    ok "killed mid-run (exit $rc) with $decided of $buckets buckets journaled, no CSV yet"
  else
    fail "kill did not land mid-run: exit $rc, $decided of $buckets journaled, CSV $([[ -e $work/r.csv ]] && echo present || echo absent)"
  fi
else
  pid=
  fail "the run ended before it could be killed (the test would pass vacuously)"
  tail -5 "$work/killed.txt"
fi
# A torn last line, as a kill in the middle of an append leaves it.
printf '{"key":"torn' >>"$journal"

# 3. A different run must not continue this journal: another space, another seed.
{ cat "$space"; echo; } >"$work/other_space.json"  # same rules, other bytes
out=$("$moe_tune" tune --replay "$model" --space "$work/other_space.json" -i "$list" \
  --cache-dir "$work/cache" -j 2 -o "$work/r.csv" --resume 2>&1)
rc=$?
if [[ $rc -ne 0 ]] && grep -q 'search_space_sha256: the journal has' <<<"$out"; then
  ok "another search space refused -> $rc, naming search_space_sha256"
else
  fail "another search space: exit $rc"; echo "$out" | tail -5
fi
out=$("$moe_tune" tune "${common[@]}" -o "$work/r.csv" --resume --seed 2 2>&1)
rc=$?
if [[ $rc -ne 0 ]] && grep -q "protocol.seed: the journal has '1', this run '2'" <<<"$out"; then
  ok "another seed refused -> $rc, naming protocol.seed"
else
  fail "another seed: exit $rc"; echo "$out" | tail -5
fi
[[ -e $work/r.csv ]] && fail "a refused resume wrote the CSV"

# 4. Resume.
"$moe_tune" tune "${common[@]}" -o "$work/r.csv" --resume >"$work/resumed.txt" 2>&1 ||
  { fail "resumed run exited $?"; tail -20 "$work/resumed.txt"; }
skipped=$(grep -c 'decided in the journal' "$work/resumed.txt")
measured=$(grep -c '=> ' "$work/resumed.txt")
if [[ $skipped -eq $decided && $((skipped + measured)) -eq $buckets ]]; then
  ok "resume skipped $skipped decided bucket(s) and measured $measured"
else
  fail "resume skipped $skipped and measured $measured of $buckets (journal had $decided)"
fi
grep -q 'torn last line' "$work/resumed.txt" || fail "the torn last line was not reported"
lines=$(($(wc -l <"$journal") - 1))
[[ $lines -eq $buckets ]] || fail "journal holds $lines decided lines after resuming, want $buckets"

# The rows: no key twice, the same keys as the uninterrupted run (and here the same bytes:
# the journaled row re-emits byte-identically and the rest is measured with the same seed).
keys() { cut -d, -f1-14,29 "$1" | tail -n +2 | sort; }
if [[ -f $work/r.csv && -f $work/full.csv ]]; then
  dups=$(keys "$work/r.csv" | uniq -d | wc -l)
  [[ $dups -eq 0 ]] && ok "no duplicated key" || fail "$dups duplicated key(s)"
  if [[ "$(keys "$work/r.csv")" == "$(keys "$work/full.csv")" ]]; then
    ok "resumed keys = uninterrupted keys ($(keys "$work/r.csv" | wc -l) row(s))"
  else
    fail "keys differ"; diff <(keys "$work/full.csv") <(keys "$work/r.csv")
  fi
  cmp -s "$work/r.csv" "$work/full.csv" && ok "resumed CSV byte-identical" ||
    fail "resumed CSV differs from the uninterrupted one"
else
  fail "missing CSV (resumed or uninterrupted)"
fi
report=$work/r_replay_report/report.json
n=$(grep -c '^      "token": ' "$report")
[[ $n -eq $buckets ]] || fail "report.json has $n buckets after resume, want $buckets"
grep -q "\"buckets_from_journal\": $decided" "$report" || fail "report.json does not count the journaled buckets"
[[ $(grep -cE '^\| [0-9]+ \|' "$work/r_replay_report/summary.md") -eq $buckets ]] ||
  fail "summary.md lacks bucket lines"

# 5. Rows only from qualified decisions: a complete journal, edited, then resumed into a copy
# of the uninterrupted run's table (which holds the token-16 row). Each edit must cost the row
# (withdrawn from the table) with a warning naming the journal file and line.
line16=$(grep -n '"key":"[^"]*token=16 ' "$journal" | cut -d: -f1)
row16=$(grep ',16,1024,256,32,4,' "$work/full.csv")
edited_resume() {  # NAME SED-SCRIPT WARNING-TEXT
  local name=$1 script=$2 warning=$3 dir=$work/$1
  mkdir -p "$dir"
  sed "${line16}s/$script/" "$journal" >"$dir/journal.jsonl"
  if cmp -s "$journal" "$dir/journal.jsonl"; then
    fail "$name: the edit did not change the journal (the check would be vacuous)"; return
  fi
  cp "$work/full.csv" "$dir.csv"
  "$moe_tune" tune "${common[@]}" -o "$dir.csv" --report "$dir" --resume >"$dir.txt" 2>&1 ||
    { fail "$name: resumed run exited $?"; tail -5 "$dir.txt"; return; }
  if ! grep -qF "warning: $dir/journal.jsonl:$line16: bucket " "$dir.txt" ||
     ! grep -qF -- "$warning" "$dir.txt"; then
    fail "$name: no warning naming $dir/journal.jsonl:$line16 ($warning)"; grep warning "$dir.txt"
  elif grep -qF -- "$row16" "$dir.csv"; then
    fail "$name: the token-16 row is still in the table"
  elif ! grep -qF "\"row\": \"$row16\"" "$dir/report.json"; then
    fail "$name: report.json does not list the withdrawn row"
  else
    ok "$name: no row, the old one withdrawn, warning names journal line $line16"
  fi
}
if [[ -n $line16 && -n $row16 ]]; then
  edited_resume verdict_edited '"qualified":true,"report"/"qualified":false,"report"' \
    "it carries a row but its verdict is not qualified"
  edited_resume report_not_qualified '"qualified":true,"seconds"/"qualified":false,"seconds"' \
    "its report's verdict is not qualified"
  edited_resume other_machine_row '\\nsm_90,132,16,/\\nsm_90,133,16,' \
    "is not this bucket's on this machine"
else
  fail "no token-16 line in the journal or row in full.csv"
fi

# 6. The journal identity covers the decision code: a journal written by other decision code
# is refused, naming decision_code_sha256, before anything is written.
# The digest is the documented one (docs/tuning.md): `sha256sum FILES | sha256sum` at the root.
decision_code=$(cd "$source_dir" && sha256sum autotune/search/default_config.cpp \
  $(LC_ALL=C ls autotune/stats/*.cpp) autotune/tune/bucket_tuner.cpp autotune/tune/confirmation.cpp \
  autotune/tune/confirmation_layout.cpp autotune/measure/served_tokens.cpp \
  autotune/measure/gpu_sampler.cpp autotune/tune/candidate_pairs.cpp autotune/tune/calibration.cpp autotune/exec/verifier.cpp \
  autotune/moe/compare.cpp autotune/moe/reference.cpp | sha256sum | cut -d' ' -f1)
if head -1 "$journal" | grep -q "\"decision_code_sha256\":\"$decision_code\"" &&
   grep -q "\"decision_code_sha256\": \"$decision_code\"" "$work/r_replay_report/report.json"; then
  ok "journal identity and report provenance carry the decision code's SHA-256"
else
  fail "decision_code_sha256 is not $decision_code in the journal header and report.json"
fi
mkdir -p "$work/other_code"
sed -E '1s/"decision_code_sha256":"[0-9a-f]{64}"/"decision_code_sha256":"'"$(printf '0%.0s' {1..64})"'"/' \
  "$journal" >"$work/other_code/journal.jsonl"
cmp -s "$journal" "$work/other_code/journal.jsonl" && fail "the journal header has no decision_code_sha256"
out=$("$moe_tune" tune "${common[@]}" -o "$work/other_code.csv" --report "$work/other_code" --resume 2>&1)
rc=$?
if [[ $rc -ne 0 ]] && grep -q "decision_code_sha256: the journal has '0\{64\}', this run '[0-9a-f]\{64\}'" <<<"$out" &&
   [[ ! -e $work/other_code.csv && ! -e $work/other_code/report.json ]]; then
  ok "a journal of other decision code refused -> $rc, naming decision_code_sha256"
else
  fail "a journal of other decision code: exit $rc"; echo "$out" | tail -5
fi

# 7. A fresh run (no --resume) keeps the old journal as .prev and starts a new one.
"$moe_tune" tune "${common[@]}" -o "$work/r.csv" >"$work/fresh.txt" 2>&1 || fail "fresh rerun exited $?"
if [[ -f $journal.prev ]] && grep -q 'kept as' "$work/fresh.txt"; then
  ok "a run without --resume kept the old journal as journal.jsonl.prev"
else
  fail "no journal.jsonl.prev after a fresh rerun"
fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI tune --resume checks passed"
