#!/usr/bin/env bash
# Session 33: stage one split over K in a thread-block cluster (OLD: main's binary, the partial
# sums through distributed shared memory) against the same kernels split through a global
# workspace and a last-CTA fix-up (NEW: this tree, kernels/split_k_global.cuh), at the points
# where the default splits and beside it the k16 decode on 128-K k-tiles with 8 CTAs per SM
# (wv8: 64 registers). Each point: both binaries, two rounds, the second in reverse order.
# NEW_BIN is built with unlanded_split_k_global.patch applied, OLD_BIN from the tree without
# it (the two share one code cache: its keys hold every source byte). About 35 s a point on
# the H200 (8 points: budget 300 s). Written in session 33; not run (no machine came).
# Usage: split_ab.sh OUT OLD_BIN NEW_BIN   (LD_LIBRARY_PATH and XDG_CACHE_HOME as next_gpu.sh)
set -uo pipefail
out=$1 old=$2 new=$3
mkdir -p "$out"
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64 XDG_CACHE_HOME=$PWD/.cache
S=moetune_s1_a16w4_bf16_t8x32x128_w4_kp1_nk16_wv8_st3_wg_k16
T2=moetune_s2_a16w4_bf16_t8x128x128_w8_kp1_nk16_wv0_st4_wg_tm_ks1_dw0_atomic
T2X=moetune_s2_a16w4_bf16_t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
bb=5120,640,384,6 dr=5120,640,128,3 ep=5120,2304,96,6
points=(
  "$bb a16w4 1 default ${S}_ks8_gi_dw0,$T2 ${S}_ks4_gi_dw0,$T2"
  "$dr a16w4 1 default ${S}_ks8_gi_dw0,$T2X ${S}_ks4_gi_dw0,$T2X"
  "$bb a16w4 2 default ${S}_ks4_gi_dw0,$T2"
  "$dr a16w4 2 default ${S}_ks8_gi_dw0,$T2"
  "$dr a16w4 4 default ${S}_ks4_gi_dw0,$T2"
  "$ep a16w4 1 default ${S}_ks2_gi_dw0,$T2"
  "$bb a16w4 4 default ${S}_ks2_gi_dw0,$T2"
  "$bb a8w4 1 default"
)
one() {  # tag bin shape dtype M cfgs...
  local tag=$1 bin=$2 sh=$3 dt=$4 M=$5; shift 5
  local n=${tag}_${sh//,/_}_${dt}_M$M
  timeout 120 "$bin" bench --samples 9 --shape "$sh" --dtype "$dt" --m "$M" --config "$@" --json "$out/$n.json" > "$out/$n.log" 2>&1
  echo "$n: exit $?"
  python3 - "$out/$n.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    short = lambda n: n.split("_fp8_")[-1].split("_bf16_")[-1]
    print(f"  {short(r['stage1_config'])} + {short(r['stage2_config'])}: sort {r['sort_us']:.1f} "
          f"s1 {r['stage1_us']:.1f} s2 {r['stage2_us']:.1f} total {r['total_us']:.1f} {'PASS' if r['correct'] else 'FAIL'}")
PY
}
for p in "${points[@]}"; do
  read -r sh dt M cfgs <<< "$p"
  # shellcheck disable=SC2086
  one r1_cluster "$old" "$sh" "$dt" "$M" $cfgs; one r1_global "$new" "$sh" "$dt" "$M" $cfgs
  # shellcheck disable=SC2086
  one r2_global "$new" "$sh" "$dt" "$M" $cfgs; one r2_cluster "$old" "$sh" "$dt" "$M" $cfgs
done
