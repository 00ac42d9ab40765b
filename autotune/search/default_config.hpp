#pragma once
// The baseline every tuned row must beat: what the runtime uses when no tuned row matches.
// A documented heuristic (docs/kernels.md "Default heuristic"), deliberately simple:
//   sm_90, at most 12 expected tokens per expert (M*topk/E, measured, see
//                   default_config.cpp): swapped operands; block_m 8 up to 8 tokens per
//                   expert (stage one 8x256 ring 2, stage two 64x128 ring 2), else 16 (8x128
//                   and 64x128, ring 4); 4 warps; a8w4 stage one block_n 32. Otherwise:
//   sm_90, MXFP4 weights, M > 32 (measured, see default_config.cpp): weight-pipelined
//                   kernels (stages 3); M <= 1024: block_m 16, stage one 64x256 on 8 warps,
//                   stage two 128x128 on 4 warps with split-K 2; above: block_m 32, 32x256
//                   and 64x128 on 8 warps, split-K 2. Otherwise:
//   block_m by M:   M <= 32 -> 16, <= 256 -> 32, else 64 (128 on sm_90 above 2048, except bf16)
//   sm_90:          mma.sync (nonkdim 16), block_k 256; warps 4/8/8/16 for block_m
//                   16/32/64/128; block_n 64 (stage one) / 128 (stage two) up to block_m 32,
//                   32 / 64 above
//   AMD:            16x16 MFMA (scaled for a8w4 on gfx950), block_k 128, 4 waves,
//                   block_n 64 / 128
//   all:            kpack 1, no occupancy hint, A prefetch (stages 2) for block_m <= 32,
//                   stage two atomic without split-K; bf16 weights: half block_n up to
//                   block_m 32, stages 1.
#include <cstdint>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::search {

struct DefaultConfigs {
  KernelConfig stage1;
  KernelConfig stage2;
};

[[nodiscard]] DefaultConfigs default_config(const moe::MoeShape& shape, Arch arch, std::int64_t M);

}  // namespace moetune::search
