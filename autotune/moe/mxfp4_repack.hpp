#pragma once
// The repacked MXFP4 weight layout (KernelConfig::repacked, name token `_rp`), prepared once
// at load time and never inside a timed MoE.
//
// Why: on sm_90 the MXFP4 -> bf16 decode is most of the MoE's instructions (Nsight Compute,
// results/sm_90/2026-12-01-h200-s5/probes/p5). In AITER's natural layout (element 2i in the
// low nibble of byte i) a bf16 pair costs ~5 instructions: each element's magnitude and sign
// need their own shift. Repacked, every 32-bit word still holds the same 8 elements e0..e7 of
// its K group (so rows, scales and every address stay as they are), with their bits placed
// so that the natural pairs (e0,e1) (e2,e3) (e4,e5) (e6,e7) come out of one mask of the word,
// of the word shifted by 3 and by 6, and (the last pair) of three shifts: magnitude bits e1 e0 m
// of each element at bf16 bits 8..6 (low element) / 24..22 (high), sign at 15 / 31, read as
// value * 2^-126 and scaled by one bf16x2 multiply (kernels/mx_decode.cuh). About 3.75
// instructions per pair instead of 5.
//
// Bit positions of element j of a word (the high element of each pair adds 16):
//   pair j/2:        0    1    2    3
//   sign            15   12    9   14
//   e1 (exp high)    8    5    2   11
//   e0 (exp low)     7    4    1   10
//   m  (mantissa)    6    3    0   13
// Natural layout: element j is nibble j (bits 4j..4j+3: m, e0, e1, sign from low to high).
#include <cstdint>
#include <span>
#include <vector>

namespace moetune::moe {

// Where the 4 bits of element j (0..7) of a repacked word lie: sign, e1, e0, m.
struct RepackedBits {
  int sign, e1, e0, m;
};
[[nodiscard]] RepackedBits repacked_bits(int element);

// One 32-bit word (8 natural nibbles, little-endian element order) to the repacked layout,
// and back. A bijection on all 2^32 words.
[[nodiscard]] std::uint32_t repack_mxfp4_word(std::uint32_t natural);
[[nodiscard]] std::uint32_t unpack_mxfp4_word(std::uint32_t repacked);

// A whole code array (any number of 4-byte words: every MXFP4 row of K/2 bytes is a multiple
// of 4 since K is a multiple of 32), word by word in place of the natural one.
[[nodiscard]] std::vector<std::uint8_t> repack_mxfp4(std::span<const std::uint8_t> natural);

// The wgmma word layout: the same idea for the A16W4 words of the wgmma tiles
// (moe/mxfp4_wgmma_tiles.hpp), with a placement found by exhaustive search over one word's
// shifts and rotations (results/sm_90/2026-12-02-h200-s13/README.md): pair 0 comes out of a
// mask of the word, pair 1 of the word rotated left by 10, pair 2 of w << 4 and pair 3 of
// w << 6 (sign, e0, m) and w >> 2 (e1): 9 instructions per word instead of the repacked
// layout's 11 (no placement lets every pair come from one shift or rotation and one mask).
// Bit positions (the high element of each pair adds 16, modulo 32):
//   pair j/2:        0    1    2    3
//   sign            15    5   11    9
//   e1 (exp high)    8   30    4   10
//   e0 (exp low)     7   29    3    1
//   m  (mantissa)    6   28    2    0
[[nodiscard]] RepackedBits wgmma_word_bits(int element);
[[nodiscard]] std::uint32_t pack_wgmma_word(std::uint32_t natural);
[[nodiscard]] std::uint32_t unpack_wgmma_word(std::uint32_t packed);

}  // namespace moetune::moe
