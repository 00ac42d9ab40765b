#include "autotune/moe/mxfp4_wgmma_tiles.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "autotune/moe/mxfp4_repack.hpp"
#include "kernel_decode_contract.hpp"

using namespace moetune;

namespace {

moe::MoeShape small_shape(moe::DtypePath dtype, moe::GateUpLayout gate_up) {
  moe::MoeShape s;
  s.hidden = 128;  // w1's K: two 64-K steps
  s.inter = 64;    // w2's K: one step; w1 has 128 rows (8 fragments), w2 128 rows
  s.experts = 3;
  s.topk = 2;
  s.dtype = dtype;
  s.gate_up = gate_up;
  return s;
}

struct Matrix {
  std::int64_t rows, k;
  std::vector<std::uint8_t> codes, scales;
};

Matrix random_matrix(const moe::MoeShape& s, moe::WgmmaMatrix m, unsigned seed) {
  Matrix x;
  x.rows = m == moe::WgmmaMatrix::w1 ? 2 * s.inter : s.hidden;
  x.k = m == moe::WgmmaMatrix::w1 ? s.hidden : s.inter;
  std::mt19937 rng(seed);
  x.codes.resize(static_cast<std::size_t>(s.experts * x.rows * x.k / 2));
  x.scales.resize(static_cast<std::size_t>(s.experts * x.rows * x.k / 32));
  for (auto& b : x.codes) b = static_cast<std::uint8_t>(rng());
  for (auto& b : x.scales) b = static_cast<std::uint8_t>(rng());
  return x;
}

std::uint32_t nibble(const Matrix& x, std::int64_t e, std::int64_t row, std::int64_t k) {
  return (x.codes[static_cast<std::size_t>((e * x.rows + row) * x.k / 2 + k / 2)] >> (4 * (k & 1))) & 15u;
}

// Physical row of local row l of fragment f (the header's contract, written out again).
std::int64_t row_of(const moe::MoeShape& s, moe::WgmmaMatrix m, std::int64_t f, int l) {
  if (m == moe::WgmmaMatrix::w2) return 16 * f + l;
  std::int64_t const column = 8 * f + (l & 7);
  return l < 8 ? moe::gate_row(s, column) : moe::up_row(s, column);
}

std::uint32_t word_at(const std::vector<std::uint8_t>& v, std::size_t offset) {
  return v[offset] | (v[offset + 1] << 8) | (v[offset + 2] << 16) | (static_cast<std::uint32_t>(v[offset + 3]) << 24);
}

std::uint32_t pattern_of(std::uint32_t code) { return ((code >> 3) << 15) | ((code & 7u) << 6); }
std::uint32_t e4m3_of(std::uint32_t code) { return ((code & 8u) << 4) | ((code & 7u) << 2); }

}  // namespace

TEST_CASE("wgmma tiles: every lane's words are its A registers, every scale word its rows' scales", "[moe]") {
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4})
    for (auto layout : {moe::GateUpLayout::interleaved, moe::GateUpLayout::separated})
      for (auto m : {moe::WgmmaMatrix::w1, moe::WgmmaMatrix::w2}) {
        auto const s = small_shape(dtype, layout);
        CAPTURE(moe::to_string(dtype), moe::to_string(layout), m == moe::WgmmaMatrix::w1 ? "w1" : "w2");
        REQUIRE(moe::wgmma_tiles_possible(s, m));
        auto const x = random_matrix(s, m, 17);
        auto const t = moe::make_wgmma_tiles(s, m, x.codes, x.scales);
        REQUIRE(t.codes.size() == x.codes.size());
        REQUIRE(t.scales.size() == x.scales.size());
        std::int64_t const frags = x.rows / 16, steps = x.k / 64;
        int mismatches = 0;
        for (std::int64_t e = 0; e < s.experts; ++e)
          for (std::int64_t f = 0; f < frags; ++f)
            for (std::int64_t kb = 0; kb < steps; ++kb) {
              std::size_t const piece = static_cast<std::size_t>(((e * frags + f) * steps + kb) * 32 * 16);
              for (int lane = 0; lane < 32; ++lane) {
                int const g = lane / 4, q = lane % 4;
                for (int word = 0; word < 4; ++word) {
                  std::uint32_t const w = word_at(t.codes, piece + lane * 16 + word * 4);
                  if (dtype == moe::DtypePath::a16w4) {
                    // a_p of k16 step `word`: rows g (p even) / g+8 (p odd), K0+2q (+8 for p >= 2).
                    for (int p = 0; p < 4; ++p) {
                      std::int64_t const row = row_of(s, m, f, (p & 1) ? g + 8 : g);
                      std::int64_t const k = 64 * kb + 16 * word + 2 * q + (p >= 2 ? 8 : 0);
                      std::uint32_t const want = pattern_of(nibble(x, e, row, k)) | (pattern_of(nibble(x, e, row, k + 1)) << 16);
                      mismatches += test::kernel_wgmma_pair_bits(w, p) != want;
                    }
                  } else {
                    // Words 2j, 2j+1: rows g, g+8 of k32 step j; even codes K0+4q+i, odd K0+16+4q+i.
                    std::int64_t const row = row_of(s, m, f, (word & 1) ? g + 8 : g);
                    std::int64_t const k0 = 64 * kb + 32 * (word / 2) + 4 * q;
                    std::uint32_t even = 0, odd = 0;
                    test::kernel_e4m3_codes(w, even, odd);
                    for (int i = 0; i < 4; ++i) {
                      mismatches += ((even >> (8 * i)) & 0xffu) != e4m3_of(nibble(x, e, row, k0 + i));
                      mismatches += ((odd >> (8 * i)) & 0xffu) != e4m3_of(nibble(x, e, row, k0 + 16 + i));
                    }
                  }
                }
              }
              std::size_t const sp = static_cast<std::size_t>(((e * frags + f) * steps + kb) * 32);
              for (int g = 0; g < 8; ++g) {
                auto scale = [&](int l, std::int64_t block) {
                  return x.scales[static_cast<std::size_t>((e * x.rows + row_of(s, m, f, l)) * (x.k / 32) + block)];
                };
                mismatches += t.scales[sp + 4 * g + 0] != scale(g, 2 * kb);
                mismatches += t.scales[sp + 4 * g + 1] != scale(g + 8, 2 * kb);
                mismatches += t.scales[sp + 4 * g + 2] != scale(g, 2 * kb + 1);
                mismatches += t.scales[sp + 4 * g + 3] != scale(g + 8, 2 * kb + 1);
              }
            }
        CHECK(mismatches == 0);
        auto const back = moe::natural_from_wgmma_tiles(s, m, t.codes, t.scales);
        CHECK(back.codes == x.codes);
        CHECK(back.scales == x.scales);
      }
}

TEST_CASE("wgmma tiles: shapes whose K is not in 64s, bf16 and wrong sizes are refused", "[moe]") {
  auto s = small_shape(moe::DtypePath::a16w4, moe::GateUpLayout::interleaved);
  s.inter = 96;  // w2's K = 96
  CHECK(moe::wgmma_tiles_possible(s, moe::WgmmaMatrix::w1));
  CHECK_FALSE(moe::wgmma_tiles_possible(s, moe::WgmmaMatrix::w2));
  auto const x = random_matrix(s, moe::WgmmaMatrix::w2, 3);
  CHECK_THROWS_AS(moe::make_wgmma_tiles(s, moe::WgmmaMatrix::w2, x.codes, x.scales), std::invalid_argument);
  auto const y = random_matrix(s, moe::WgmmaMatrix::w1, 3);
  CHECK_THROWS_AS(moe::make_wgmma_tiles(s, moe::WgmmaMatrix::w1, std::span(y.codes).subspan(1), y.scales),
                  std::invalid_argument);
  s.dtype = moe::DtypePath::bf16;
  CHECK_FALSE(moe::wgmma_tiles_possible(s, moe::WgmmaMatrix::w1));
}
