#include "autotune/moe/mxfp4_repack.hpp"

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

namespace moetune::moe {

namespace {

// Low-element positions of pairs 0..3 (the table in the header).
constexpr std::array<RepackedBits, 4> kLow{{{15, 8, 7, 6}, {12, 5, 4, 3}, {9, 2, 1, 0}, {14, 11, 10, 13}}};
// The wgmma word layout's (the second table in the header).
constexpr std::array<RepackedBits, 4> kWgmmaLow{{{15, 8, 7, 6}, {5, 30, 29, 28}, {11, 4, 3, 2}, {9, 10, 1, 0}}};

// Element j's bits in a layout given by its pairs' low-element positions (high: + 16 mod 32).
RepackedBits element_bits(const std::array<RepackedBits, 4>& low, int element, const char* what) {
  if (element < 0 || element > 7) throw std::out_of_range(std::string(what) + ": element 0..7");
  auto b = low[static_cast<std::size_t>(element / 2)];
  int const hi = element % 2 == 1 ? 16 : 0;
  return {(b.sign + hi) % 32, (b.e1 + hi) % 32, (b.e0 + hi) % 32, (b.m + hi) % 32};
}

std::uint32_t place_bits(const std::array<RepackedBits, 4>& low, std::uint32_t natural) {
  std::uint32_t out = 0;
  for (int j = 0; j < 8; ++j) {
    std::uint32_t const code = (natural >> (4 * j)) & 15u;
    auto const b = element_bits(low, j, "place_bits");
    out |= ((code >> 3) & 1u) << b.sign;
    out |= ((code >> 2) & 1u) << b.e1;
    out |= ((code >> 1) & 1u) << b.e0;
    out |= (code & 1u) << b.m;
  }
  return out;
}

std::uint32_t gather_bits(const std::array<RepackedBits, 4>& low, std::uint32_t placed) {
  std::uint32_t out = 0;
  for (int j = 0; j < 8; ++j) {
    auto const b = element_bits(low, j, "gather_bits");
    std::uint32_t const code = (((placed >> b.sign) & 1u) << 3) | (((placed >> b.e1) & 1u) << 2) |
                               (((placed >> b.e0) & 1u) << 1) | ((placed >> b.m) & 1u);
    out |= code << (4 * j);
  }
  return out;
}

}  // namespace

RepackedBits repacked_bits(int element) { return element_bits(kLow, element, "repacked_bits"); }
std::uint32_t repack_mxfp4_word(std::uint32_t natural) { return place_bits(kLow, natural); }
std::uint32_t unpack_mxfp4_word(std::uint32_t repacked) { return gather_bits(kLow, repacked); }

RepackedBits wgmma_word_bits(int element) { return element_bits(kWgmmaLow, element, "wgmma_word_bits"); }
std::uint32_t pack_wgmma_word(std::uint32_t natural) { return place_bits(kWgmmaLow, natural); }
std::uint32_t unpack_wgmma_word(std::uint32_t packed) { return gather_bits(kWgmmaLow, packed); }

std::vector<std::uint8_t> repack_mxfp4(std::span<const std::uint8_t> natural) {
  if (natural.size() % 4 != 0) {
    throw std::invalid_argument("repack_mxfp4: the code array is not a whole number of 32-bit words");
  }
  // Word by word through a 64 Ki-entry table per 16-bit half: the repack only moves bits, so
  // repack(w) = repack(low half) | repack(high half) = table_lo[w & 0xffff] | table_hi[w >> 16]
  // (gigabytes of weights at load time; the bit loop above would take seconds).
  static auto const tables = [] {
    std::vector<std::uint32_t> t(2u << 16);
    for (std::uint32_t v = 0; v < (1u << 16); ++v) {
      t[v] = repack_mxfp4_word(v);
      t[(1u << 16) + v] = repack_mxfp4_word(v << 16);
    }
    return t;
  }();
  std::vector<std::uint8_t> out(natural.size());
  for (std::size_t i = 0; i < natural.size(); i += 4) {
    std::uint32_t w;
    std::memcpy(&w, natural.data() + i, 4);
    std::uint32_t const r = tables[w & 0xffffu] | tables[(1u << 16) + (w >> 16)];
    std::memcpy(out.data() + i, &r, 4);
  }
  return out;
}

}  // namespace moetune::moe
