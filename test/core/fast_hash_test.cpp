#include <catch2/catch.hpp>

#include <vector>

#include "autotune/core/fast_hash.hpp"

using moetune::FastHash64;

namespace {
std::uint64_t hash_of(const std::vector<std::byte>& bytes) {
  return FastHash64().update(bytes).value();
}
}  // namespace

TEST_CASE("fast hash sees a single flipped bit anywhere, and the length", "[core]") {
  std::vector<std::byte> data(100003);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 131 % 251);
  auto const base = hash_of(data);
  CHECK(base == hash_of(data));  // deterministic
  for (std::size_t pos : {0ul, 7ul, 31ul, 32ul, 50000ul, 100000ul, 100002ul}) {
    auto changed = data;
    changed[pos] ^= std::byte{0x10};
    CHECK(hash_of(changed) != base);
  }
  auto longer = data;
  longer.push_back(std::byte{0});
  CHECK(hash_of(longer) != base);
  // Swapping two words changes the hash (position matters).
  auto swapped = data;
  std::swap(swapped[0], swapped[8]);
  if (swapped != data) CHECK(hash_of(swapped) != base);
}
