// The token range a bucket's tuned row serves (AITER rounds M up to a power of two) and the M
// values verify checks for it.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/measure/served_tokens.hpp"

using namespace moetune;
using measure::served_tokens;
using measure::verification_ms;
using V = std::vector<std::int64_t>;

TEST_CASE("a bucket's row serves M = token/2 + 1 ... token", "[tune]") {
  CHECK(served_tokens(1).lowest == 1);
  CHECK(served_tokens(1).highest == 1);
  CHECK(served_tokens(2).lowest == 2);
  CHECK(served_tokens(2).highest == 2);
  CHECK(served_tokens(8).lowest == 5);
  CHECK(served_tokens(8).highest == 8);
  CHECK(served_tokens(4096).lowest == 2049);
  CHECK(served_tokens(4096).highest == 4096);
  // Every M of the range rounds up to token, and the M just below rounds to token/2.
  for (std::int64_t token = 2; token <= 1 << 14; token *= 2) {
    auto const s = served_tokens(token);
    CHECK(std::bit_ceil(static_cast<std::uint64_t>(s.lowest)) == static_cast<std::uint64_t>(token));
    CHECK(std::bit_ceil(static_cast<std::uint64_t>(s.lowest - 1)) == static_cast<std::uint64_t>(token / 2));
  }
  CHECK_THROWS_AS(served_tokens(0), Error);
  CHECK_THROWS_AS(served_tokens(-4), Error);
}

TEST_CASE("verification M values: the timed M first, then both ends, each once", "[tune]") {
  CHECK(verification_ms(8, 6) == V{6, 5, 8});     // the seeds' backbone bucket 8 at M=6
  CHECK(verification_ms(8, 5) == V{5, 8});        // timed at the lowest
  CHECK(verification_ms(64, 64) == V{64, 33});    // timed at the token itself
  CHECK(verification_ms(1, 1) == V{1});           // token 1 serves only M=1
  CHECK(verification_ms(2, 2) == V{2});
  CHECK(verification_ms(256, 200) == V{200, 129, 256});
}
