#include "autotune/moe/mxfp4_repack.hpp"

#include "kernel_decode_contract.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <set>

using namespace moetune;

namespace {
// Every bit of a word is used exactly once by the 8 elements' 4 bits of a layout.
template <class BitsOf>
void check_bit_permutation(BitsOf bits_of) {
  std::set<int> used;
  for (int j = 0; j < 8; ++j) {
    auto const b = bits_of(j);
    for (int bit : {b.sign, b.e1, b.e0, b.m}) CHECK(used.insert(bit).second);
  }
  CHECK(used.size() == 32);
}
}  // namespace

TEST_CASE("the repacked MXFP4 layout is a bit permutation with the documented positions", "[moe]") {
  check_bit_permutation(moe::repacked_bits);
  // Element 0 alone, code 0b1011 (sign, e0, m): bits 15, 7, 6.
  CHECK(moe::repack_mxfp4_word(0xbu) == ((1u << 15) | (1u << 7) | (1u << 6)));
  // Element 7 (pair 3, high): code 0b0100 (e1 only) -> bit 11 + 16.
  CHECK(moe::repack_mxfp4_word(0x4u << 28) == (1u << 27));
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) {
    std::uint32_t const w = rng();
    CHECK(moe::unpack_mxfp4_word(moe::repack_mxfp4_word(w)) == w);
  }
}

// The kernel's fast decode (kernels/mx_decode.cuh, decode_mxfp4_repacked) reads pair p of a
// repacked word with these masks and shifts; written out here so that a change to either the
// host layout or this contract fails on a machine without a GPU. Each result must carry the
// pair's two codes as bf16 patterns: sign at 15/31, e1 e0 m at 8..6 / 24..22, nothing else.
namespace {
using test::kernel_pair_bits;
std::uint32_t expected_pair_bits(std::uint32_t natural, int p) {
  auto half = [&](int j) {
    std::uint32_t const c = (natural >> (4 * j)) & 15u;
    return ((c >> 3) << 15) | ((c & 7u) << 6);
  };
  return half(2 * p) | (half(2 * p + 1) << 16);
}
}  // namespace

TEST_CASE("the kernel's masks and shifts read natural pairs out of a repacked word", "[moe]") {
  std::mt19937 rng(11);
  for (int i = 0; i < 100000; ++i) {
    std::uint32_t const w = i < 16 ? 0x11111111u * static_cast<std::uint32_t>(i) : rng();
    std::uint32_t const r = moe::repack_mxfp4_word(w);
    for (int p = 0; p < 4; ++p) {
      CAPTURE(w, p);
      CHECK(kernel_pair_bits(r, p) == expected_pair_bits(w, p));
    }
  }
}

TEST_CASE("the wgmma word layout is a bit permutation whose pairs the wgmma loop's shifts read", "[moe]") {
  check_bit_permutation(moe::wgmma_word_bits);
  // Element 2 (pair 1, low), code 0b1100 (sign, e1): bits 5 and 30; element 7 (pair 3, high),
  // code 0b0010 (e0): bit 1 + 16.
  CHECK(moe::pack_wgmma_word(0xcu << 8) == ((1u << 5) | (1u << 30)));
  CHECK(moe::pack_wgmma_word(0x2u << 28) == (1u << 17));
  std::mt19937 rng(13);
  for (int i = 0; i < 100000; ++i) {
    std::uint32_t const w = i < 16 ? 0x11111111u * static_cast<std::uint32_t>(i) : rng();
    std::uint32_t const packed = moe::pack_wgmma_word(w);
    CHECK(moe::unpack_wgmma_word(packed) == w);
    for (int p = 0; p < 4; ++p) {
      CAPTURE(w, p);
      CHECK(test::kernel_wgmma_pair_bits(packed, p) == expected_pair_bits(w, p));
    }
  }
}

TEST_CASE("repack_mxfp4 repacks word by word and refuses a partial word", "[moe]") {
  std::vector<std::uint8_t> codes(4096);
  std::mt19937 rng(3);
  for (auto& c : codes) c = static_cast<std::uint8_t>(rng());
  auto const out = moe::repack_mxfp4(codes);
  REQUIRE(out.size() == codes.size());
  for (std::size_t i = 0; i < codes.size(); i += 4) {
    std::uint32_t a, b;
    std::memcpy(&a, codes.data() + i, 4);
    std::memcpy(&b, out.data() + i, 4);
    CHECK(b == moe::repack_mxfp4_word(a));
  }
  std::vector<std::uint8_t> odd(6);
  CHECK_THROWS_AS(moe::repack_mxfp4(odd), std::invalid_argument);
}
