#!/usr/bin/env bash
# Probe 5: Nsight Compute full set with SASS-level source counters: the staged stage one at
# backbone M = 4096 (pair A) and the swapped default stage one at M = 512.
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
A=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() {  # prof NAME M CONFIG
  timeout 200 $NCU -k regex:moe_stage1 -c 1 --set full --import-source no -o $out/$1 \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --m $2 --samples 1 --repeats 1 --cache-dir /tmp/mt-cache --config "$3" > $out/$1.log 2>&1
  $NCU -i $out/$1.ncu-rep --page details --print-details all > $out/$1_details.txt 2>&1
  $NCU -i $out/$1.ncu-rep --page source --print-source sass --csv > $out/$1_sass.csv 2>&1
  gzip -f $out/$1_sass.csv; rm -f $out/$1.ncu-rep
}
prof staged_m4096 4096 "$A"
prof swapped_m512 512 default
ls -la $out
