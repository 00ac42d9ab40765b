// The qualification protocol on replayed samples: each scenario asserts the concrete outcome
// of every candidate and the figures behind it.
#include <algorithm>

#include <catch2/catch.hpp>

#include "autotune/stats/gate.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::baseline_name;
using moetune::test::count_prefix;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::quiet_model;
using moetune::test::record;

TEST_CASE("candidate pairs: stage-one variants pair with the baseline's stage two", "[tune]") {
  auto const b = make_bucket(8, 6, 3);
  auto const pairs = make_candidate_pairs(b);
  REQUIRE(pairs.slots.size() == 4);
  REQUIRE(pairs.pairs.size() == 3);
  CHECK(pairs.pairs[0].stage2 == b.baseline.stage2);
  CHECK(pairs.pairs[0].stage1.block_k == 256);
  CHECK(pairs.slots[3].pruned.value() == "block_k must be a multiple of 32 and >= 128");
  CHECK_FALSE(pairs.slots[3].pair.has_value());
}

TEST_CASE("a candidate truly 3% faster qualifies, the others are screened out", "[tune]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;   // 3 % faster
  model.mean_us[pipeline_name(b, 1)] = 110.0;  // 10 % slower: beyond the screen margin
  model.mean_us[pipeline_name(b, 2)] = 101.0;  // 1 % slower: finalist, loses selection
  ReplaySampler sampler(model);
  ProtocolOptions opt;
  auto const r = tune_bucket(b, sampler, opt);

  REQUIRE(r.qualified);
  REQUIRE(r.winner.has_value());
  CHECK(r.pairs[*r.winner].pair.name() == pipeline_name(b, 0));
  CHECK(r.pairs[*r.winner].outcome == Outcome::qualified);
  CHECK(record(r, pipeline_name(b, 1)).outcome == Outcome::slower);
  CHECK_THAT(record(r, pipeline_name(b, 1)).reason, Catch::Contains("screen"));
  CHECK(record(r, pipeline_name(b, 2)).outcome == Outcome::slower);
  CHECK_THAT(record(r, pipeline_name(b, 2)).reason, Catch::Contains("select"));
  // Every plan candidate has exactly one outcome, the pruned one with its rule.
  REQUIRE(r.slots.size() == 4);
  CHECK(r.outcome_of(r.slots[0]) == Outcome::qualified);
  CHECK(r.outcome_of(r.slots[3]) == Outcome::pruned);
  CHECK(r.reason_of(r.slots[3]) == "block_k must be a multiple of 32 and >= 128");

  REQUIRE(r.attempts.size() == 1);
  auto const& a = r.attempts[0];
  CHECK(a.comparison.size() == 36);
  CHECK(a.control.size() == 36);
  CHECK(a.versus_control.size() == 36);
  CHECK(a.comparison_summary.wins == 36);
  CHECK(a.versus_control_summary.wins == 36);
  CHECK(a.comparison_summary.median_reduction == Approx(0.03).margin(0.002));
  CHECK(a.comparison_summary.block_median_reductions.size() == 6);
  CHECK(a.gate.passed);
  CHECK(a.gate_vs_baseline.passed);
  CHECK(a.gate_vs_control.passed);
  CHECK(a.control_verdict.passed);
  CHECK(std::fabs(a.control_summary.median_reduction) < 0.005);
  // The declared layout was measured: balanced order, half the pairs baseline first.
  CHECK(a.layout.sample_order_balanced);
  CHECK(a.layout.build_order_balanced);
  auto const first = std::count_if(a.comparison.begin(), a.comparison.end(),
                                   [](const stats::PairedSample& s) { return s.baseline_first; });
  CHECK(first == 18);
  CHECK(a.comparison[6].block == 1);
  // Isolated stage times for the row.
  REQUIRE(r.stage1_us.has_value());
  CHECK(*r.stage1_us == Approx(97.0 * 0.6).epsilon(0.01));
  CHECK(*r.stage2_us == Approx(97.0 * 0.35).epsilon(0.01));
  // Where the time went: every phase measured, confirmation included (a qualified bucket).
  CHECK(r.seconds.setup >= 0.0);
  CHECK(r.seconds.check > 0.0);
  CHECK(r.seconds.screen >= 0.0);
  CHECK(r.seconds.verify > 0.0);
  CHECK(r.seconds.select > 0.0);
  CHECK(r.seconds.confirm > 0.0);
  CHECK(r.seconds.total() == Approx(r.seconds.setup + r.seconds.check + r.seconds.screen +
                                    r.seconds.verify + r.seconds.select + r.seconds.confirm));
  // ... timed at the row's token (8), where AITER times a row; every other block at M = 6.
  CHECK(r.stage_times_M == 8);
  CHECK(count_prefix(sampler.log(), "begin_block stage_times") == 1);
  for (auto const& line : sampler.log()) {
    if (line.rfind("begin_block", 0) != 0) continue;
    CAPTURE(line);
    bool const stage_times = line.rfind("begin_block stage_times", 0) == 0;
    CHECK((line.find(" M=8") != std::string::npos) == stage_times);
  }
}

TEST_CASE("racing: a clearly slower candidate stops after two screen samples, a far slower one "
          "after one, decisions unchanged",
          "[tune]") {
  auto const b = make_bucket(8, 6, 4);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;   // 3 % faster: every sample
  model.mean_us[pipeline_name(b, 1)] = 130.0;  // 30 % slower: stopped after 2
  model.mean_us[pipeline_name(b, 2)] = 101.0;  // 1 % slower: within the race margin
  model.mean_us[pipeline_name(b, 3)] = 180.0;  // 80 % slower: the first cut, after 1
  ProtocolOptions opt;
  ReplaySampler raced_sampler(model);
  auto const raced = tune_bucket(b, raced_sampler, opt);
  auto const& slow = record(raced, pipeline_name(b, 1));
  CHECK(slow.screen_stopped);
  CHECK(slow.screen_us.size() == 2);
  CHECK(slow.outcome == Outcome::slower);
  CHECK_THAT(slow.reason, Catch::Contains("stopped after 2 of 5 samples"));
  CHECK(record(raced, pipeline_name(b, 0)).screen_us.size() == 5);
  CHECK(record(raced, pipeline_name(b, 2)).screen_us.size() == 5);
  auto const& far = record(raced, pipeline_name(b, 3));
  CHECK(far.screen_stopped);
  CHECK(far.screen_us.size() == 1);
  CHECK(far.screen_stop_margin == Approx(0.5));
  CHECK_THAT(far.reason, Catch::Contains("stopped after 1 of 5 samples") &&
                             Catch::Contains("more than 50.0% slower"));
  CHECK(slow.screen_stop_margin == Approx(0.1));
  // The exhaustive screen (margin 0) decides the same: same winner, same outcomes.
  opt.screen_race_margin = 0;
  opt.screen_first_cut_margin = 0;
  ReplaySampler full_sampler(model);
  auto const full = tune_bucket(b, full_sampler, opt);
  CHECK(record(full, pipeline_name(b, 1)).screen_us.size() == 5);
  CHECK_FALSE(record(full, pipeline_name(b, 1)).screen_stopped);
  REQUIRE(raced.qualified);
  REQUIRE(full.qualified);
  CHECK(raced.pairs[*raced.winner].pair == full.pairs[*full.winner].pair);
  for (std::size_t i = 0; i < raced.pairs.size(); ++i) CHECK(raced.pairs[i].outcome == full.pairs[i].outcome);
  // A race margin under the screen margin could stop a would-be finalist: refused.
  opt.screen_race_margin = 0.02;
  ReplaySampler s3(model);
  CHECK_THROWS_AS(tune_bucket(b, s3, opt), std::invalid_argument);
  // So could a first cut narrower than the race margin, or a negative one.
  opt.screen_race_margin = 0.10;
  opt.screen_first_cut_margin = 0.05;
  ReplaySampler s4(model);
  CHECK_THROWS_AS(tune_bucket(b, s4, opt), std::invalid_argument);
  opt.screen_first_cut_margin = -1;
  ReplaySampler s5(model);
  CHECK_THROWS_AS(tune_bucket(b, s5, opt), std::invalid_argument);
}

TEST_CASE("a candidate 0.3% faster is not_significant", "[tune]") {
  auto const b = make_bucket(8, 6, 1);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 99.7;
  ReplaySampler sampler(model);
  ProtocolOptions opt;
  opt.futility_stop = false;  // every block: the full design's summary (the stop: below)
  auto const r = tune_bucket(b, sampler, opt);
  REQUIRE(r.winner.has_value());
  CHECK_FALSE(r.qualified);
  auto const& w = r.pairs[*r.winner];
  CHECK(w.outcome == Outcome::not_significant);
  CHECK_THAT(w.reason, Catch::Contains("median paired reduction") && Catch::Contains("< 1.000%"));
  REQUIRE(r.attempts.size() == 1);
  CHECK(r.attempts[0].comparison_summary.median_reduction == Approx(0.003).margin(0.0015));
  CHECK(r.attempts[0].control_verdict.passed);
  CHECK_FALSE(r.attempts[0].stopped_after_blocks.has_value());
  CHECK_FALSE(r.stage1_us.has_value());
}

TEST_CASE("futility stop: a 0.3% gain ends confirmation early with the full design's verdict",
          "[tune]") {
  auto const b = make_bucket(8, 6, 1);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 99.7;
  ReplaySampler full_sampler(model);
  ProtocolOptions opt;
  opt.futility_stop = false;
  auto const full = tune_bucket(b, full_sampler, opt);
  ReplaySampler stop_sampler(model);
  auto const r = tune_bucket(b, stop_sampler, ProtocolOptions{});  // the default: the stop
  REQUIRE(r.winner.has_value());
  CHECK(r.pairs[*r.winner].pair == full.pairs[*full.winner].pair);
  CHECK(r.pairs[*r.winner].outcome == full.pairs[*full.winner].outcome);
  CHECK(r.pairs[*r.winner].outcome == Outcome::not_significant);
  REQUIRE(r.attempts.size() == 1);
  auto const& a = r.attempts[0];
  REQUIRE(a.stopped_after_blocks.has_value());
  CHECK(*a.stopped_after_blocks < 6);
  CHECK(static_cast<int>(a.rounds.size()) == 6 * *a.stopped_after_blocks);
  CHECK(static_cast<int>(count_prefix(stop_sampler.log(), "begin_block confirm")) == *a.stopped_after_blocks);
  CHECK_FALSE(a.gate.passed);
  CHECK(a.gate.required_wins == stats::required_wins(opt.gate, 36));  // the declared design's
  CHECK_THAT(r.pairs[*r.winner].reason,
             Catch::Contains("stopped after") && Catch::Contains("can no longer pass"));
  CHECK_THAT(r.summary, Catch::Contains("futility stop after"));
  // The manifest declared the stop before confirmation.
  REQUIRE(r.manifest.has_value());
  CHECK_THAT(r.manifest->stopping, Catch::Contains("futility stop"));
}

TEST_CASE("faster on average but not in one block is rejected", "[tune]") {
  auto const b = make_bucket(8, 6, 1);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;  // wins screening and selection
  // Confirmation from recorded samples (one per arm and round, in round order): baseline and
  // control 100 µs throughout; the candidate 97 µs except in block 2, where it is alternately
  // 99.9 and 100.1 (3 wins, 3 losses, block median exactly 0). Overall: median 3 %, 33 of 36
  // wins — only the every-block rule fails.
  std::vector<double> cand;
  for (int i = 0; i < 36; ++i) {
    cand.push_back(i / 6 == 2 ? (i % 2 == 0 ? 99.9 : 100.1) : 97.0);
  }
  model.recorded["confirm:candidate"] = cand;
  model.recorded["confirm:baseline"] = std::vector<double>(36, 100.0);
  model.recorded["confirm:control"] = std::vector<double>(36, 100.0);
  ReplaySampler sampler(model);
  ProtocolOptions opt;
  opt.futility_stop = false;
  auto const r = tune_bucket(b, sampler, opt);
  REQUIRE(r.attempts.size() == 1);
  auto const& a = r.attempts[0];
  CHECK(a.comparison_summary.wins == 33);
  CHECK(a.comparison_summary.wins >= stats::required_wins(opt.gate, 36));
  CHECK(a.comparison_summary.median_reduction == Approx(0.03));
  CHECK(a.comparison_summary.block_median_reductions[2] == Approx(0.0).margin(1e-12));
  CHECK_FALSE(a.gate.passed);
  CHECK_FALSE(r.qualified);
  auto const& w = r.pairs[*r.winner];
  CHECK(w.outcome == Outcome::not_significant);
  CHECK_THAT(w.reason, Catch::Contains("block 2 median reduction"));
  SECTION("with the futility stop: ends after block 2, the block that failed, same verdict") {
    ReplaySampler stop_sampler(model);
    auto const s = tune_bucket(b, stop_sampler, ProtocolOptions{});
    REQUIRE(s.attempts.size() == 1);
    REQUIRE(s.attempts[0].stopped_after_blocks.has_value());
    CHECK(*s.attempts[0].stopped_after_blocks == 3);
    CHECK(s.attempts[0].rounds.size() == 18);
    CHECK_FALSE(s.qualified);
    CHECK(s.pairs[*s.winner].outcome == Outcome::not_significant);
    CHECK_THAT(s.pairs[*s.winner].reason, Catch::Contains("measured block 2 has median reduction"));
  }
}

TEST_CASE("futility stop: a biased control makes the gate hopeless, is measured again, then "
          "control_failed",
          "[tune]") {
  // The control arm 3 % fast: against it a truly 3 % faster candidate gains nothing, so the
  // gate against the control cannot pass after one block; the control of that block fails
  // too (baseline vs control -3 %), so the bucket is measured again (not dismissed as a
  // candidate without gain), stops again, and ends control_failed.
  auto const b = make_bucket(8, 6, 1);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;
  model.arm_bias["control"] = -0.03;
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  REQUIRE(r.attempts.size() == 2);
  for (auto const& a : r.attempts) {
    REQUIRE(a.stopped_after_blocks.has_value());
    CHECK(*a.stopped_after_blocks == 1);
    CHECK_THAT(a.stop_reason, Catch::Contains("against the control"));
    CHECK_FALSE(a.control_verdict.passed);
    // Neither side passed: the partial figures are marked as partial.
    CHECK_FALSE(a.gate_vs_baseline.passed);
    CHECK_FALSE(a.gate_vs_control.passed);
    CHECK(a.gate_vs_baseline.required_wins == 29);
    CHECK_THAT(a.gate_vs_baseline.reasons.front(), Catch::StartsWith("after 6 of 36 pairs: "));
  }
  CHECK(count_prefix(sampler.log(), "begin_block confirm 0") == 1);
  CHECK(count_prefix(sampler.log(), "begin_block confirm 1") == 1);
  CHECK_FALSE(r.qualified);
  CHECK(r.pairs[*r.winner].outcome == Outcome::control_failed);
  CHECK_THAT(r.pairs[*r.winner].reason, Catch::Contains("futility stop after 1 of 6 blocks"));
}

TEST_CASE("a placement-biased control fails, is re-measured once, then control_failed",
          "[tune]") {
  auto const b = make_bucket(8, 6, 1);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;  // would qualify with an honest control
  model.arm_bias["control"] = 0.02;           // the control's own instance is 2 % slower
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  REQUIRE(r.attempts.size() == 2);  // the first measurement and exactly one re-measure
  for (auto const& a : r.attempts) {
    CHECK_FALSE(a.control_verdict.passed);
    CHECK(a.control_summary.losses == 36);
    CHECK(a.control_summary.median_reduction == Approx(-0.02).margin(0.003));
  }
  CHECK(r.attempts[1].attempt == 1);
  CHECK(count_prefix(sampler.log(), "begin_block confirm 0") == 6);
  CHECK(count_prefix(sampler.log(), "begin_block confirm 1") == 6);
  CHECK(count_prefix(sampler.log(), "begin_block confirm") == 12);
  CHECK_FALSE(r.qualified);
  CHECK(r.pairs[*r.winner].outcome == Outcome::control_failed);
  CHECK_THAT(r.pairs[*r.winner].reason, Catch::Contains("2 attempt(s)"));
  CHECK_FALSE(r.stage1_us.has_value());  // no row: no stage times measured for one
  CHECK(count_prefix(sampler.log(), "begin_block stage_times") == 0);
}

TEST_CASE("a control that fails once and then passes allows the bucket to qualify", "[tune]") {
  auto const b = make_bucket(8, 6, 1);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;
  // Recorded confirmation for both attempts (served in call order): the control is 2 %
  // slower in every round of attempt 0 and identical in attempt 1. Each arm is sampled once
  // per round, 36 times per attempt.
  std::vector<double> control(36, 102.0);
  control.resize(72, 100.0);
  model.recorded["confirm:control"] = control;
  model.recorded["confirm:baseline"] = std::vector<double>(72, 100.0);
  model.recorded["confirm:candidate"] = std::vector<double>(72, 97.0);
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  REQUIRE(r.attempts.size() == 2);
  CHECK_FALSE(r.attempts[0].control_verdict.passed);
  CHECK(r.attempts[0].control_summary.median_reduction == Approx(-0.02));
  CHECK(r.attempts[1].control_verdict.passed);
  CHECK(r.attempts[1].control_summary.median_reduction == 0.0);
  CHECK(r.attempts[1].comparison_summary.median_reduction == Approx(0.03));
  CHECK(r.qualified);
  CHECK(r.pairs[*r.winner].outcome == Outcome::qualified);
}

TEST_CASE("wrong_result and compile_error candidates never reach timing", "[tune]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 90.0;  // would be by far the fastest
  Verification bad;
  bad.passed = false;
  bad.detail = "M=33 uniform: 17 of 5120 elements out of tolerance";
  bad.max_abs = 0.5;
  bad.failure = Outcome::wrong_result;
  model.verification[pipeline_name(b, 0)] = bad;
  model.preparation[pipeline_name(b, 1)] = {Outcome::compile_error, "ptxas: too many resources"};
  model.mean_us[pipeline_name(b, 2)] = 97.0;
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});

  auto const& wrong = record(r, pipeline_name(b, 0));
  CHECK(wrong.outcome == Outcome::wrong_result);
  CHECK_THAT(wrong.reason, Catch::Contains("17 of 5120") && Catch::Contains("max abs 0.5"));
  CHECK(record(r, pipeline_name(b, 1)).outcome == Outcome::compile_error);
  CHECK(record(r, pipeline_name(b, 1)).reason == "ptxas: too many resources");
  for (auto const& line : sampler.log()) {
    bool const timing = line.rfind("begin_block", 0) == 0;
    if (!timing) continue;
    CHECK(line.find(pipeline_name(b, 0)) == std::string::npos);
    CHECK(line.find(pipeline_name(b, 1)) == std::string::npos);
  }
  // The compile error is never checked; the wrong one fails its quick check and never
  // reaches the full gates (those are for finalists).
  CHECK(count_prefix(sampler.log(), "quick_check " + pipeline_name(b, 1)) == 0);
  CHECK(count_prefix(sampler.log(), "verify " + pipeline_name(b, 1)) == 0);
  CHECK(count_prefix(sampler.log(), "quick_check " + pipeline_name(b, 0)) == 1);
  CHECK(count_prefix(sampler.log(), "verify " + pipeline_name(b, 0)) == 0);
  // The winner passed the full gates before selection.
  CHECK(count_prefix(sampler.log(), "verify " + pipeline_name(b, 2)) == 1);
  CHECK(r.qualified);
  CHECK(r.pairs[*r.winner].pair.name() == pipeline_name(b, 2));
}

TEST_CASE("a finalist that fails the full gates is wrong_result and the next takes its place",
          "[tune]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 90.0;  // fastest, right at its own M, wrong at M=257
  model.mean_us[pipeline_name(b, 1)] = 96.0;
  Verification boundary;
  boundary.passed = false;
  boundary.detail = "M=257 uniform: 40 of 5120 elements out of tolerance";
  boundary.max_abs = 0.25;
  model.full_verification[pipeline_name(b, 0)] = boundary;
  ReplaySampler sampler(model);
  ProtocolOptions options;
  options.finalists = 1;
  auto const r = tune_bucket(b, sampler, options);

  auto const& wrong = record(r, pipeline_name(b, 0));
  CHECK(wrong.outcome == Outcome::wrong_result);
  CHECK_THAT(wrong.reason, Catch::Contains("finalist verification") && Catch::Contains("M=257"));
  // It was timed in screening (it passed its quick check) but never selected or confirmed.
  CHECK(count_prefix(sampler.log(), "quick_check " + pipeline_name(b, 0)) == 1);
  CHECK(count_prefix(sampler.log(), "verify " + pipeline_name(b, 0)) == 1);
  for (auto const& line : sampler.log()) {
    if (line.rfind("begin_block select", 0) == 0 || line.rfind("begin_block confirm", 0) == 0) {
      CHECK(line.find(pipeline_name(b, 0)) == std::string::npos);
    }
  }
  REQUIRE(r.winner.has_value());
  CHECK(r.pairs[*r.winner].pair.name() == pipeline_name(b, 1));
  CHECK(r.qualified);
}

TEST_CASE("a launch error while timing costs that candidate only", "[tune]") {
  auto const b = make_bucket(8, 6, 2);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;
  model.sample_failure[pipeline_name(b, 1)] = Outcome::launch_error;
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  CHECK(record(r, pipeline_name(b, 1)).outcome == Outcome::launch_error);
  CHECK(r.qualified);
}

TEST_CASE("the manifest is declared before the first confirmation sample", "[tune]") {
  auto const b = make_bucket(8, 6, 2);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;
  ReplaySampler sampler(model);
  ProtocolOptions opt;
  opt.seed = 42;
  std::size_t manifest_at = 0;
  int manifests = 0;
  nlohmann::json declared;
  TuneHooks hooks;
  hooks.on_manifest = [&](const Manifest& m) {
    ++manifests;
    manifest_at = sampler.log().size();  // every call logged so far came before it
    declared = nlohmann::json::parse(to_json(m).dump());  // serialisable as declared
  };
  auto const r = tune_bucket(b, sampler, opt, hooks);
  REQUIRE(manifests == 1);
  auto const& log = sampler.log();
  auto const first_confirm = std::find_if(log.begin(), log.end(), [](const std::string& l) {
    return l.rfind("sample confirm", 0) == 0 || l.rfind("begin_block confirm", 0) == 0;
  });
  REQUIRE(first_confirm != log.end());
  CHECK(static_cast<std::size_t>(first_confirm - log.begin()) >= manifest_at);
  // Selection happened before the declaration.
  std::size_t last_select = 0;
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i].rfind("sample select", 0) == 0) last_select = i;
  }
  CHECK(last_select < manifest_at);

  CHECK(declared["candidate"] == pipeline_name(b, 0));
  CHECK(declared["baseline"] == baseline_name(b));
  CHECK(declared["pairs"] == 36);
  CHECK(declared["blocks"] == 6);
  CHECK(declared["pairs_per_block"] == 6);
  CHECK(declared["required_wins"] == stats::required_wins(opt.gate, 36));
  CHECK(declared["required_wins"] == 29);
  CHECK(declared["gate"]["min_median_reduction"] == 0.01);
  CHECK(declared["repeats"] == 16);
  REQUIRE(declared["block_seeds"].size() == 2);  // the re-measure's seeds are declared too
  CHECK(declared["block_seeds"][1][3] == block_seed(42, Phase::confirm, 1, 3));
  // Build order, placement pad and sample order of every block, re-measure included.
  REQUIRE(declared["layouts"].size() == 2);
  CHECK(declared["layouts"][1] == to_json(plan_attempt(42, 1, 6, 6)));
  CHECK(declared["layouts"][0]["blocks"][5]["sample_order"].size() == 6);
  CHECK(declared["false_qualification_rate"].is_null());
  // The declaration is what the result keeps.
  CHECK(to_json(*r.manifest) == declared);
}

TEST_CASE("a bucket where nothing beats the baseline selects no winner", "[tune]") {
  auto const b = make_bucket(8, 6, 2);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 102.0;
  model.mean_us[pipeline_name(b, 1)] = 103.0;
  ReplaySampler sampler(model);
  int manifests = 0;
  TuneHooks hooks;
  hooks.on_manifest = [&](const Manifest&) { ++manifests; };
  auto const r = tune_bucket(b, sampler, ProtocolOptions{}, hooks);
  CHECK_FALSE(r.winner.has_value());
  CHECK(manifests == 0);
  CHECK(count_prefix(sampler.log(), "begin_block confirm") == 0);
  CHECK(record(r, pipeline_name(b, 0)).outcome == Outcome::slower);
  CHECK_THAT(record(r, pipeline_name(b, 0)).reason, Catch::Contains("not below the baseline"));
  CHECK(record(r, pipeline_name(b, 1)).outcome == Outcome::slower);
}

TEST_CASE("replay model reads from JSON", "[tune]") {
  auto const j = nlohmann::json::parse(R"({
    "seed": 3, "noise": 0.001, "mean_us": {"p": 97.5}, "arm_bias": {"control": 0.02},
    "confirm_block_bias": {"p": {"2": 0.05}},
    "verification": {"q": {"passed": false, "detail": "NaN in y", "failure": "wrong_result"}},
    "preparation": {"r": {"status": "timeout", "detail": "hung"}}
  })");
  auto const m = replay_model_from_json(j);
  CHECK(m.seed == 3);
  CHECK(m.mean_us.at("p") == 97.5);
  CHECK(m.arm_bias.at("control") == 0.02);
  CHECK(m.confirm_block_bias.at("p").at(2) == 0.05);
  CHECK_FALSE(m.verification.at("q").passed);
  CHECK(m.preparation.at("r").status == Outcome::timeout);
  CHECK_THROWS(replay_model_from_json(nlohmann::json::parse(
      R"({"preparation": {"r": {"status": "exploded"}}})")));
}
