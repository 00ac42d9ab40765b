// GpuSampler on a real GPU, the way the protocol drives it (sampler.hpp): begin_bucket,
// prepare, quick_check, verify, then blocks of three arms and samples; and verify's token
// range: both ends of what the bucket's row serves, under the run's routing.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/search/default_config.hpp"
#include "autotune/search/test_break.hpp"
#include "autotune/search/validity.hpp"
#include "autotune/measure/gpu_sampler.hpp"

using namespace moetune;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

gpu::Device& device() {
  static gpu::Device instance(0);
  return instance;
}

search::Arch arch() { return search::parse_arch(device().info().arch); }

exec::UnitCompiler& compiler() {
  static exec::UnitCompiler instance(arch());
  return instance;
}

// A small A16W4 layer (fast weights and reference), bucket `token` timed at M.
measure::BucketPlan small_bucket(std::int64_t token, std::int64_t M) {
  measure::BucketPlan b;
  b.key.token = token;
  b.M = M;
  b.shape.hidden = 1024;
  b.shape.inter = 256;
  b.shape.experts = 32;
  b.shape.topk = 4;
  b.shape.dtype = moe::DtypePath::a16w4;
  b.shape.tokens = M;
  b.baseline = search::default_config(b.shape, arch(), M);
  return b;
}

measure::TunePair baseline_pair(const measure::BucketPlan& b) {
  return {b.baseline.stage1, b.baseline.stage2};
}

// The baseline with the other stage-two mode (same block_m, so the pair is valid), or the
// baseline itself where the rules refuse it: either way a separately built arm.
measure::TunePair candidate_pair(const measure::BucketPlan& b) {
  auto s2 = b.baseline.stage2;
  s2.stage2_mode = s2.stage2_mode == search::Stage2Mode::reduce ? search::Stage2Mode::atomic
                                                                : search::Stage2Mode::reduce;
  if (search::check_config(s2, arch(), b.shape)) s2 = b.baseline.stage2;
  return {b.baseline.stage1, s2};
}

// begin_bucket, then the baseline prepared and quick-checked (which must pass: the timed M
// is right in every test here), as the protocol does before any verify.
measure::TunePair quick_checked_baseline(measure::GpuSampler& sampler, const measure::BucketPlan& bucket,
                                      const std::string& expected_check) {
  sampler.begin_bucket(bucket);
  auto const pair = baseline_pair(bucket);
  REQUIRE(sampler.prepare(pair).ok());
  auto const quick = sampler.quick_check(pair);
  INFO(quick.detail);
  CHECK(quick.passed);
  CHECK_THAT(quick.detail, StartsWith(expected_check + ": "));
  return pair;
}

}  // namespace

TEST_CASE("GpuSampler kept screen arms: built once across kept blocks, released on request, "
          "fresh again in a block that is not kept",
          "[gpu][tune][sampler]") {
  measure::GpuSampler sampler(device(), arch(), compiler());
  std::vector<std::string> built;
  sampler.set_build_observer([&](const std::string& arm) { built.push_back(arm); });
  auto const bucket = small_bucket(16, 12);
  auto const base = quick_checked_baseline(sampler, bucket, "M=12 uniform");
  auto const cand = candidate_pair(bucket);
  REQUIRE(sampler.prepare(cand).ok());

  measure::BlockSpec screen;
  screen.phase = measure::Phase::screen;
  screen.seed = 5;
  screen.keep_arms = true;
  screen.warmup_replays = 1;
  screen.repeats = 8;
  screen.arms = {measure::Arm("baseline", base), measure::Arm("first", cand)};
  sampler.begin_block(screen);
  CHECK(built == std::vector<std::string>{"baseline", "first"});
  for (auto const* arm : {"baseline", "first"}) {
    double const us = sampler.sample_us(arm, measure::TimedUnit::full);
    CHECK(std::isfinite(us));
    CHECK(us > 0.0);
  }
  sampler.release_arm("first");
  CHECK_THROWS(sampler.sample_us("first", measure::TimedUnit::full));

  // The next screen block: the baseline's arm is used again as it is, only the new one built.
  screen.index = 1;
  screen.seed = 6;
  screen.arms = {measure::Arm("baseline", base), measure::Arm("second", cand)};
  built.clear();
  sampler.begin_block(screen);
  CHECK(built == std::vector<std::string>{"second"});
  CHECK(std::isfinite(sampler.sample_us("baseline", measure::TimedUnit::full)));
  CHECK(std::isfinite(sampler.sample_us("second", measure::TimedUnit::full)));
  CHECK(sampler.block_tokens() == 12);

  // A block that is not kept (selection, confirmation) builds every arm anew.
  measure::BlockSpec fresh;
  fresh.phase = measure::Phase::select;
  fresh.seed = 7;
  fresh.arms = {measure::Arm("baseline", base)};
  built.clear();
  sampler.begin_block(fresh);
  CHECK(built == std::vector<std::string>{"baseline"});
  CHECK_THROWS(sampler.sample_us("second", measure::TimedUnit::full));
  CHECK(std::isfinite(sampler.sample_us("baseline", measure::TimedUnit::full)));
}

TEST_CASE("GpuSampler smoke: prepare, quick_check, verify, a block of three arms, samples",
          "[gpu][tune][sampler]") {
  measure::GpuSampler sampler(device(), arch(), compiler());
  auto const bucket = small_bucket(16, 12);
  sampler.begin_bucket(bucket);
  auto const base = baseline_pair(bucket);
  auto const cand = candidate_pair(bucket);
  bool first = true;
  for (auto const& pair : {base, cand}) {
    INFO(pair.name());
    auto const prep = sampler.prepare(pair);
    INFO(prep.detail);
    REQUIRE(prep.ok());
    auto const quick = sampler.quick_check(pair);
    INFO(quick.detail);
    CHECK(quick.passed);
    CHECK(quick.checks == 1);
    auto const full = sampler.verify(pair, base);
    INFO(full.detail);
    CHECK(full.passed);
    // Uniform at the timed M (12), the lowest (9) and highest (16) M bucket 16 serves and the
    // six boundaries; concentrated at the three bucket M; one graph replay. The run's routing
    // is uniform: nothing more. (A pair that passed before for this shape skips the
    // boundaries, and the candidate may be the baseline itself: the first pair only.)
    if (first) CHECK(full.checks == 9 + 3 + 1);
    CHECK(std::isfinite(full.max_abs_vs_baseline));
    first = false;
  }

  for (int block = 0; block < 2; ++block) {
    measure::BlockSpec spec;
    spec.phase = measure::Phase::confirm;
    spec.index = block;
    spec.seed = 100 + static_cast<std::uint64_t>(block);
    spec.arms = {measure::Arm("baseline", base), measure::Arm("candidate", cand), measure::Arm("control", base)};
    spec.units = {measure::TimedUnit::full, measure::TimedUnit::stage1, measure::TimedUnit::stage2};
    sampler.begin_block(spec);
    for (auto const* arm : {"baseline", "candidate", "control"}) {
      for (int i = 0; i < 3; ++i) {
        INFO("block " << block << " arm " << arm << " sample " << i);
        double const full = sampler.sample_us(arm, measure::TimedUnit::full);
        double const stage2 = sampler.sample_us(arm, measure::TimedUnit::stage2);
        // Stage one alone is a difference of two replays, clamped at 0: finite, not negative.
        double const stage1 = sampler.sample_us(arm, measure::TimedUnit::stage1);
        CHECK(std::isfinite(full));
        CHECK(full > 0.0);
        CHECK(std::isfinite(stage2));
        CHECK(stage2 > 0.0);
        CHECK(std::isfinite(stage1));
        CHECK(stage1 >= 0.0);
        CHECK(full < 1e6);  // a microsecond figure, not cycles or nanoseconds gone wrong
      }
    }
    CHECK_THROWS(sampler.sample_us("no such arm", measure::TimedUnit::full));
    CHECK(sampler.block_tokens() == 12);  // the bucket's M
  }

  // The stage-times block runs at the row's token (BlockSpec::M), as AITER times a row: its
  // inputs have 16 tokens and both stages time; the next block is back at the bucket's M.
  measure::BlockSpec at_token;
  at_token.phase = measure::Phase::stage_times;
  at_token.seed = 300;
  at_token.M = bucket.key.token;
  at_token.arms = {measure::Arm("candidate", cand)};
  at_token.units = {measure::TimedUnit::stage1, measure::TimedUnit::stage2};
  sampler.begin_block(at_token);
  CHECK(sampler.block_tokens() == 16);
  double const s1 = sampler.sample_us("candidate", measure::TimedUnit::stage1);
  double const s2 = sampler.sample_us("candidate", measure::TimedUnit::stage2);
  CHECK((std::isfinite(s1) && s1 >= 0.0));
  CHECK((std::isfinite(s2) && s2 > 0.0));
  at_token.M.reset();
  sampler.begin_block(at_token);
  CHECK(sampler.block_tokens() == 12);
  at_token.M = 0;
  CHECK_THROWS(sampler.begin_block(at_token));
}

TEST_CASE("GpuSampler verify also checks under the run's routing at every bucket M",
          "[gpu][tune][sampler]") {
  measure::GpuSamplerOptions options;
  options.routing = moe::parse_routing_spec("zipf:1.2");
  measure::GpuSampler sampler(device(), arch(), compiler(), options);
  auto const base = quick_checked_baseline(sampler, small_bucket(64, 40), "M=40 zipf:1.2");
  auto const v = sampler.verify(base, base);
  INFO(v.detail);
  CHECK(v.passed);
  // M = 40 (timed), 33 (lowest served, also a boundary) and 64 (highest): uniform at those and
  // the other five boundaries (8), concentrated (3), zipf (3), one graph replay.
  CHECK(v.checks == 8 + 3 + 3 + 1);
}

TEST_CASE("GpuSampler verify fails a pair that breaks at the top of the bucket's range",
          "[gpu][tune][sampler][break]") {
  // Wrong only when M > 100: right at the timed M (40) and the lowest served M (65), wrong at
  // the highest M bucket 128 serves — the first failing check in M order.
  exec::UnitCompiler broken(arch(), std::filesystem::path{}, true,
                            {search::TestBreak::wrong_output_above_m, 100});
  measure::GpuSampler sampler(device(), arch(), broken);
  // The timed M alone cannot see it: quick_check passes.
  auto const pair = quick_checked_baseline(sampler, small_bucket(128, 40), "M=40 uniform");
  auto const v = sampler.verify(pair, pair);
  INFO(v.detail);
  CHECK_FALSE(v.passed);
  CHECK(v.failure == measure::Outcome::wrong_result);
  CHECK_THAT(v.detail, StartsWith("M=128 uniform (highest M bucket 128 serves): "));
  CHECK_THAT(v.detail, Contains(std::string(exec::gate_names::output) + ": FAIL 1/"));
}
