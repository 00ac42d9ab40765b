#!/usr/bin/env bash
# Session 35's one GPU call: what sessions 33-34 prepared, in the order that buys the most per
# device second, with the gates run only where they can lead to a landing.
#   1. `moe-tune verify` on the split kernels and splitab's first two points (backbone and
#      draft M = 1: the cluster split of main's binary against the global-memory split of the
#      patched one, same kernel names, two rounds with the binaries' order reversed).
#   2. If the patched default is faster at either point by at least 1 % (mean of the rounds),
#      the [gpu] cases that run the split defaults and the runtime / Python suites, so the
#      patch can land; otherwise they are skipped (the log says so).
#   3. The stream probes (per-thread cp.async and one bulk copy per k-tile, one build each), then
#      session 35's `_hs` pair against the default at 4096-16384 tokens (halves_pairs.txt;
#      main's binary with the knob, HALVES_BUILD, default build/cuda), leaving 200 s for 4.
#   4. On an H200: session 33's H200-defaults pairs and Nsight Compute on the default at
#      backbone M = 512; then the split at 8 tokens (../2026-12-07-s34/m8split_pairs.txt) in
#      what is left.
# Usage: [BUILD=folder] call.sh OUT [seconds]. Carry $BUILD (default build/cuda) with
# bin/{moe-tune,moe-tune-main,moetune_test_exec,moetune_test_runtime} and lib, and .cache.
# (Session 35 kept the patched build in build/split_carry while main's tree moved on.) The budget stops each part in time for
# next_gpu.sh's archive; give the device call 20 s more.
set -uo pipefail
out=${1:?out}; budget=${2:-560}
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
ng=results/sm_90/2026-12-05-s25/next_gpu.sh
s34=results/sm_90/2026-12-07-s34
run_parts() {  # limit subdir parts...
  local limit=$1 sub=$2; shift 2
  [ "$limit" -le 20 ] && { echo "== $*: skipped, ${limit} s left"; return 1; }
  timeout "$limit" bash $ng "$out/$sub" "$@"
}
SPLITAB_POINTS=2 run_parts $(($(left) - 30)) a_split splitverify splitab
# The decision, from splitab's bench JSON (each point's first configuration is `default`).
verdict=$(python3 - "$out/a_split" <<'PY'
import glob, json, os, sys, statistics, tarfile
d = sys.argv[1]
# next_gpu.sh moves its JSON into its logs archive before it exits (session 35's first run of
# this script read no rows for that reason): unpack them first.
for t in glob.glob(f"{d}/logs_*.tgz"):
    with tarfile.open(t) as tf:
        tf.extractall(d, members=[m for m in tf.getmembers() if m.name.endswith(".json") and "/" not in m.name])
def total(path):
    try:
        rows = json.load(open(path))["rows"]
    except (OSError, ValueError, KeyError):
        return None
    return rows[0]["total_us"] if rows and rows[0].get("correct") else None  # `default`, verified
win = False
for tag in ("5120_640_384_6", "5120_640_128_3"):
    g = [total(p) for p in glob.glob(f"{d}/bench_split_r*_global_{tag}_a16w4_M1.json")]
    c = [total(p) for p in glob.glob(f"{d}/bench_split_r*_cluster_{tag}_a16w4_M1.json")]
    g = [x for x in g if x]; c = [x for x in c if x]
    if len(g) == 2 and len(c) == 2:
        gm, cm = statistics.mean(g), statistics.mean(c)
        print(f"{tag} M=1 default: cluster {cm:.2f} us, global {gm:.2f} us ({(gm / cm - 1) * 100:+.1f} %)", file=sys.stderr)
        win = win or gm <= 0.99 * cm
    else:
        print(f"{tag}: splitab rows missing ({len(g)} global, {len(c)} cluster)", file=sys.stderr)
print("win" if win else "no")
PY
)
echo "== split verdict: $verdict"
if [ "$verdict" = win ]; then
  GPU_PART_LIMIT=$(($(left) - 150)) \
    GPU_TESTS="launch overlap*,gates: A16W4 on the DSv4.1-Flash backbone*,gates: A8W4 on the DSv4.1-Flash backbone" \
    run_parts $(($(left) - 40)) b_gates gpupart runtimepy
else
  echo "== gates skipped: the global split did not gain 1 % at backbone or draft M = 1"
fi
run_parts $(($(left) - 20)) c_probes streamprobe bulkprobe
# Session 35's stage two reading the 128-token sort in halves (sort_halves, `_hs`), main's tree
# as built in build/cuda (HALVES_BUILD), the points in the order of the expected gain.
[ -x "${HALVES_BUILD:-build/cuda}/bin/moe-tune" ] &&
  BUILD=${HALVES_BUILD:-build/cuda} PAIRS_FILE=results/sm_90/2026-12-07-s35/halves_pairs.txt \
    run_parts $(($(left) - 200)) g_halves pairs
if grep -q H200 "$out/a_split/gpu.txt" 2>/dev/null; then
  PAIRS_FILE=results/sm_90/2026-12-06-s33/h200_defaults_pairs.txt BENCH_BIN=${BUILD:-build/cuda}/bin/moe-tune-main \
    run_parts $(($(left) - 20)) d_h200 pairs
  # The 16-token pair at backbone M = 512 on the H200 (its H100 profile: 87 % / 78 % of DRAM
  # peak; the H200's is what the roofline row of docs/performance.md lacks).
  PROF_POINTS=5120,640,384,6:512 run_parts $(($(left) - 20)) f_prof prof
fi
PAIRS_FILE=$s34/m8split_pairs.txt run_parts $(($(left) - 15)) e_m8split pairs
echo "== call done in $((SECONDS - start)) s"
# The device returns at most 8 files: every part's folder in one archive, without the code
# caches (every kernel of this call is in the carried .cache already).
(cd "$out" && shopt -s nullglob && parts=([a-g]_*) && find . -name code_cache.tgz -delete &&
  tar czf call.tgz "${parts[@]}" && rm -rf "${parts[@]}"; ls -la)
