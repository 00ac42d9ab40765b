#include "autotune/core/fast_hash.hpp"

#include <cstring>

namespace moetune {
namespace {

constexpr std::uint64_t mix(std::uint64_t x) {
  // The finaliser of splitmix64: every input bit affects every output bit.
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

}  // namespace

FastHash64& FastHash64::update(std::span<const std::byte> data) {
  // Four independent lanes keep the multiplier pipeline busy; combined in order at the end of
  // each 32-byte block, so the result depends on the position of every word.
  std::uint64_t lanes[4] = {m_state, m_state ^ 1, m_state ^ 2, m_state ^ 3};
  std::size_t i = 0;
  for (; i + 32 <= data.size(); i += 32) {
    for (int l = 0; l < 4; ++l) {
      std::uint64_t w;
      std::memcpy(&w, data.data() + i + 8 * l, 8);
      lanes[l] = (lanes[l] ^ w) * 0x9FB21C651E98DF25ull;
      lanes[l] ^= lanes[l] >> 29;
    }
  }
  std::uint64_t h = m_state;
  for (auto lane : lanes) h = mix(h ^ lane);
  for (; i < data.size(); ++i) h = mix(h ^ static_cast<std::uint64_t>(data[i]));
  m_state = h;
  m_length += data.size();
  return *this;
}

std::uint64_t FastHash64::value() const { return mix(m_state ^ m_length); }

}  // namespace moetune
