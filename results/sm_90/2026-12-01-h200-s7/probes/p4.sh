#!/usr/bin/env bash
# Probe 4 (session 7): where fragment decode (_stg_fd_rp) pays, to set the default: 16-token
# blocks at 2-12 tokens per expert (backbone M = 256 and 512, draft M = 128, EP M = 64) with
# ring depth and occupancy hints, 32/64-token blocks at M = 4096, 64-token at M = 16384.
# Usage: p4.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
pair() { echo "${s1}$1_kp1_nk16_$2_stg_fd_rp_gi_dw0,${s2}$3_kp1_nk16_$4_stg_fd_rp_ks1_dw0_atomic"; }
G3=$(pair t16x64x64_w4 wv0_st3 t16x128x64_w4 wv0_st3)
G4=$(pair t16x64x64_w4 wv0_st4 t16x128x64_w4 wv0_st4)
G5=$(pair t16x64x64_w4 wv0_st5 t16x128x64_w4 wv0_st5)
G4W=$(pair t16x64x64_w4 wv6_st4 t16x128x64_w4 wv6_st4)
G4N=$(pair t16x32x64_w4 wv0_st4 t16x64x64_w4 wv0_st4)
G4K=$(pair t16x64x128_w4 wv0_st3 t16x128x128_w4 wv0_st3)
bench() {  # bench NAME SHAPE M CONFIGS...
  local name=$1 shape=$2 m=$3; shift 3
  LIM=120 t $b/bin/moe-tune bench --roofline --shape $shape --m $m --samples 5 --cache-dir $cache \
    --config default "$@" --json $out/bench_${name}_$m.json > $out/bench_${name}_$m.log 2>&1
  grep -E "^ +[0-9]+ |^ +moetune_s1" $out/bench_${name}_$m.log | sed 's/moetune_s[12]_a16w4_bf16_//g; s/_kp1_nk16//g' | paste - - | awk '{print $1, $5, $6, $7, $8}'
}
bench backbone 5120,640,384,6 512 "$G3" "$G4" "$G5" "$G4W" "$G4N" "$G4K"
bench backbone 5120,640,384,6 256 "$G3" "$G4" "$G4W"
bench draft 5120,640,128,3 128 "$G3" "$G4" "$G4W"
bench ep 5120,2304,96,6 64 "$G3" "$G4" "$G4W"
bench draft 5120,640,128,3 4096 "$(pair t32x64x64_w4 wv4_st4 t32x128x64_w4 wv4_st4)" "$(pair t64x32x64_w4 wv0_st4 t64x64x64_w4 wv0_st4)" "$(pair t64x64x64_w8 wv2_st4 t64x128x64_w8 wv2_st4)"
bench backbone 5120,640,384,6 4096 "$(pair t32x64x64_w4 wv4_st4 t32x128x64_w4 wv4_st4)" "$(pair t64x32x64_w4 wv0_st4 t64x64x64_w4 wv0_st4)" "$(pair t64x64x64_w8 wv2_st4 t64x128x64_w8 wv2_st4)"
tar czf $out/../p4.tgz -C $out .
