#!/usr/bin/env bash
# Session 16, probe 4 (issue #17): `tune --devices all` on the one-GPU machine (the only kind
# lent this session): the device list, the alike check and the worker's --device option on a
# real GPU, a two-bucket list of the small replay shape with search_spaces/ci.json; then
# --devices naming a GPU that does not exist (a usage error). Logs into OUT.
# Usage: p4.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
head -3 test/apps/replay_untuned_small.csv > $out/list.csv
s=$SECONDS
timeout 400 build/cuda/bin/moe-tune tune -i $out/list.csv --space search_spaces/ci.json --devices all \
  --cache-dir /tmp/cache -o $out/tuned.csv --report $out/report > $out/tune.log 2>&1
echo "tune --devices all: exit $?, $((SECONDS-s)) s"
grep -E "^devices|^\[gpu|=>|buckets qualified" $out/tune.log | head -12
python3 -c "import json; r=json.load(open('$out/report/report.json')); print([b.get('device') for b in r['buckets']])"
build/cuda/bin/moe-tune tune -i $out/list.csv --space search_spaces/ci.json --devices 0,1 -o $out/bad.csv > $out/bad.log 2>&1
echo "--devices 0,1 on one GPU: exit $?"; tail -2 $out/bad.log
