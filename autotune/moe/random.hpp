#pragma once
// Portable seeded randomness for workloads and routing.
//
// Every generated value must be the same on every machine, compiler and standard library for a
// given seed: a tuned row is only reproducible if its workload is. So no
// std::uniform_*_distribution / std::normal_distribution (their algorithms are unspecified and
// differ between libstdc++ and libc++), and no libm on the hot path. The generators are
// splitmix64 (for deriving independent streams from keys) and xoshiro256** (the stream).
#include <array>
#include <cstdint>
#include <initializer_list>

namespace moetune::moe {

namespace detail {
// 64x64->128-bit products for Lemire's method; __extension__ keeps -Wpedantic quiet.
__extension__ typedef unsigned __int128 uint128;
}  // namespace detail

// One step of splitmix64: advances `state` and returns a well-mixed 64-bit value.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Hashes a key (seed, purpose tag, indices...) into one 64-bit stream seed. Streams keyed by
// logical position (expert, row, token) make the generated data independent of thread count,
// of iteration order and of memory layout (gate/up interleaved or separated).
[[nodiscard]] constexpr std::uint64_t stream_key(std::initializer_list<std::uint64_t> parts) {
  std::uint64_t state = 0x6D6F652D74756E65ULL;  // "moe-tune"
  std::uint64_t out = 0;
  for (auto part : parts) {
    state ^= part;
    out = splitmix64(state);
  }
  return out;
}

// Purpose tags for stream_key, so that e.g. w1 of expert 3 and w2 of expert 3 never share a
// stream. Values are arbitrary but fixed forever (changing one changes every workload).
enum class StreamTag : std::uint64_t {
  x = 1,
  w1 = 2,
  w2 = 3,
  routing_ids = 4,
  routing_weights = 5,
  token_sample = 6,
};

// xoshiro256** 1.0 (Blackman & Vigna), seeded through splitmix64.
class Rng {
 public:
  explicit constexpr Rng(std::uint64_t seed) {
    std::uint64_t s = seed;
    for (auto& word : m_state) word = splitmix64(s);
  }

  constexpr std::uint64_t next() {
    std::uint64_t const result = rotl(m_state[1] * 5, 7) * 9;
    std::uint64_t const t = m_state[1] << 17;
    m_state[2] ^= m_state[0];
    m_state[3] ^= m_state[1];
    m_state[1] ^= m_state[2];
    m_state[0] ^= m_state[3];
    m_state[2] ^= t;
    m_state[3] = rotl(m_state[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, bound), bound > 0, unbiased (Lemire's multiply-and-reject).
  constexpr std::uint64_t below(std::uint64_t bound) {
    std::uint64_t x = next();
    detail::uint128 m = static_cast<detail::uint128>(x) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      std::uint64_t const threshold = (0 - bound) % bound;
      while (low < threshold) {
        x = next();
        m = static_cast<detail::uint128>(x) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Approximately standard normal: the Irwin-Hall sum of four 16-bit uniforms from one draw,
  // centred and scaled to unit variance. Range ±3.46; pure integer/FP arithmetic, so bit-exact
  // everywhere, and cheap enough to fill the ~4e9 weights of a DeepSeek layer.
  constexpr double approx_normal() {
    std::uint64_t const bits = next();
    double sum = 0.0;
    for (int i = 0; i < 4; ++i) {
      sum += (static_cast<double>((bits >> (16 * i)) & 0xFFFF) + 0.5) * 0x1.0p-16;
    }
    constexpr double sqrt3 = 1.7320508075688772;
    return (sum - 2.0) * sqrt3;
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> m_state{};
};

}  // namespace moetune::moe
