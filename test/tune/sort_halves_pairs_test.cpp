// Pairing reads one sort: a stage two that reads the sort in halves (`_hs`) is timed with a
// stage one of twice its block_m, never with one of its own (make_candidate_pairs' partner
// rule, search::with_sort_of and search::pair_violation).
#include <catch2/catch.hpp>

#include "autotune/search/validity.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;

TEST_CASE("candidate pairs: a stage two reading the sort in halves pairs with a stage one of twice its block_m",
          "[tune]") {
  // Backbone M = 16384 (256 tokens per expert): the default is the 64-token pair.
  auto b = moetune::test::make_bucket(16384, 16384, 0);
  b.candidates.clear();
  REQUIRE(b.baseline.stage1.block_m == 64);
  REQUIRE(b.baseline.stage2.block_m == 64);
  auto halves = b.baseline.stage2;
  halves.sort_halves = true;
  auto s1_128 = b.baseline.stage1;  // session 29's 128-token stage one on three warpgroups
  s1_128.block_m = 128, s1_128.warps = 12, s1_128.block_n = 96, s1_128.waves = 0;
  REQUIRE_FALSE(search::check_config(halves, search::Arch::sm_90, b.shape).has_value());
  REQUIRE_FALSE(search::check_config(s1_128, search::Arch::sm_90, b.shape).has_value());

  // Alone, the halves stage two has no stage one of 128 tokens to pair with: pruned, saying so.
  b.candidates.push_back({halves, std::nullopt});
  auto const alone = make_candidate_pairs(b);
  REQUIRE(alone.slots.size() == 1);
  REQUIRE(alone.slots[0].pruned.has_value());
  CHECK_THAT(*alone.slots[0].pruned, Catch::Contains("no valid stage-1 configuration reading a sort of block_m 128"));

  // With the 128-token stage one in the plan, each is the other's partner: one pipeline.
  b.candidates.push_back({s1_128, std::nullopt});
  auto const pairs = make_candidate_pairs(b);
  REQUIRE(pairs.slots.size() == 2);
  REQUIRE(pairs.slots[0].pair.has_value());
  REQUIRE(pairs.slots[1].pair.has_value());
  CHECK(*pairs.slots[0].pair == *pairs.slots[1].pair);
  REQUIRE(pairs.pairs.size() == 1);
  CHECK(pairs.pairs[0].stage1 == s1_128);
  CHECK(pairs.pairs[0].stage2 == halves);
  CHECK_FALSE(search::pair_violation(pairs.pairs[0].stage1, pairs.pairs[0].stage2).has_value());

  // A 64-token stage one keeps the baseline's whole-block stage two, not the halves one.
  auto s1_other = b.baseline.stage1;
  s1_other.stages += 1;
  b.candidates.push_back({s1_other, std::nullopt});
  auto const three = make_candidate_pairs(b);
  REQUIRE(three.slots[2].pair.has_value());
  CHECK(three.pairs.at(*three.slots[2].pair).stage2 == b.baseline.stage2);
}
