#!/usr/bin/env bash
# Sharded tuning through the real binary, without a GPU (replayed samples, docs/scale-out.md):
# a five-bucket list tuned whole and as 2 and 3 shards (`tune --shard K/N`, and `--shard auto`
# from Slurm's and Kubernetes' variables); the shards never share a bucket and together hold
# every one; `merge-shards` writes the very table the whole run writes, byte for byte, and one
# summary. A shard killed mid-run leaves the others intact: merging then refuses (naming the
# shard and lines) and writes nothing, the killed shard alone is resumed, and the merge then
# matches. Shards of different runs, a shard given twice and a bad --shard are refused.
# Usage: cli_tune_shard_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "$0")/cli_harness.sh"
pid=
trap '[[ -n $pid ]] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT  # the killed shard too

five_bucket_replay  # list, space, model, the compiled cache and tune() (cli_harness.sh)

# 1. The whole run.
tune -o "$work/all.csv" >"$work/all.txt" 2>&1 || fail "the whole run exited $?"
[[ -f $work/all.csv ]] || fail "the whole run wrote no rows (the test needs >= 1)"

# 2. Two and three shards: disjoint, complete, merged = the whole run.
for n in 2 3; do
  lines=""
  for k in $(seq 1 "$n"); do
    tune --shard "$k/$n" -o "$work/n${n}_$k.csv" >"$work/n${n}_$k.txt" 2>&1 || fail "shard $k/$n exited $?"
    lines+=" $(grep -o '"shard_lines":"[0-9,]*"' "$work/n${n}_${k}_replay_report/journal.jsonl" | head -1 | cut -d'"' -f4 | tr ',' ' ')"
  done
  sorted=$(echo $lines | tr ' ' '\n' | sort -n | tr '\n' ' ')
  if [[ $sorted == "2 3 4 5 6 " ]]; then ok "$n shards hold lines 2-6, each once"; else fail "$n shards hold lines: $sorted"; fi
  dirs=()
  for k in $(seq 1 "$n"); do dirs+=("$work/n${n}_${k}_replay_report"); done
  "$moe_tune" merge-shards "${dirs[@]}" -o "$work/merged$n.csv" --report "$work/merged$n" >"$work/merge$n.txt" 2>&1 ||
    fail "merge-shards of $n shards exited $?"
  if cmp -s "$work/all.csv" "$work/merged$n.csv"; then ok "$n shards merged: the whole run's table, byte for byte"
  else fail "$n shards merged differ from the whole run"; diff "$work/all.csv" "$work/merged$n.csv" | head -5; fi
  [[ $(grep -c '^| [0-9]* | ' "$work/merged$n/summary.md") -ge 5 ]] && grep -q '^## Shards' "$work/merged$n/summary.md" &&
    ok "one summary with every bucket and the shards" || fail "merged summary.md lacks buckets or the shard table"
done

# 3. --shard auto: Slurm array variables and a Kubernetes Indexed Job pick the same shards.
SLURM_ARRAY_TASK_ID=11 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=3 tune --shard auto -o "$work/slurm.csv" >"$work/slurm.txt" 2>&1
grep -q '^shard 2/3 (from SLURM_ARRAY_TASK_ID=11' "$work/slurm.txt" && ok "Slurm task 11 of 10..12 is shard 2/3" ||
  { fail "Slurm variables"; grep '^shard' "$work/slurm.txt"; }
JOB_COMPLETION_INDEX=2 MOETUNE_SHARD_COUNT=3 tune --shard auto -o "$work/k8s.csv" >"$work/k8s.txt" 2>&1
grep -q '^shard 3/3 (from JOB_COMPLETION_INDEX=2' "$work/k8s.txt" && ok "Kubernetes index 2 of 3 is shard 3/3" ||
  { fail "Kubernetes variables"; grep '^shard' "$work/k8s.txt"; }
JOB_COMPLETION_INDEX=2 tune --shard auto -o "$work/k8s_bad.csv" >"$work/k8s_bad.txt" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q 'MOETUNE_SHARD_COUNT' "$work/k8s_bad.txt" && ok "a Kubernetes index without the count is refused (exit $rc)" ||
  fail "JOB_COMPLETION_INDEX without MOETUNE_SHARD_COUNT: exit $rc"
for bad in 0/2 3/2 x/2 2; do
  tune --shard "$bad" -o "$work/bad.csv" >"$work/bad.txt" 2>&1
  rc=$?
  [[ $rc -eq 2 && ! -e $work/bad.csv ]] && grep -q -- "--shard $bad" "$work/bad.txt" && ok "--shard $bad refused (exit $rc)" ||
    fail "--shard $bad: exit $rc"
done

# 4. A shard killed mid-run (the slow model: a delay per sample) leaves the others intact.
model=$source_dir/test/apps/replay_model_slow.json
tune -o "$work/slow_all.csv" >"$work/slow_all.txt" 2>&1 || fail "the whole slow run exited $?"
tune --shard 1/2 -o "$work/k1.csv" >"$work/k1.txt" 2>&1 || fail "shard 1/2 exited $?"
journal=$work/k2_replay_report/journal.jsonl
tune --shard 2/2 -o "$work/k2.csv" >"$work/k2.txt" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
  [[ -f $journal ]] && (($(wc -l <"$journal") >= 2)) && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -9 "$pid" 2>/dev/null; then
  wait "$pid" 2>/dev/null; pid=
  ok "shard 2/2 killed with $(($(wc -l <"$journal") - 1)) bucket(s) journaled"
else
  pid=; fail "shard 2/2 ended before it could be killed (the test would pass vacuously)"
fi
"$moe_tune" merge-shards "$work/k1_replay_report" "$work/k2_replay_report" -o "$work/km.csv" --report "$work/km" >"$work/km.txt" 2>&1
rc=$?
[[ $rc -eq 1 && ! -e $work/km.csv && ! -e $work/km/report.json ]] && grep -q 'shard 2/2' "$work/km.txt" && grep -q 'not decided' "$work/km.txt" &&
  ok "merging an unfinished shard is refused (exit $rc), naming it, nothing written" || { fail "merge of an unfinished shard: exit $rc"; cat "$work/km.txt"; }
before=$(md5sum <"$work/k1_replay_report/journal.jsonl")
tune --shard 2/2 --resume -o "$work/k2.csv" >"$work/k2_resume.txt" 2>&1 || fail "resuming shard 2/2 exited $?"
grep -q 'decided in the journal' "$work/k2_resume.txt" && ok "shard 2/2 resumed alone from its journal" || fail "shard 2/2 did not take its journal"
[[ $(md5sum <"$work/k1_replay_report/journal.jsonl") == "$before" ]] && ok "shard 1/2 untouched" || fail "shard 1/2's journal changed"
"$moe_tune" merge-shards "$work/k1_replay_report" "$work/k2_replay_report" -o "$work/km.csv" --report "$work/km2" >"$work/km2.txt" 2>&1 ||
  fail "merge after the resume exited $?"
cmp -s "$work/slow_all.csv" "$work/km.csv" && ok "after the resume the merge is the whole run's table" || fail "merge after resume differs"

# 5. Refusals: a shard given twice; shards of different runs (another seed).
"$moe_tune" merge-shards "$work/k1_replay_report" "$work/k1_replay_report" -o "$work/twice.csv" --report "$work/twice" >"$work/twice.txt" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q 'given twice' "$work/twice.txt" && ok "a shard given twice is refused (exit $rc)" || fail "shard twice: exit $rc"
tune --shard 2/2 --seed 2 -o "$work/seed2.csv" >"$work/seed2.txt" 2>&1
"$moe_tune" merge-shards "$work/k1_replay_report" "$work/seed2_replay_report" -o "$work/mixed.csv" --report "$work/mixed" >"$work/mixed.txt" 2>&1
rc=$?
[[ $rc -eq 2 && ! -e $work/mixed.csv ]] && grep -q 'different runs' "$work/mixed.txt" && grep -q 'seed' "$work/mixed.txt" &&
  ok "shards of different runs are refused, naming the field (exit $rc)" || { fail "mixed runs: exit $rc"; cat "$work/mixed.txt"; }

echo "$failures failure(s)"
exit $((failures > 0))
