#include "autotune/core/sha256.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace moetune {
namespace {

// First 32 bits of the fractional parts of the cube roots of the first 64 primes.
constexpr std::array<std::uint32_t, 64> round_constants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

// First 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr std::array<std::uint32_t, 8> initial_state = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                                        0xa54ff53a, 0x510e527f, 0x9b05688c,
                                                        0x1f83d9ab, 0x5be0cd19};

std::uint32_t load_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace

Sha256::Sha256() : m_state(initial_state) {}

void Sha256::compress(const std::uint8_t* block) {
  std::array<std::uint32_t, 64> w{};
  for (int i = 0; i < 16; ++i) w[i] = load_be32(block + 4 * i);
  for (int i = 16; i < 64; ++i) {
    std::uint32_t const s0 =
        std::rotr(w[i - 15], 7) ^ std::rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    std::uint32_t const s1 = std::rotr(w[i - 2], 17) ^ std::rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = m_state;
  for (int i = 0; i < 64; ++i) {
    std::uint32_t const big_s1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    std::uint32_t const choose = (e & f) ^ (~e & g);
    std::uint32_t const t1 = h + big_s1 + choose + round_constants[i] + w[i];
    std::uint32_t const big_s0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    std::uint32_t const majority = (a & b) ^ (a & c) ^ (b & c);
    std::uint32_t const t2 = big_s0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  m_state[0] += a;
  m_state[1] += b;
  m_state[2] += c;
  m_state[3] += d;
  m_state[4] += e;
  m_state[5] += f;
  m_state[6] += g;
  m_state[7] += h;
}

Sha256& Sha256::update(std::span<const std::byte> data) {
  auto const* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t remaining = data.size();
  m_total_bytes += remaining;
  if (m_block_used > 0) {
    std::size_t const take = std::min(remaining, m_block.size() - m_block_used);
    std::memcpy(m_block.data() + m_block_used, bytes, take);
    m_block_used += take;
    bytes += take;
    remaining -= take;
    if (m_block_used < m_block.size()) return *this;
    compress(m_block.data());
    m_block_used = 0;
  }
  for (; remaining >= 64; remaining -= 64, bytes += 64) compress(bytes);
  std::memcpy(m_block.data(), bytes, remaining);
  m_block_used = remaining;
  return *this;
}

Sha256& Sha256::update(std::string_view text) {
  return update(std::as_bytes(std::span<const char>(text.data(), text.size())));
}

Sha256& Sha256::update_field(std::string_view text) {
  std::uint64_t const length = text.size();
  std::array<std::uint8_t, 8> encoded{};
  for (int i = 0; i < 8; ++i) encoded[i] = static_cast<std::uint8_t>(length >> (56 - 8 * i));
  update(std::as_bytes(std::span<const std::uint8_t>(encoded)));
  return update(text);
}

Sha256::Digest Sha256::finish() {
  std::uint64_t const bit_length = m_total_bytes * 8;
  // Padding: one 1 bit, zeros up to 56 mod 64 bytes, then the big-endian bit length.
  std::array<std::uint8_t, 72> padding{};
  padding[0] = 0x80;
  std::size_t const pad = (m_block_used < 56 ? 56 : 120) - m_block_used;
  for (int i = 0; i < 8; ++i) {
    padding[pad + i] = static_cast<std::uint8_t>(bit_length >> (56 - 8 * i));
  }
  update(std::as_bytes(std::span<const std::uint8_t>(padding.data(), pad + 8)));
  Digest digest{};
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) {
      digest[4 * i + j] = static_cast<std::uint8_t>(m_state[i] >> (24 - 8 * j));
    }
  }
  *this = Sha256();
  return digest;
}

std::string Sha256::finish_hex() {
  Digest const digest = finish();
  return to_hex(digest);
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t const b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 0xF]);
  }
  return out;
}

std::string sha256_hex(std::string_view text) { return Sha256().update(text).finish_hex(); }

std::string sha256_hex(std::span<const std::byte> data) {
  return Sha256().update(data).finish_hex();
}

}  // namespace moetune
