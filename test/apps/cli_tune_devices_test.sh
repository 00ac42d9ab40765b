#!/usr/bin/env bash
# Several measuring workers in one run, without a GPU (`tune --devices` on replayed samples,
# docs/scale-out.md): a five-bucket list tuned with one worker and with two and three; the same
# table byte for byte (each bucket's samples come from its own stream), every bucket measured
# by exactly one worker (its report names the worker; the journal holds each key once), the
# isolated workers (--isolate) alike, --resume of a multi-worker journal, and bad --devices
# refused as usage errors.
# Usage: cli_tune_devices_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "$0")/cli_harness.sh"

five_bucket_replay  # list, space, model, the compiled cache and tune() (cli_harness.sh)

tune -o "$work/one.csv" >"$work/one.txt" 2>&1 || fail "one worker exited $?"
[[ -f $work/one.csv ]] || fail "one worker wrote no rows (the test needs >= 1)"

for spec in 0,1 0,1,2; do
  n=$(echo "$spec" | tr ',' '\n' | wc -l)
  tune --devices "$spec" -o "$work/d$n.csv" >"$work/d$n.txt" 2>&1 || fail "--devices $spec exited $?"
  if cmp -s "$work/one.csv" "$work/d$n.csv"; then ok "$n workers: the one-worker table, byte for byte"
  else fail "$n workers' table differs"; diff "$work/one.csv" "$work/d$n.csv" | head -5; fi
  report=$work/d${n}_replay_report/report.json
  python3 - "$report" "$work/d${n}_replay_report/journal.jsonl" "$n" <<'PY' && ok "$n workers: every bucket on one named worker, each key journaled once" || fail "$n workers: buckets, devices or journal keys wrong"
import json, sys, collections
report = json.load(open(sys.argv[1]))
buckets = report["buckets"]
assert len(buckets) == 5, len(buckets)
devices = [b.get("device") for b in buckets]
assert all(d and d.startswith("replay worker ") for d in devices), devices
keys = collections.Counter(json.loads(l).get("key") for l in open(sys.argv[2]).read().splitlines()[1:] if l.strip())
assert len(keys) == 5 and set(keys.values()) == {1}, keys
PY
done
grep -q '^5 bucket(s) to measure on 3 devices, largest first' "$work/d3.txt" && ok "the run says how many workers share the buckets" ||
  fail "no worker count line"

# One worker named by --devices: the same table, its buckets' reports name it.
tune --devices 3 -o "$work/single.csv" >"$work/single.txt" 2>&1 || fail "--devices 3 exited $?"
cmp -s "$work/one.csv" "$work/single.csv" && grep -q '"device": "replay worker 3"' "$work/single_replay_report/report.json" &&
  ok "one named worker: the same table, each bucket's report names it" || fail "one named worker"

# Isolated workers (a worker process each, as on GPUs).
tune --devices 0,1 --isolate -o "$work/iso.csv" >"$work/iso.txt" 2>&1 || fail "--devices 0,1 --isolate exited $?"
cmp -s "$work/one.csv" "$work/iso.csv" && ok "two isolated workers: the same table" || fail "two isolated workers' table differs"

# --resume of a multi-worker run takes every bucket from its journal.
tune --devices 0,1 --resume -o "$work/d2.csv" >"$work/resume.txt" 2>&1 || fail "--resume exited $?"
grep -q '5 bucket(s) taken from the journal' "$work/resume.txt" && cmp -s "$work/one.csv" "$work/d2.csv" &&
  ok "--resume with two workers measures nothing again and keeps the table" || fail "--resume with two workers"

for bad in all 0,0 x -1 "0,"; do
  tune --devices "$bad" -o "$work/bad.csv" >"$work/bad.txt" 2>&1
  rc=$?
  [[ $rc -eq 2 ]] && grep -q -- '--devices' "$work/bad.txt" && ok "--devices '$bad' refused (exit 2)" ||
    { fail "--devices '$bad': exit $rc"; tail -3 "$work/bad.txt"; }
done
echo "$failures failure(s)"
exit $((failures > 0))
