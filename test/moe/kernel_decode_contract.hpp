#pragma once
// The kernels' fast MXFP4 decode written out on the host (kernels/mx_decode.cuh:
// e2m1x2_repacked_pattern, e2m1x2_wgmma_pattern and e2m1x8_to_e4m3_scaled), so the tests of the layouts prepared at
// load time check what the kernels will read, without a GPU.
#include <cstdint>

namespace moetune::test {

// Pair p (0..3) of a repacked word as the kernels extract it: sign at bf16 bit 15/31, e1 e0 m
// at bits 8..6 / 24..22.
inline std::uint32_t kernel_pair_bits(std::uint32_t w, int p) {
  constexpr std::uint32_t mask = 0x81c081c0u;
  switch (p) {
    case 0: return w & mask;
    case 1: return (w << 3) & mask;
    case 2: return (w << 6) & mask;
    default: return ((w << 1) & 0x80008000u) | ((w >> 3) & 0x01800180u) | ((w >> 7) & 0x00400040u);
  }
}

// Pair p (0..3) of a wgmma word (the wgmma main loop's A16W4 tiles: e2m1x2_wgmma_pattern),
// the same bf16 patterns.
inline std::uint32_t kernel_wgmma_pair_bits(std::uint32_t w, int p) {
  constexpr std::uint32_t mask = 0x81c081c0u;
  switch (p) {
    case 0: return w & mask;
    case 1: return ((w << 10) | (w >> 22)) & mask;
    case 2: return (w << 4) & mask;
    default: return ((w << 6) & 0x80c080c0u) | ((w >> 2) & 0x01000100u);
  }
}

// Eight natural MXFP4 codes of a word as the kernels turn them into e4m3 codes (value * 2^-6):
// even elements into `even`, odd ones into `odd`, lowest first.
inline void kernel_e4m3_codes(std::uint32_t w, std::uint32_t& even, std::uint32_t& odd) {
  even = ((w << 2) & 0x1c1c1c1cu) | ((w << 4) & 0x80808080u);
  odd = ((w >> 2) & 0x1c1c1c1cu) | (w & 0x80808080u);
}

}  // namespace moetune::test
