# Sourced by the CLI test scripts that take MOE_TUNE SOURCE_DIR: the binary and source tree,
# a scratch directory removed on exit, and the ok/fail bookkeeping (the script ends with
# `exit $((failures > 0))` after printing its summary).
set -u
moe_tune=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# The scale-out tests' list: five buckets (tokens 16 to 256 of replay_untuned_small.csv's first
# shape) in $list, search_spaces/ci.json compiled into $work/cache, the small replay model, and
# tune() running `moe-tune tune --replay` on them with the arguments given; cd's into $work.
five_bucket_replay() {
  space=$source_dir/search_spaces/ci.json
  list=$work/list.csv
  model=$source_dir/test/apps/replay_model_small.json
  { head -1 "$source_dir/test/apps/replay_untuned_small.csv"
    for t in 16 32 64 128 256; do sed -n 2p "$source_dir/test/apps/replay_untuned_small.csv" | sed "s/^16,/$t,/"; done
  } >"$list"
  cd "$work" || exit 1
  "$moe_tune" compile --space "$space" --arch sm_90 --cache-dir "$work/cache" -j 2 >/dev/null 2>&1
}
tune() { "$moe_tune" tune --replay "$model" --space "$space" -i "$list" --cache-dir "$work/cache" -j 2 "$@"; }
