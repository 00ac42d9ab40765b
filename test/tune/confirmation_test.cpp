// run_confirmation, the design shared by tune and calibrate: order of blocks and samples,
// candidate faults returned, baseline faults propagated.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "autotune/tune/confirmation.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::quiet_model;

namespace {

struct Setup {
  BucketPlan bucket = make_bucket(8, 6, 1);
  TunePair base = baseline_pair(bucket);
  TunePair cand{bucket.candidates.at(0).config, bucket.baseline.stage2};
  ConfirmArms arms{{"baseline", base}, {"candidate", cand}, {"control", base}};
  std::vector<std::uint64_t> seeds{11, 12};
};

}  // namespace

TEST_CASE("run_confirmation: blocks, alternating pairs, a control pair after each", "[tune]") {
  Setup s;
  ReplaySampler sampler(quiet_model());
  ProtocolOptions opt;
  opt.pairs_per_block = 2;
  auto const r = run_confirmation(sampler, opt, s.arms, 1, s.seeds);
  REQUIRE_FALSE(r.fault);
  CHECK(r.attempt.attempt == 1);
  REQUIRE(r.attempt.comparison.size() == 4);
  REQUIRE(r.attempt.control.size() == 4);
  CHECK(r.attempt.comparison_summary.block_median_reductions.size() == 2);
  // Alternation runs across blocks: pair 2 (block 1, first pair) is baseline first again.
  std::vector<bool> const first{true, false, true, false};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(r.attempt.comparison[i].baseline_first == first[i]);
    CHECK(r.attempt.control[i].baseline_first == first[i]);
    CHECK(r.attempt.comparison[i].block == static_cast<int>(i / 2));
  }
  std::vector<std::string> samples;
  for (auto const& line : sampler.log()) {
    if (line.rfind("sample ", 0) == 0) samples.push_back(line.substr(15, line.find(' ', 15) - 15));
    if (line.rfind("begin_block", 0) == 0) samples.push_back("|");
  }
  std::vector<std::string> const want{
      "|", "baseline", "candidate", "baseline", "control",   // pair 0: AB, control AB
      "candidate", "baseline", "control", "baseline",         // pair 1: BA, control BA
      "|", "baseline", "candidate", "baseline", "control",
      "candidate", "baseline", "control", "baseline"};
  CHECK(samples == want);
}

TEST_CASE("run_confirmation: a candidate fault is returned, a baseline fault propagates",
          "[tune]") {
  Setup s;
  ProtocolOptions opt;
  {
    auto model = quiet_model();
    model.sample_failure[s.cand.name()] = Outcome::timeout;
    ReplaySampler sampler(model);
    auto const r = run_confirmation(sampler, opt, s.arms, 0, s.seeds);
    REQUIRE(r.fault.has_value());
    CHECK(r.fault->kind == Outcome::timeout);
    CHECK_FALSE(r.fault->while_building);
    CHECK(r.attempt.comparison.empty());
  }
  {
    auto model = quiet_model();
    model.sample_failure[s.base.name()] = Outcome::launch_error;
    ReplaySampler sampler(model);
    CHECK_THROWS_AS(run_confirmation(sampler, opt, s.arms, 0, s.seeds), SamplerError);
  }
  ReplaySampler sampler(quiet_model());
  ConfirmArms same_labels{{"a", s.base}, {"a", s.cand}, {"c", s.base}};
  CHECK_THROWS_AS(run_confirmation(sampler, opt, same_labels, 0, s.seeds), std::invalid_argument);
  CHECK_THROWS_AS(run_confirmation(sampler, opt, s.arms, 0, {}), std::invalid_argument);
}
