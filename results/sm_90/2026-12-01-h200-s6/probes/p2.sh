#!/usr/bin/env bash
# Probe 2 (session 6): the swapped kernels' full-tile copy path (no range test or select per
# copy). A/B in one call: OLD = the committed tree's binary, NEW = with the fast path; verify
# of the swapped space on NEW (all dtypes), then the default and a waves-4 variant at decode
# sizes. Usage: p2.sh OLD_BUILD NEW_BUILD OUT
set -uo pipefail
old=${1:?old}; new=${2:?new}; out=${3:?out}
export LD_LIBRARY_PATH=$new/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s6/probes
mkdir -p "$out"
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
for d in a16w4 a8w4 bf16; do
  LIM=150 t $new/bin/moe-tune verify --space $here/p2_swap_space.json --m 64 --dtype $d --cache-dir /tmp/mt-new --json $out/verify_$d.json > $out/verify_$d.log 2>&1
  tail -2 $out/verify_$d.log
done
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
W4=${s1}t8x8x256_w4_kp1_nk16_wv4_st2_sab_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_ks1_dw0_atomic
for shape in "backbone 5120,640,384,6" "draft 5120,640,128,3" "ep 5120,2304,96,6"; do
  set -- $shape
  for v in old new; do
    b=$old; [[ $v == new ]] && b=$new
    cfgs=(default); [[ $v == new ]] && cfgs+=("$W4")
    LIM=120 t $b/bin/moe-tune bench --roofline --shape $2 --m 1 8 64 --samples 7 --cache-dir /tmp/mt-$v --config "${cfgs[@]}" --json $out/bench_$1_$v.json > $out/bench_$1_$v.log 2>&1
    echo "== $1 $v"; grep -E "^ +[0-9]+ " $out/bench_$1_$v.log
  done
done
