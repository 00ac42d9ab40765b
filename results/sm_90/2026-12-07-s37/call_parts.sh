# Sourced by session 37's call scripts (call.sh, call2.sh, call_desc_ab.sh): the call's arguments, its time left, the card, and
# next_gpu.sh parts run under what is left. Expects "$@" = OUT [seconds].
set -uo pipefail
out=${1:?out}; budget=${2:-560}
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
ng=results/sm_90/2026-12-05-s25/next_gpu.sh
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
run_parts() {  # limit subdir parts...
  local limit=$1 sub=$2; shift 2
  [ "$limit" -le 20 ] && { echo "== $*: skipped, ${limit} s left"; return 1; }
  timeout "$limit" bash $ng "$out/$sub" "$@"
}
# Every part's folder into OUT/call.tgz (the device returns few files), without code caches
# and Nsight Compute reports (the details and SASS pages stay).
pack_parts() {
  rm -f "$out"/*/code_cache.tgz "$out"/*/*.ncu-rep
  tar czf "$out/call.tgz" -C "$out" $(cd "$out" && ls -d */ 2>/dev/null | tr -d /) 2>/dev/null
  find "$out" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
  echo "== done in $((SECONDS - start)) s"
}
