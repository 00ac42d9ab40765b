#pragma once
// The wgmma tile layout of MXFP4 weights (WeightLayout::wgmma_tiles, name token `_wg`),
// prepared once at load time and never inside a timed MoE: the layout the wgmma main loop
// (kernels/moe_wgmma_gemm.cuh) reads, in which every lane's 16-byte piece is exactly the A
// registers of its warpgroup MMA for 64 K, so a lane decodes one contiguous vector per step.
//
// A weight matrix (per expert `rows` x K, K a multiple of 64) becomes 16-row fragments:
//   stage one (w1, 2I rows): fragment f holds the gate rows of h columns 8f..8f+7 (local rows
//     0-7) and their up rows (8-15), wherever the shape's gate/up order keeps them;
//   stage two (w2, H rows): fragment f is rows 16f..16f+15.
// Codes: [expert][fragment][K/64][lane 0..31][16 bytes]; lane (g = lane / 4, q = lane % 4)
// holds local rows g and g+8, as four 32-bit words:
//   a16w4: word s (k16 step s, K0 = 64 kb + 16 s) is the wgmma word (moe/mxfp4_repack.hpp)
//     whose pairs 0..3 are (row g, K0+2q..+1), (row g+8, K0+2q..), (row g, K0+8+2q..),
//     (row g+8, K0+8+2q..): wgmma's bf16 A registers a0..a3 of that step;
//   a8w4: words 2j and 2j+1 (k32 step j, K0 = 64 kb + 32 j) are rows g and g+8 as natural
//     nibbles, K0+4q+i in nibble 2i and K0+16+4q+i in nibble 2i+1 (i = 0..3), so the even
//     nibbles become wgmma's e4m3 register a0 (a1) and the odd ones a2 (a3).
// Scales: [expert][fragment][K/64][g 0..7][4 bytes]: rows g and g+8 of 32-K block 2kb, then
// of block 2kb+1. Both arrays have exactly the natural arrays' sizes.
#include <cstdint>
#include <span>
#include <vector>

#include "autotune/moe/moe_shape.hpp"

namespace moetune::moe {

enum class WgmmaMatrix { w1, w2 };

struct WgmmaTiles {
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> scales;
};

// Whether the shape's matrix can take the layout (its K a multiple of 64, an MXFP4 path).
[[nodiscard]] bool wgmma_tiles_possible(const MoeShape& shape, WgmmaMatrix matrix);

// The natural codes ([E][rows][K/2]) and scales ([E][rows][K/32]) of w1 or w2 in the wgmma tile
// layout of the shape's dtype. Throws std::invalid_argument when the sizes do not match the
// shape or wgmma_tiles_possible() is false.
[[nodiscard]] WgmmaTiles make_wgmma_tiles(const MoeShape& shape, WgmmaMatrix matrix,
                                          std::span<const std::uint8_t> codes,
                                          std::span<const std::uint8_t> scales);

// The same in the tile words of another MXFP4 dtype (`words`): A16W4's words for an A8W4 shape,
// read by the kernels compiled as A16W4's main loop (an A8W4 stage one reading x in bf16, a
// stage two reading h in bf16: search::compiled_as). The scales' layout is the same for both.
[[nodiscard]] WgmmaTiles make_wgmma_tiles(const MoeShape& shape, WgmmaMatrix matrix, DtypePath words,
                                          std::span<const std::uint8_t> codes,
                                          std::span<const std::uint8_t> scales);

// The inverse (tests, and a reader checking a prepared copy): natural codes and scales again.
[[nodiscard]] WgmmaTiles natural_from_wgmma_tiles(const MoeShape& shape, WgmmaMatrix matrix,
                                                  std::span<const std::uint8_t> codes,
                                                  std::span<const std::uint8_t> scales);

}  // namespace moetune::moe
