#!/usr/bin/env bash
# Session 39's first call, for whichever card comes.
#   1. form_pairs.txt (part pairs: two rounds in reverse order): the 64-K decode form, whose
#      descriptor sums session 38 made uniform, against the k16 form session 18 chose for the
#      8-token stage one and the 8- and 16-token stage twos, at M = 64 (8-token blocks) and at
#      7-12 tokens per expert (16-token blocks).
#   2. moe-tune verify (every correctness gate) on those candidates (verify_space.json).
#   3. Session 38's landed descriptor at the decode sizes, where it reaches the one-warpgroup
#      8-token stage one (untimed so far): build/cuda/bin/moe-tune-main is built from 463b3cb,
#      the tree before it; one bench call per binary in the order old, new, new, old.
# Usage: call.sh OUT [seconds]; carry build/cuda/bin/{moe-tune,moe-tune-main} and build/cuda/lib.
source results/sm_90/2026-12-07-s37/call_parts.sh "$@"
b=build/cuda
PAIRS_FILE=results/sm_90/2026-12-07-s39/form_pairs.txt run_parts $(($(left) - 140)) a_forms pairs
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
echo "== verify ($(left) s left)"
timeout $(($(left) - 100)) $b/bin/moe-tune verify --space results/sm_90/2026-12-07-s39/verify_space.json --shape 5120,640,384,6 \
  --dtype a16w4 --m 64 --cache-dir .cache/moe-tune --json "$out/verify.json" > "$out/verify.log" 2>&1
echo "verify exit $?"; grep -E "pass|fail|FAIL|verify:" "$out/verify.log" | cut -c1-140
mkdir -p "$out/b_decode"
for pt in "5120,640,384,6 1 4 8" "5120,640,128,3 2 4" "5120,2304,96,6 1 2"; do
  set -- $pt; sh=$1; shift
  for run in r1_old:moe-tune-main r1_new:moe-tune r2_new:moe-tune r2_old:moe-tune-main; do
    [ "$(left)" -le 25 ] && { echo "decode: out of time"; break 2; }
    n=${run%%:*}_${sh//,/_}
    timeout $(($(left) - 15)) $b/bin/${run#*:} bench --shape "$sh" --dtype a16w4 --m "$@" --config default \
      --cache-dir .cache/moe-tune --json "$out/b_decode/$n.json" > "$out/b_decode/$n.log" 2>&1
    echo "$n exit $?"; grep -E "^ +[0-9]+ " "$out/b_decode/$n.log"
  done
done
pack_parts
