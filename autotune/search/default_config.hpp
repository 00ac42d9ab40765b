#pragma once
// The baseline every tuned row must beat: what the runtime uses when no tuned row matches.
// A documented heuristic (docs/kernels.md "Default heuristic"; every branch's measurements are
// in default_config.cpp), in the order it is tried, M*topk/E expected tokens per expert:
//   sm_90a wgmma:   A16W4 from 0.04 (below, where its stage one has >= 96 CTAs: experts
//                   reached x I / 32), A8W4 (OCP e4m3) from 0.1 tokens per expert, where K fits
//                   the wgmma tiles: block_m 8 below 6 (A8W4: 3), 16 below 16, else 64 (A16W4
//                   from 128 where I >= 2048: 128 on three warpgroups, 96 / 192 columns); two
//                   warpgroups (stage one 64 h columns, stage two 128 y columns; A16W4's
//                   8-token stage one one warpgroup of 32 below 4), rings of 4; A16W4:
//                   rings of 3 for the 8-token stage one from 4 and stage two from 0.1
//                   (with waves 4) and for the 16- and 64-token pairs; the k16 decode for
//                   those 8-token kernels and the 16-token stage two (where ptxas serialises
//                   the 64-K form's wgmmas).
//   sm_90 swapped:  where the above does not apply, below 6 tokens per expert for MXFP4 (up
//                   to 12 for bf16): weights on the MMA's M side, block_m 8 up to 8 tokens per
//                   expert (MXFP4: repacked, waves 4), else 16; A16W4 below 0.04 takes the
//                   8-token wgmma stage two with it.
//   sm_90 fragment decode: A16W4 from 3, A8W4 (OCP) up to 160 tokens per expert, where
//                   neither of the above applies: block_m 16 below 16, else 32.
//   sm_90 staged, then weight-pipelined kernels (MXFP4, more tokens per expert or shapes
//                   the above do not fit); otherwise:
//   block_m by M:   M <= 32 -> 16, <= 256 -> 32, else 64 (128 on sm_90 above 2048, except bf16)
//   sm_90:          mma.sync (nonkdim 16), block_k 256; warps 4/8/8/16 for block_m
//                   16/32/64/128; block_n 64 (stage one) / 128 (stage two) up to block_m 32,
//                   32 / 64 above
//   AMD:            16x16 MFMA (scaled for a8w4 on gfx950), block_k 128, 4 waves,
//                   block_n 64 / 128
//   all:            kpack 1, no occupancy hint, A prefetch (stages 2) for block_m <= 32,
//                   stage two atomic without split-K; bf16 weights: half block_n up to
//                   block_m 32, stages 1.
// A shape a branch's kernels do not fit falls through to the next.
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
