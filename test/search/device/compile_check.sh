#!/bin/bash
# Compile every valid ci.json candidate for sm_90 (nvcc), gfx942/gfx950 (clang-22) and
# gfx90a (hipRTC, HIP 5.2), printing registers/spills. Interim check until the JIT's own
# compile test lands. Usage: test/search/device/compile_check.sh <build dir> <work dir>
set -u
B=$1; W=$2; K=$(cd "$(dirname "$0")/../../../kernels" && pwd); R=$(cd "$K/.." && pwd)
mkdir -p "$W"/tus/{sm_90,gfx942,gfx950,gfx90a}
g++ -std=c++20 -I"$R" "$R/test/search/device/dump_ci_tus.cpp" -o "$W/dump" "$B/autotune/search/libmoetune_search.a" \
    "$B/autotune/moe/libmoetune_moe.a" "$B/autotune/core/libmoetune_core.a" -lfmt || exit 1
"$W/dump" "$R/search_spaces/ci.json" "$W/tus" || exit 1
g++ -std=c++17 -D__HIP_PLATFORM_AMD__ "$R/test/search/device/hiprtc_check.cpp" -o "$W/hiprtc_check" -lamdhip64 || exit 1
for f in "$W"/tus/sm_90/*.cu; do
  echo "sm_90 $(basename "$f" .cu): $(/usr/local/cuda/bin/nvcc -arch=sm_90 -std=c++17 -c -Xptxas -v -I"$K" "$f" -o /dev/null 2>&1 \
    | grep -A2 'moe_stage' | grep -E 'registers|spill' | tr '\n' ' ')"
done
for a in gfx942 gfx950; do
  for f in "$W"/tus/$a/*.cu; do
    echo "$a $(basename "$f" .cu): $(clang-22 -x hip --cuda-device-only --offload-arch=$a -nogpulib -nogpuinc -O3 -std=c++17 \
      --ld-path=ld.lld-22 -I"$K" -Rpass-analysis=kernel-resource-usage -o "$W/x.bundle" "$f" 2>&1 \
      | awk '/Function Name: .*moe_stage/{p=1} /Function Name: .*moe_(sort|zero|reduce)/{p=0} p&&/VGPRs:|AGPRs:|ScratchSize/{sub(/.*remark: /,""); sub(/ \[-R.*/,""); printf "%s ", $0} /error/{print}')"
  done
done
"$W/hiprtc_check" "$K" "$W"/tus/gfx90a/*.cu
