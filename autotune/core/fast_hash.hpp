#pragma once
// A fast 64-bit, non-cryptographic hash for "did these gigabytes change?" checks (input
// preservation after a kernel run). SHA-256 runs at ~0.4 GB/s on one core, far too slow for a
// DeepSeek layer's 2 GB of weights per candidate; this runs at memory speed. Not for cache
// keys or provenance: those use Sha256.
#include <cstdint>
#include <span>

namespace moetune {

class FastHash64 {
 public:
  FastHash64& update(std::span<const std::byte> data);
  [[nodiscard]] std::uint64_t value() const;

 private:
  std::uint64_t m_state = 0x9E3779B97F4A7C15ull;
  std::uint64_t m_length = 0;
};

}  // namespace moetune
