#!/usr/bin/env bash
# Worker isolation through the real binary, without a GPU: `moe-tune tune --replay --isolate`
# with a model (replay_model_faults.json) in which one candidate's worker really aborts, one
# really hangs, and the second bucket's baseline really aborts. The run must record
# launch_error and timeout with their reasons, replace the worker each time, measure everyone
# else, write the one qualified row, and finish in bounded time. The same model without
# isolation must kill the run, which shows the crash is real. Usage:
#   cli_tune_isolation_test.sh MOE_TUNE SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/cli_harness.sh"

model=$source_dir/test/apps/replay_model_faults.json
list=$source_dir/test/apps/replay_untuned_small.csv
space=$source_dir/search_spaces/ci.json
crash='moetune_s1_a16w4_bf16_t16x32x64_w2_kp1_nk0_wv0_st1_gi_dw0+moetune_s2_a16w4_bf16_t16x128x256_w4_kp1_nk16_wv0_st2_ks1_dw0_atomic'
hang='moetune_s1_a16w4_bf16_t16x64x256_w4_kp1_nk16_wv0_st2_gi_dw0+moetune_s2_a16w4_bf16_t16x128x256_w4_kp1_nk16_wv0_st2_ks1_dw0_reduce'
cd "$work" || exit 1

# Compile first (into the test's own cache), so the timed run below times the protocol only.
"$moe_tune" compile --arch sm_90 --space "$space" --cache-dir "$work/cache" -j 2 >/dev/null 2>&1

start=$SECONDS
timeout 300 "$moe_tune" tune --replay "$model" -o "$work/t.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 --isolate --watchdog 2 >"$work/out.txt" 2>"$work/err.txt"
rc=$?
elapsed=$((SECONDS - start))
# 4: the token-128 bucket's baseline failed (its candidates are baseline_failed); every other
# bucket was still measured and written.
if [[ $rc -ne 4 ]]; then
  fail "tune --replay --isolate exited $rc, want 4 (a baseline failed)"; tail -20 "$work/out.txt" "$work/err.txt"
else
  ok "tune --replay --isolate -> 4 (the token-128 baseline failed)"
fi
# One 2 s watchdog period for the hang, the rest is quick: far from a stuck run.
if [[ $elapsed -le 60 ]]; then ok "finished in ${elapsed} s"; else fail "took ${elapsed} s (watchdog 2 s)"; fi

report=$work/t_replay_report/report.json
# A pipeline's first entry (the token-16 bucket): its outcome and reason lines.
entry() { grep -m1 -A2 -F "\"name\": \"$1\"" "$report"; }
if entry "$crash" | grep -q '"outcome": "launch_error"' &&
  entry "$crash" | grep -q '"reason": "worker pid [0-9]* died during sample_us: killed by signal 6'; then
  ok "aborting candidate: launch_error with the worker's death as its reason"
else
  fail "aborting candidate:"; entry "$crash"
fi
if entry "$hang" | grep -q '"outcome": "timeout"' &&
  entry "$hang" | grep -q '"reason": "no answer to sample_us within 2 s: killed worker pid [0-9]*'; then
  ok "hanging candidate: timeout, worker killed"
else
  fail "hanging candidate:"; entry "$hang"
fi
# Each failure ended a different worker: the run went on in fresh ones.
crash_pid=$(entry "$crash" | sed -nE 's/.*worker pid ([0-9]+) died.*/\1/p')
hang_pid=$(entry "$hang" | sed -nE 's/.*killed worker pid ([0-9]+).*/\1/p')
if [[ -n $crash_pid && -n $hang_pid && $crash_pid != "$hang_pid" ]]; then
  ok "different workers ended ($crash_pid, $hang_pid)"
else
  fail "worker pids: crash '${crash_pid}', hang '${hang_pid}'"
fi
grep -q '"summary": "baseline failed: .*killed by signal 6' "$report" &&
  ok "token-128 bucket: baseline failure recorded" || fail "no baseline failure recorded for token 128"
grep -q '"outcome": "baseline_failed"' "$report" &&
  ok "token-128 candidates: baseline_failed" || fail "no baseline_failed candidate in the report"
# Everyone else was measured: the token-16 winner still qualified and wrote its row.
grep -q '"summary": "qualified"' "$report" && ok "token-16 bucket qualified" || fail "token-16 bucket did not qualify"
if [[ -f $work/t.csv && $(($(wc -l <"$work/t.csv") - 1)) -eq 1 ]] && grep -q ',16,1024,256,32,4,' "$work/t.csv"; then
  ok "exactly the token-16 row written"
else
  fail "tuned CSV is not exactly the token-16 row"; cat "$work/t.csv" 2>/dev/null
fi
outcomes=$(grep -c '^          "outcome": "\(launch_error\|timeout\)"' "$report")
[[ $outcomes -ge 3 ]] || fail "expected launch_error/timeout outcomes in the report, found $outcomes"

# Without isolation the very same crash ends the run: the model's abort is real.
timeout 120 "$moe_tune" tune --replay "$model" -o "$work/u.csv" --space "$space" -i "$list" \
  --cache-dir "$work/cache" -j 2 --no-isolate >"$work/out2.txt" 2>&1
rc=$?
if [[ $rc -eq 134 ]]; then ok "--no-isolate: the run itself aborted (134)"; else fail "--no-isolate exited $rc, expected 134 (SIGABRT)"; fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all CLI tune isolation checks passed"
