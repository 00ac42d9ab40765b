#include "autotune/moe/mxfp4_wgmma_tiles.hpp"

#include <stdexcept>
#include <thread>

#include "autotune/moe/mxfp4_repack.hpp"

namespace moetune::moe {
namespace {

struct Geometry {
  std::int64_t experts, rows, k;
  [[nodiscard]] std::int64_t fragments() const { return rows / 16; }
  [[nodiscard]] std::int64_t steps() const { return k / 64; }  // 64-K steps per row
};

Geometry geometry(const MoeShape& s, WgmmaMatrix m) {
  return m == WgmmaMatrix::w1 ? Geometry{s.experts, 2 * s.inter, s.hidden} : Geometry{s.experts, s.hidden, s.inter};
}

// Physical row (within an expert) of local row l of fragment f.
std::int64_t physical_row(const MoeShape& s, WgmmaMatrix m, std::int64_t f, int l) {
  if (m == WgmmaMatrix::w2) return 16 * f + l;
  std::int64_t const column = 8 * f + (l & 7);
  return l < 8 ? gate_row(s, column) : up_row(s, column);
}

// Where the natural nibble of (row, k) sits and where word `word` of lane `lane` takes its
// 8 nibbles from: nibble n of the word is element (row_of(n), k_of(n)) of the fragment.
struct NibbleSource {
  int local_row;
  std::int64_t k;
};
NibbleSource nibble_source(DtypePath dtype, std::int64_t kb, int lane, int word, int nibble) {
  int const g = lane / 4, q = lane % 4;
  if (dtype == DtypePath::a16w4) {
    // Pair p = nibble / 2 (elements 2p, 2p+1 of the natural word before the repack).
    int const p = nibble / 2, hi = nibble % 2;
    std::int64_t const k0 = 64 * kb + 16 * word + 2 * q + (p >= 2 ? 8 : 0);
    return {(p & 1) ? g + 8 : g, k0 + hi};
  }
  int const j = word / 2, i = nibble / 2;
  std::int64_t const k0 = 64 * kb + 32 * j + 4 * q + i + (nibble % 2 ? 16 : 0);
  return {(word & 1) ? g + 8 : g, k0};
}

void check_sizes(const MoeShape& s, WgmmaMatrix m, std::span<const std::uint8_t> codes,
                 std::span<const std::uint8_t> scales) {
  if (!wgmma_tiles_possible(s, m)) throw std::invalid_argument("wgmma tiles: the shape's K is not a multiple of 64 or its weights are not MXFP4");
  auto const g = geometry(s, m);
  auto const elems = static_cast<std::size_t>(g.experts * g.rows * g.k);
  if (codes.size() != elems / 2 || scales.size() != elems / 32)
    throw std::invalid_argument("wgmma tiles: code or scale array size does not match the shape");
}

// Runs f(expert) for every expert over the host's cores (gigabytes of weights at load time).
template <class F>
void for_each_expert(std::int64_t experts, F&& f) {
  unsigned const n = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 16u));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t)
    pool.emplace_back([&, t] {
      for (std::int64_t e = t; e < experts; e += n) f(e);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

bool wgmma_tiles_possible(const MoeShape& s, WgmmaMatrix m) {
  auto const g = geometry(s, m);
  return s.dtype != DtypePath::bf16 && g.k % 64 == 0 && g.rows % 16 == 0 && g.k > 0;
}

namespace {

// Calls f(e, rows, step, kb) for every 64-K step kb of every fragment of every expert e, over
// the host's cores: rows[l] is the physical row of local row l, step the step's index in the
// tiled arrays ((e * fragments + f) * steps + kb).
template <class F>
void for_each_step(const MoeShape& s, WgmmaMatrix m, F&& f) {
  auto const g = geometry(s, m);
  for_each_expert(g.experts, [&](std::int64_t e) {
    for (std::int64_t fr = 0; fr < g.fragments(); ++fr) {
      std::int64_t rows[16];
      for (int l = 0; l < 16; ++l) rows[l] = physical_row(s, m, fr, l);
      for (std::int64_t kb = 0; kb < g.steps(); ++kb) f(e, rows, (e * g.fragments() + fr) * g.steps() + kb, kb);
    }
  });
}

// Scale slot i (0..31) of a step: lane g = i / 4's rows g (even i) / g+8 (odd), block 2kb (i % 4
// < 2) or 2kb+1.
int scale_row(int i) { return (i / 4) + ((i & 1) ? 8 : 0); }
int scale_block(int i) { return (i & 2) ? 1 : 0; }

}  // namespace

WgmmaTiles make_wgmma_tiles(const MoeShape& shape, WgmmaMatrix matrix, DtypePath words,
                            std::span<const std::uint8_t> codes, std::span<const std::uint8_t> scales) {
  MoeShape in_words = shape;
  in_words.dtype = words;
  return make_wgmma_tiles(in_words, matrix, codes, scales);
}

WgmmaTiles make_wgmma_tiles(const MoeShape& s, WgmmaMatrix m, std::span<const std::uint8_t> codes,
                            std::span<const std::uint8_t> scales) {
  check_sizes(s, m, codes, scales);
  auto const g = geometry(s, m);
  WgmmaTiles out{std::vector<std::uint8_t>(codes.size()), std::vector<std::uint8_t>(scales.size())};
  std::int64_t const row_bytes = g.k / 2, row_scales = g.k / 32;
  for_each_step(s, m, [&](std::int64_t e, const std::int64_t (&rows)[16], std::int64_t step, std::int64_t kb) {
    const std::uint8_t* const ec = codes.data() + e * g.rows * row_bytes;
    const std::uint8_t* const es = scales.data() + e * g.rows * row_scales;
    std::uint8_t* const piece = out.codes.data() + step * 32 * 16;
    for (int lane = 0; lane < 32; ++lane)
      for (int word = 0; word < 4; ++word) {
        std::uint32_t natural = 0;
        for (int nib = 0; nib < 8; ++nib) {
          auto const src = nibble_source(s.dtype, kb, lane, word, nib);
          std::uint8_t const byte = ec[rows[src.local_row] * row_bytes + src.k / 2];
          natural |= static_cast<std::uint32_t>((byte >> (4 * (src.k & 1))) & 15u) << (4 * nib);
        }
        std::uint32_t const w = s.dtype == DtypePath::a16w4 ? pack_wgmma_word(natural) : natural;
        for (int b = 0; b < 4; ++b) piece[lane * 16 + word * 4 + b] = static_cast<std::uint8_t>(w >> (8 * b));
      }
    for (int i = 0; i < 32; ++i)
      out.scales[static_cast<std::size_t>(step * 32 + i)] = es[rows[scale_row(i)] * row_scales + 2 * kb + scale_block(i)];
  });
  return out;
}

WgmmaTiles natural_from_wgmma_tiles(const MoeShape& s, WgmmaMatrix m, std::span<const std::uint8_t> codes,
                                    std::span<const std::uint8_t> scales) {
  check_sizes(s, m, codes, scales);
  auto const g = geometry(s, m);
  WgmmaTiles out{std::vector<std::uint8_t>(codes.size()), std::vector<std::uint8_t>(scales.size())};
  std::int64_t const row_bytes = g.k / 2, row_scales = g.k / 32;
  for_each_step(s, m, [&](std::int64_t e, const std::int64_t (&rows)[16], std::int64_t step, std::int64_t kb) {
    std::uint8_t* const ec = out.codes.data() + e * g.rows * row_bytes;
    std::uint8_t* const es = out.scales.data() + e * g.rows * row_scales;
    const std::uint8_t* const piece = codes.data() + step * 32 * 16;
    for (int lane = 0; lane < 32; ++lane)
      for (int word = 0; word < 4; ++word) {
        std::uint32_t w = 0;
        for (int b = 0; b < 4; ++b) w |= static_cast<std::uint32_t>(piece[lane * 16 + word * 4 + b]) << (8 * b);
        std::uint32_t const natural = s.dtype == DtypePath::a16w4 ? unpack_wgmma_word(w) : w;
        for (int nib = 0; nib < 8; ++nib) {
          auto const src = nibble_source(s.dtype, kb, lane, word, nib);
          std::uint8_t& byte = ec[rows[src.local_row] * row_bytes + src.k / 2];
          byte = static_cast<std::uint8_t>(byte | (((natural >> (4 * nib)) & 15u) << (4 * (src.k & 1))));
        }
      }
    for (int i = 0; i < 32; ++i)
      es[rows[scale_row(i)] * row_scales + 2 * kb + scale_block(i)] = scales[static_cast<std::size_t>(step * 32 + i)];
  });
  return out;
}

}  // namespace moetune::moe
