// Candidates deduplicated by machine code (fake digests): a pipeline with the baseline's code
// is not a candidate, one with an earlier pipeline's is timed once through that pipeline; a
// plan without digests (a replay) compares names only.
#include <memory>

#include <catch2/catch.hpp>

#include "autotune/tune/code_twins.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::baseline_name;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::quiet_model;

namespace {

// Candidates 0..2 of make_bucket(8, 6, 3) are stage-one variants: 0 gets the baseline's
// stage-one code, 1 and 2 share a code of their own.
CodeDigests fake_digests(const BucketPlan& b) {
  return {{b.baseline.stage1.name(), "code-A"},
          {b.baseline.stage2.name(), "code-B"},
          {b.candidates[0].config.name(), "code-A"},
          {b.candidates[1].config.name(), "code-C"},
          {b.candidates[2].config.name(), "code-C"}};
}

}  // namespace

TEST_CASE("code twins: of the baseline not a candidate, of an earlier pipeline timed once",
          "[tune][code_twins]") {
  auto b = make_bucket(8, 6, 3);
  b.code_digests = std::make_shared<const CodeDigests>(fake_digests(b));
  auto const pairs = make_candidate_pairs(b);
  REQUIRE(pairs.pairs.size() == 1);
  CHECK(pairs.pairs[0].name() == pipeline_name(b, 1));
  REQUIRE(pairs.slots.size() == 4);
  CHECK(pairs.slots[0].is_baseline_pair);
  CHECK(pairs.slots[0].code_twin_of == baseline_name(b));
  CHECK(pairs.slots[1].pair == 0u);
  CHECK_FALSE(pairs.slots[1].code_twin_of.has_value());
  CHECK(pairs.slots[2].pair == 0u);
  CHECK(pairs.slots[2].code_twin_of == pipeline_name(b, 1));
  CHECK(pairs.slots[3].pruned.has_value());

  // Through the protocol: the twin carries its original's outcome, and says whose twin it is.
  ReplaySampler sampler(quiet_model());
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  CHECK_THAT(r.reason_of(r.slots[0]),
             Catch::StartsWith("code twin of the baseline " + baseline_name(b)));
  CHECK(r.outcome_of(r.slots[2]) == r.outcome_of(r.slots[1]));
  CHECK_THAT(r.reason_of(r.slots[2]), Catch::StartsWith("code twin of " + pipeline_name(b, 1)));
  CHECK(moetune::test::count_prefix(sampler.log(), "prepare " + pipeline_name(b, 2)) == 0);
}

TEST_CASE("code twins: without digests, or with a unit's digest missing, names decide",
          "[tune][code_twins]") {
  auto b = make_bucket(8, 6, 3);
  CHECK(make_candidate_pairs(b).pairs.size() == 3);  // no digests: a replay

  auto digests = fake_digests(b);
  digests.erase(b.candidates[2].config.name());  // did not compile: no code to compare
  b.code_digests = std::make_shared<const CodeDigests>(digests);
  auto const pairs = make_candidate_pairs(b);
  CHECK(pairs.pairs.size() == 2);
  CHECK_FALSE(pairs.slots[2].code_twin_of.has_value());
}

TEST_CASE("code twins: counted over a plan, zero for a plan without digests",
          "[tune][code_twins]") {
  TunePlan plan;
  plan.buckets.push_back(make_bucket(8, 6, 3));
  plan.buckets.push_back(make_bucket(8, 6, 3));  // the same bucket twice: twice the twins
  CHECK(count_code_twins(plan).total() == 0);

  jit::CompileReport report;
  for (auto const& [unit, digest] : fake_digests(plan.buckets[0])) {
    jit::CompileOutcome o;
    o.unit_name = unit;
    o.code_digest = digest;
    report.outcomes.push_back(o);
  }
  attach_code_digests(plan, code_digests_of(report));
  auto const twins = count_code_twins(plan);
  CHECK(twins.baseline_twins == 2);
  CHECK(twins.pipeline_twins == 2);
  CHECK(twins.total() == 4);
}
