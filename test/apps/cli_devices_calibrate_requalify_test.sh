#!/usr/bin/env bash
# `calibrate --devices` and `requalify --devices` without a GPU (replay workers,
# docs/scale-out.md): calibrate runs exactly the one-worker run's trials (the same cases,
# indices and block seeds, in order), each once and on one named worker (their samples are the
# worker's own: a replay's noise runs on per worker, as a GPU's does); requalify gives the
# one-worker report byte for byte (each row's samples come from its own stream), each row
# naming its worker; isolated workers (--isolate) alike; bad --devices refused as usage errors.
# Usage: cli_devices_calibrate_requalify_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "$0")/cli_harness.sh"

five_bucket_replay  # list, space, model, the compiled cache and tune() (cli_harness.sh)

# ---- calibrate: rounds of trials on one, two and two isolated workers.
calibrate() { "$moe_tune" calibrate --replay "$model" --trials 24 --power-trials 8 --slowdowns 2 "$@"; }
# Which trials ran, in the result's order: case, index and the first attempt's block seeds.
trials_of() {
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for case in doc["cases"]:
    for t in case["trial_results"]:
        print(case["name"], t["index"], t["first_block_seeds"])
PY
}
# Exit 1: too few trials for the targets (the verdict says so); the trials are what is compared.
calibrate --json "$work/cal1.json" >"$work/cal1.txt" 2>&1
[[ $? -le 1 && -f $work/cal1.json ]] || fail "calibrate, one worker: no result"
for spec in 0,1 "0,1 --isolate"; do
  tag=$(tr -c 'a-z0-9' _ <<<"$spec")
  # shellcheck disable=SC2086
  calibrate --devices $spec --json "$work/cal_$tag.json" >"$work/cal_$tag.txt" 2>&1
  rc=$?
  [[ $rc -le 1 && -f $work/cal_$tag.json ]] || { fail "calibrate --devices $spec: exit $rc"; tail -5 "$work/cal_$tag.txt"; continue; }
  if cmp -s <(trials_of "$work/cal1.json") <(trials_of "$work/cal_$tag.json"); then
    ok "calibrate --devices $spec: the one-worker run's trials, in order, each once"
  else
    fail "calibrate --devices $spec: not the one-worker run's trials"
  fi
  python3 - "$work/cal_$tag.json" <<'PY' && ok "calibrate --devices $spec: each of the 32 trials names its worker" ||
import json, sys
doc = json.load(open(sys.argv[1]))
devices = [t.get("device") for c in doc["cases"] for t in c["trial_results"]]
assert len(devices) == 32, len(devices)
assert set(devices) <= {"replay worker 0", "replay worker 1"} and None not in devices, set(devices)
assert doc["machine"]["devices"] == ["replay worker 0", "replay worker 1"], doc["machine"]
PY
    fail "calibrate --devices $spec: trials without a worker"
  grep -q '^devices: 2 worker(s)' "$work/cal_$tag.txt" || fail "calibrate --devices $spec: no devices line"
  grep -qE '^trial 24/24: null [0-9]+/24' "$work/cal_$tag.txt" && grep -qE '^verdict: targets' "$work/cal_$tag.txt" &&
    ok "calibrate --devices $spec: progress over every round and a verdict" || fail "calibrate --devices $spec: no progress or verdict"
done

# ---- requalify: the rows of a five-bucket replayed tune, re-checked on one and two workers.
tune -o "$work/t.csv" >"$work/tune.txt" 2>&1 || fail "tune exited $?"
rows=$(($(wc -l <"$work/t.csv") - 1))
[[ $rows -ge 2 ]] || fail "the replayed tune wrote $rows rows; the test needs >= 2"
requalify() { "$moe_tune" requalify "$work/t.csv" --replay "$model" --cache-dir "$work/cache" -j 2 "$@"; }
requalify --report "$work/rq1" >"$work/rq1.txt" 2>&1 || fail "requalify, one worker: exit $?"
for spec in 0,1 "0,1 --isolate"; do
  tag=$(tr -c 'a-z0-9' _ <<<"$spec")
  # shellcheck disable=SC2086
  requalify --devices $spec --report "$work/rq_$tag" >"$work/rq_$tag.txt" 2>&1 ||
    { fail "requalify --devices $spec: exit $?"; tail -5 "$work/rq_$tag.txt"; continue; }
  if cmp -s "$work/rq1/requalify.md" "$work/rq_$tag/requalify.md"; then
    ok "requalify --devices $spec: the one-worker report, byte for byte"
  else
    fail "requalify --devices $spec: the report differs"; diff "$work/rq1/requalify.md" "$work/rq_$tag/requalify.md" | head -5
  fi
  python3 - "$work/rq_$tag/requalify.json" "$rows" <<'PY' && ok "requalify --devices $spec: each measured row names its worker" ||
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
measured = [r for r in rows if r["bucket"] is not None]
assert len(measured) == int(sys.argv[2]), len(measured)
assert all(r.get("device") in ("replay worker 0", "replay worker 1") for r in measured), [r.get("device") for r in measured]
PY
    fail "requalify --devices $spec: rows without a worker"
done

for cmd in calibrate requalify; do
  for bad in all 0,0 x; do
    if [[ $cmd == calibrate ]]; then calibrate --devices "$bad" >"$work/bad.txt" 2>&1; else requalify --devices "$bad" >"$work/bad.txt" 2>&1; fi
    rc=$?
    [[ $rc -eq 2 ]] && grep -q -- '--devices' "$work/bad.txt" && ok "$cmd --devices '$bad' refused (exit 2)" ||
      { fail "$cmd --devices '$bad': exit $rc"; tail -3 "$work/bad.txt"; }
  done
done
echo "$failures failure(s)"
exit $((failures > 0))
