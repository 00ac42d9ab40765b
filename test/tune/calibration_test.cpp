// calibrate on the ReplaySampler: the null case, known slowdowns, a biased design that the
// calibration must expose, and the verdict against the targets.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <stdexcept>

#include "autotune/core/error.hpp"
#include "autotune/tune/calibration.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using moetune::test::make_bucket;
using moetune::test::quiet_model;

namespace {

// The calibrate default: the backbone timed at M=1 (in the token-8 bucket: with token 1 GCC 12
// reports a false -Warray-bounds inside the inlined fixture).
tune::BucketPlan decode_bucket() { return make_bucket(8, 1, 1); }

tune::CalibrationOptions options(int null_trials, int power_trials,
                                 std::vector<double> slowdowns) {
  tune::CalibrationOptions o;
  o.null_trials = null_trials;
  o.power_trials = power_trials;
  o.slowdowns = std::move(slowdowns);
  return o;
}

}  // namespace

TEST_CASE("calibrate: the null case of a quiet, unbiased model never qualifies", "[tune]") {
  auto const bucket = decode_bucket();
  tune::ReplaySampler sampler(quiet_model(11));
  auto const r = tune::calibrate(bucket, sampler, options(40, 0, {}));
  REQUIRE(r.cases.size() == 1);
  auto const& null = r.cases.front();
  CHECK(null.name == "null");
  CHECK_FALSE(null.delay_ns.has_value());
  REQUIRE(null.trials.size() == 40);
  CHECK(null.qualified() == 0);
  CHECK(null.interval().upper == Approx(1 - std::pow(0.025, 1.0 / 40)).epsilon(1e-6));
  // Every trial is a full confirmation: 4 blocks x 8 pairs, each trial on blocks of its own.
  std::set<std::uint64_t> seeds;
  for (auto const& t : null.trials) {
    CHECK(t.pairs == 32);
    CHECK(t.block_median_reductions.size() == 4);
    for (auto s : t.first_block_seeds) seeds.insert(s);
  }
  CHECK(seeds.size() == 40 * 4);
  // The arms are the baseline three times, separately built, as in a real confirmation.
  auto const base = tune::baseline_pair(bucket).name();
  auto const blocks = test::count_prefix(
      sampler.log(), "begin_block confirm 0 0 baseline=" + base + " candidate=" + base +
                         " control=" + base);
  CHECK(blocks == 40);
}

TEST_CASE("calibrate: a 3% slowdown of the baseline is found nearly every time", "[tune]") {
  auto const bucket = decode_bucket();
  tune::ReplaySampler sampler(quiet_model(12));
  auto const r = tune::calibrate(bucket, sampler, options(0, 30, {0.01, 0.03}));
  REQUIRE(r.cases.size() == 2);
  // The delay is sized from the baseline's own measured median (100 us in the model).
  CHECK(r.reference_median_us == Approx(100).epsilon(0.005));
  auto const* three = r.slowdown_case(0.03);
  REQUIRE(three != nullptr);
  REQUIRE(three->delay_ns.has_value());
  CHECK(static_cast<double>(*three->delay_ns) == Approx(3000).epsilon(0.005));
  CHECK(three->trials.size() == 30);
  CHECK(three->qualified() >= 29);
  // The baseline slowed by 3 % gives the candidate a reduction of 0.03 / 1.03.
  CHECK(three->median_gain() == Approx(0.03 / 1.03).margin(0.001));
  // At 1 % the reduction is 0.99 %, under the 1 % threshold: the gate rarely fires.
  auto const* one = r.slowdown_case(0.01);
  REQUIRE(one != nullptr);
  CHECK(one->rate() < 0.5);
  CHECK(one->rate() < three->rate());
  // The control mirrors the slowed baseline, so it stays quiet.
  CHECK(three->control_failed_trials() == 0);
}

TEST_CASE("calibrate: a placement-biased candidate arm shows as false qualifications", "[tune]") {
  // What the design exists to catch: the candidate arm consistently 2 % faster though it runs
  // the very same code. A calibration that reported a low rate here would be worthless.
  auto model = quiet_model(13);
  model.arm_bias["candidate"] = -0.02;
  tune::ReplaySampler sampler(model);
  auto const bucket = decode_bucket();
  auto const r = tune::calibrate(bucket, sampler, options(20, 20, {0.03}));
  auto const* null = r.null_case();
  REQUIRE(null != nullptr);
  CHECK(null->rate() > 0.9);
  auto const verdict = tune::judge_targets(r, {});
  CHECK_FALSE(verdict.false_rate_met);
  CHECK_FALSE(verdict.met());
}

TEST_CASE("calibrate: a biased control is re-measured once, then blocks qualification", "[tune]") {
  auto model = quiet_model(14);
  model.arm_bias["control"] = 0.02;  // the control arm alone 2 % slower: the timing is biased
  tune::ReplaySampler sampler(model);
  auto const r = tune::calibrate(decode_bucket(), sampler, options(0, 10, {0.05}));
  auto const& c = r.cases.front();
  CHECK(c.qualified() == 0);
  CHECK(c.control_failed_trials() == 10);
  CHECK(c.attempts() == 20);
  CHECK(c.control_failed_attempts() == 20);
}

TEST_CASE("calibrate: the verdict against the targets", "[tune]") {
  tune::ReplaySampler sampler(quiet_model(15));
  auto const r = tune::calibrate(decode_bucket(), sampler, options(100, 100, {0.03, 0.05}));
  auto const v = tune::judge_targets(r, {});
  CHECK(v.false_rate_met);
  CHECK(v.power_met);
  CHECK(v.met());
  REQUIRE(v.lines.size() == 2);
  CHECK(v.lines[0].find("MET") != std::string::npos);
  // Fewer null trials than the target asks for cannot meet it, whatever the rate.
  tune::CalibrationTargets strict;
  strict.min_null_trials = 101;
  CHECK_FALSE(tune::judge_targets(r, strict).false_rate_met);
  // The power target names a slowdown that was not run: not measured, not met.
  tune::CalibrationTargets other;
  other.power_slowdown = 0.02;
  auto const missing = tune::judge_targets(r, other);
  CHECK_FALSE(missing.power_met);
  CHECK(missing.lines[1].find("NOT MEASURED") != std::string::npos);
}

TEST_CASE("calibrate: rejects impossible options", "[tune]") {
  tune::ReplaySampler sampler(quiet_model());
  auto const bucket = decode_bucket();
  CHECK_THROWS_AS(tune::calibrate(bucket, sampler, options(1, 1, {1.5})), std::invalid_argument);
  CHECK_THROWS_AS(tune::calibrate(bucket, sampler, options(-1, 1, {0.03})),
                  std::invalid_argument);
}

TEST_CASE("calibrate: a baseline that fails verification stops it", "[tune]") {
  auto const bucket = decode_bucket();
  auto model = quiet_model();
  tune::Verification bad;
  bad.passed = false;
  bad.detail = "y differs";
  model.verification[tune::baseline_pair(bucket).name()] = bad;
  tune::ReplaySampler sampler(model);
  CHECK_THROWS_AS(tune::calibrate(bucket, sampler, options(2, 0, {})), Error);
}
