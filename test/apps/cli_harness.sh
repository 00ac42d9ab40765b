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
