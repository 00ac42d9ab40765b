// Pairing keeps an A8W4 pipeline's h format whole: a stage that keeps h in bf16 (`_hb`) is
// timed with a partner of the other stage that does too, never with one that reads or writes
// fp8 codes and scales (make_candidate_pairs' partner rule, search::pair_violation).
#include <catch2/catch.hpp>

#include "autotune/search/default_config.hpp"
#include "autotune/search/validity.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;

TEST_CASE("candidate pairs: a stage keeping h in bf16 is paired with a partner that does too", "[tune]") {
  auto b = moetune::test::make_bucket(512, 512, 0);
  b.candidates.clear();
  b.shape.dtype = moe::DtypePath::a8w4;
  b.baseline = search::default_config(b.shape, search::Arch::sm_90, b.M);
  REQUIRE_FALSE(b.baseline.stage1.h_bf16);
  auto s1_hb = b.baseline.stage1;
  s1_hb.h_bf16 = true;
  auto s2_hb = b.baseline.stage2;
  s2_hb.h_bf16 = true;
  s2_hb.wgmma_k16 = s2_hb.wgmma;  // valid for the A16W4 kernel it is compiled as
  auto s1_other = b.baseline.stage1;
  s1_other.stages += 1;
  b.candidates.push_back({s1_hb, std::nullopt});
  b.candidates.push_back({s2_hb, std::nullopt});
  b.candidates.push_back({s1_other, std::nullopt});

  auto const pairs = make_candidate_pairs(b);
  REQUIRE(pairs.slots.size() == 3);
  // The bf16-h stage one: the baseline's stage two with h in bf16 is not a candidate, so its
  // partner is the one stage-two candidate that keeps h in bf16; and that candidate's partner
  // is the baseline's stage one with h in bf16, which is a candidate: the same pipeline.
  REQUIRE(pairs.slots[0].pair.has_value());
  REQUIRE(pairs.slots[1].pair.has_value());
  CHECK(*pairs.slots[0].pair == *pairs.slots[1].pair);
  auto const& hb_pair = pairs.pairs.at(*pairs.slots[0].pair);
  CHECK(hb_pair.stage1 == s1_hb);
  CHECK(hb_pair.stage2 == s2_hb);
  // An fp8-h stage one keeps the baseline's fp8-h stage two.
  REQUIRE(pairs.slots[2].pair.has_value());
  CHECK(pairs.pairs.at(*pairs.slots[2].pair).stage2 == b.baseline.stage2);
  for (auto const& p : pairs.pairs) CHECK_FALSE(search::pair_violation(p.stage1, p.stage2).has_value());

  // Without a bf16-h stage two in the plan, the bf16-h stage one has no partner and says why.
  b.candidates.erase(b.candidates.begin() + 1);
  auto const alone = make_candidate_pairs(b);
  REQUIRE(alone.slots[0].pruned.has_value());
  CHECK_THAT(*alone.slots[0].pruned, Catch::Contains("keeping h in bf16"));
}
