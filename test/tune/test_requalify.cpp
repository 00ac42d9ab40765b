// Requalification: a tuned row's bucket rebuilt with its exact pair (fixed_pair), rows that
// are not ours skipped with the reason, and each protocol ending mapped to its verdict.
#include <catch2/catch.hpp>

#include "autotune/tune/requalify.hpp"
#include "autotune/tune/tuned_rows.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::quiet_model;

namespace {

// A row as `tune` writes it: bucket 8 (M=6) qualified with a stage one 3 % faster.
io::FmoeRow tuned_row_of_bucket8() {
  auto const b = make_bucket(8, 6, 2);
  auto model = quiet_model(11);
  model.mean_us[pipeline_name(b, 0)] = 97.0;
  ReplaySampler s(model);
  auto const r = tune_bucket(b, s, ProtocolOptions{});
  REQUIRE(r.qualified);
  return tuned_row(r, {"sm_90", 132}).value();
}

RequalifyResult requalify_with(const BucketPlan& plan, ReplayModel model) {
  ReplaySampler s(std::move(model));
  return requalify_verdict(tune_bucket(plan, s, ProtocolOptions{}));
}

}  // namespace

TEST_CASE("fixed pair: exactly that pipeline is timed, nothing else", "[tune][requalify]") {
  auto b = make_bucket(8, 6, 3);
  auto const stage1 = b.candidates[1].config;
  b.fixed_pair = BucketPlan::FixedPair{stage1, b.baseline.stage2};
  b.candidates.push_back({b.baseline.stage2, std::nullopt});
  auto const pairs = make_candidate_pairs(b);
  REQUIRE(pairs.pairs.size() == 1);
  CHECK(pairs.pairs[0] == TunePair{stage1, b.baseline.stage2});
  REQUIRE(pairs.slots.size() == b.candidates.size());
  CHECK(pairs.slots[1].pair == std::optional<std::size_t>(0));
  CHECK(pairs.slots.back().pair == std::optional<std::size_t>(0));
  CHECK_THAT(pairs.slots[0].pruned.value(), Catch::Contains("not part of the fixed pair"));
  CHECK(pairs.slots[3].pruned.value() == "block_k must be a multiple of 32 and >= 128");

  // The default itself: no pipeline to time (it cannot beat itself).
  b.fixed_pair = BucketPlan::FixedPair{b.baseline.stage1, b.baseline.stage2};
  b.candidates = {{b.baseline.stage1, std::nullopt}, {b.baseline.stage2, std::nullopt}};
  auto const none = make_candidate_pairs(b);
  CHECK(none.pairs.empty());
  CHECK(none.slots[0].is_baseline_pair);
  CHECK(none.slots[1].is_baseline_pair);
}

TEST_CASE("requalify_case rebuilds the bucket of a tuned row or says why not",
          "[tune][requalify]") {
  auto const row = tuned_row_of_bucket8();
  auto const c = requalify_case(row, search::Arch::sm_90, "sm_90", 132);
  REQUIRE(c.plan.has_value());
  CHECK(c.skip_reason.empty());
  CHECK(c.plan->M == 8);  // a tuned row records no actual_m: its token
  CHECK(c.plan->fixed_pair->stage1.name() == row.tuned->kernel_name1);
  CHECK(c.plan->fixed_pair->stage2.name() == row.tuned->kernel_name2);
  CHECK(c.plan->candidates.size() == 2);
  CHECK(c.table_us == row.tuned->us);

  auto other_gfx = row;
  other_gfx.key.gfx = "gfx950";
  CHECK_THAT(requalify_case(other_gfx, search::Arch::sm_90, "sm_90", 132).skip_reason,
             Catch::Contains("a row for gfx950, this device is sm_90"));
  CHECK_THAT(requalify_case(row, search::Arch::sm_90, "sm_90", 114).skip_reason,
             Catch::Contains("a row for 132 CUs, this device has 114"));
  auto ck = row;
  ck.tuned->kernel_name1 = "moe_ck2stages_gemm1_256x32x64x128_1x4_MulABScaleShuffled_v3";
  auto const skipped = requalify_case(ck, search::Arch::sm_90, "sm_90", 132);
  CHECK_FALSE(skipped.plan.has_value());
  CHECK_THAT(skipped.skip_reason, Catch::StartsWith("not a moe-tune kernel, skipped"));
  auto swapped = row;
  std::swap(swapped.tuned->kernel_name1, swapped.tuned->kernel_name2);
  CHECK_THAT(requalify_case(swapped, search::Arch::sm_90, "sm_90", 132).skip_reason,
             Catch::Contains("stage-2 kernel in the stage-1 column"));
}

TEST_CASE("each protocol ending is its requalify verdict", "[tune][requalify]") {
  auto const c = requalify_case(tuned_row_of_bucket8(), search::Arch::sm_90, "sm_90", 132);
  REQUIRE(c.plan.has_value());
  auto const pair = TunePair{c.plan->fixed_pair->stage1, c.plan->fixed_pair->stage2}.name();

  SECTION("still 3 % faster: still_qualifies") {
    auto m = quiet_model(5);
    m.mean_us[pair] = 97.0;
    auto const r = requalify_with(*c.plan, m);
    CHECK(r.verdict == RequalifyVerdict::still_qualifies);
    CHECK_THAT(r.detail, Catch::Contains("median paired reduction"));
    REQUIRE(r.bucket.has_value());
    CHECK(r.bucket->qualified);
  }
  SECTION("the gain is gone: no_longer_qualifies") {
    auto const r = requalify_with(*c.plan, quiet_model(5));
    CHECK(r.verdict == RequalifyVerdict::no_longer_qualifies);
    CHECK_THAT(r.detail, Catch::Contains("µs"));
  }
  SECTION("a new compiler rejects it: does_not_compile") {
    auto m = quiet_model(5);
    m.preparation[pair] = {Outcome::compile_error, "error: too many resources"};
    auto const r = requalify_with(*c.plan, m);
    CHECK(r.verdict == RequalifyVerdict::does_not_compile);
    CHECK_THAT(r.detail, Catch::Contains("too many resources"));
  }
  SECTION("it computes wrong: wrong_result") {
    auto m = quiet_model(5);
    Verification v;
    v.passed = false;
    v.detail = "output mismatch";
    m.verification[pair] = v;
    CHECK(requalify_with(*c.plan, m).verdict == RequalifyVerdict::wrong_result);
  }
  SECTION("a biased control: control_failed") {
    auto m = quiet_model(5);
    m.mean_us[pair] = 97.0;
    m.arm_bias["control"] = -0.03;
    CHECK(requalify_with(*c.plan, m).verdict == RequalifyVerdict::control_failed);
  }
  SECTION("a launch error: failed_to_run") {
    auto m = quiet_model(5);
    m.sample_failure[pair] = Outcome::launch_error;
    CHECK(requalify_with(*c.plan, m).verdict == RequalifyVerdict::failed_to_run);
  }
}

TEST_CASE("compile failures and the report", "[tune][requalify]") {
  auto const f = compile_failure("moetune_s1_x", "line 1: error: bad\nline 2: more");
  CHECK(f.verdict == RequalifyVerdict::does_not_compile);
  CHECK(f.detail == "moetune_s1_x: line 1: error: bad");
  std::vector<RequalifyRow> rows(2);
  rows[0].row.line = 2;
  rows[0].row.key.token = 8;
  rows[0].row.plan = BucketPlan{};
  rows[0].row.plan->M = 6;
  rows[0].result = f;
  rows[1].row.line = 3;
  rows[1].row.key.token = 16;
  rows[1].row.skip_reason = "not a moe-tune kernel, skipped (x | y)";
  auto const md = requalify_markdown(rows, "t");
  CHECK_THAT(md, Catch::Contains("| 2 | 8 | 6 | — | does_not_compile | moetune_s1_x: line 1: error: bad |"));
  CHECK_THAT(md, Catch::Contains("| 3 | 16 | — | — | skipped | not a moe-tune kernel, skipped (x   y) |"));
  auto const j = requalify_json(rows);
  CHECK(j[0]["verdict"] == "does_not_compile");
  CHECK(j[1]["detail"] == "not a moe-tune kernel, skipped (x | y)");
}
