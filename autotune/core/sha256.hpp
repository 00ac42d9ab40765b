#pragma once
// SHA-256 (FIPS 180-4), our own implementation: cache keys for compiled kernels and the
// provenance hashes of kernel sources in every report. Incremental, so a key can be built
// from many pieces without concatenating them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace moetune {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();

  Sha256& update(std::span<const std::byte> data);
  Sha256& update(std::string_view text);
  // Hashes the length, then the text: concatenations of fields stay unambiguous
  // ("ab"+"c" and "a"+"bc" give different keys).
  Sha256& update_field(std::string_view text);

  // Completes the hash; the object is then reset for reuse.
  [[nodiscard]] Digest finish();
  [[nodiscard]] std::string finish_hex();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> m_state{};
  std::array<std::uint8_t, 64> m_block{};
  std::size_t m_block_used = 0;
  std::uint64_t m_total_bytes = 0;
};

[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);
[[nodiscard]] std::string sha256_hex(std::string_view text);
[[nodiscard]] std::string sha256_hex(std::span<const std::byte> data);

}  // namespace moetune
