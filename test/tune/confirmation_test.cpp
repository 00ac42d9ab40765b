// run_confirmation, the design shared by tune and calibrate: the declared layout is what is
// measured (build order, placement pad, sample order), the three paired views come from the
// same rounds, candidate faults are returned and baseline faults propagated; and the layout's
// balance, which is what keeps an order or allocation effect from becoming a bias.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "autotune/tune/calibration.hpp"
#include "autotune/tune/confirmation.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::make_bucket;
using moetune::test::quiet_model;

namespace {

struct Setup {
  BucketPlan bucket = make_bucket(8, 6, 1);
  TunePair base = baseline_pair(bucket);
  TunePair cand{bucket.candidates.at(0).config, bucket.baseline.stage2};
  ConfirmArms arms{{"baseline", base}, {"candidate", cand}, {"control", base}};
};

// The label of each sample_us call and a "|label,label,label" entry per begin_block, in order.
std::vector<std::string> events(const ReplaySampler& sampler) {
  std::vector<std::string> out;
  for (auto const& line : sampler.log()) {
    if (line.rfind("sample confirm ", 0) == 0) {
      out.push_back(line.substr(15, line.find(' ', 15) - 15));
    } else if (line.rfind("begin_block confirm", 0) == 0) {
      std::string built = "|";
      // "begin_block confirm A I label=pair label=pair label=pair"
      std::size_t pos = 0;
      for (int field = 0; field < 4; ++field) pos = line.find(' ', pos) + 1;
      while (pos != 0 && pos < line.size()) {
        auto const eq = line.find('=', pos);
        built += (built.size() > 1 ? "," : "") + line.substr(pos, eq - pos);
        auto const next = line.find(' ', eq);
        pos = next == std::string::npos ? 0 : next + 1;
      }
      out.push_back(built);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("run_confirmation measures exactly the declared layout", "[tune]") {
  Setup s;
  ReplaySampler sampler(quiet_model());
  ProtocolOptions opt;
  opt.futility_stop = false;  // a null candidate: the stop would end it after one block
  auto const layout = plan_attempt(7, 1, 2, 3);
  auto const r = run_confirmation(sampler, opt, s.arms, layout);
  REQUIRE_FALSE(r.fault);
  CHECK(r.attempt.attempt == 1);
  REQUIRE(r.attempt.rounds.size() == 6);
  REQUIRE(r.attempt.comparison.size() == 6);
  REQUIRE(r.attempt.control.size() == 6);
  REQUIRE(r.attempt.versus_control.size() == 6);
  CHECK(r.attempt.comparison_summary.block_median_reductions.size() == 2);
  std::vector<std::string> want;
  for (auto const& b : layout.blocks) {
    want.push_back("|" + describe(b.build_order));
    for (auto const& order : b.rounds) {
      for (auto role : order) want.emplace_back(to_string(role));
    }
  }
  CHECK(events(sampler) == want);
  // The three views are the same rounds read three ways, with their true order.
  for (std::size_t i = 0; i < 6; ++i) {
    auto const& round = r.attempt.rounds[i];
    CHECK(r.attempt.comparison[i].baseline_us == round.baseline_us);
    CHECK(r.attempt.comparison[i].candidate_us == round.candidate_us);
    CHECK(r.attempt.control[i].candidate_us == round.control_us);
    CHECK(r.attempt.versus_control[i].baseline_us == round.control_us);
    CHECK(r.attempt.versus_control[i].candidate_us == round.candidate_us);
    auto pos = [&](ConfirmRole role) {
      return std::find(round.order.begin(), round.order.end(), role) - round.order.begin();
    };
    CHECK(r.attempt.comparison[i].baseline_first ==
          (pos(ConfirmRole::baseline) < pos(ConfirmRole::candidate)));
    CHECK(r.attempt.comparison[i].block == static_cast<int>(i / 3));
  }
}

TEST_CASE("confirmation layout: balanced build and sample order, random pads, declared seeds",
          "[tune]") {
  auto const layout = plan_attempt(42, 0, 6, 12);
  CHECK(layout.build_order_balanced);
  CHECK(layout.sample_order_balanced);
  REQUIRE(layout.blocks.size() == 6);
  // Build order: the six blocks take the six orders once each.
  std::set<std::string> builds;
  for (auto const& b : layout.blocks) builds.insert(describe(b.build_order));
  CHECK(builds.size() == 6);
  std::set<std::uint64_t> pads;
  for (auto const& b : layout.blocks) {
    CHECK(b.seed == block_seed(42, Phase::confirm, 0, b.index));
    CHECK(b.placement_pad_bytes % kPlacementPadStep == 0);
    CHECK(b.placement_pad_bytes < kPlacementPadStep * kMaxPlacementPadSteps);
    pads.insert(b.placement_pad_bytes);
    // Every six rounds hold the six orders once: each role in each position twice, each role
    // directly after each other role twice (within rounds).
    for (std::size_t start = 0; start < b.rounds.size(); start += 6) {
      std::map<std::pair<ConfirmRole, int>, int> at;
      std::map<std::pair<ConfirmRole, ConfirmRole>, int> after;
      std::set<std::string> orders;
      for (std::size_t r = start; r < start + 6; ++r) {
        auto const& o = b.rounds[r];
        orders.insert(describe(o));
        for (int p = 0; p < 3; ++p) ++at[{o[static_cast<std::size_t>(p)], p}];
        ++after[{o[0], o[1]}];
        ++after[{o[1], o[2]}];
      }
      CHECK(orders.size() == 6);
      for (auto const& [key, n] : at) CHECK(n == 2);
      CHECK(after.size() == 6);
      for (auto const& [key, n] : after) CHECK(n == 2);
    }
  }
  CHECK(pads.size() > 1);  // random, not one fixed offset
  // Deterministic: the manifest's declaration is the measurement's plan.
  CHECK(to_json(plan_attempt(42, 0, 6, 12)) == to_json(layout));
  CHECK(to_json(plan_attempt(43, 0, 6, 12)) != to_json(layout));
  CHECK(to_json(plan_attempt(42, 1, 6, 12)) != to_json(layout));
  auto const odd = plan_attempt(1, 0, 4, 8);
  CHECK_FALSE(odd.build_order_balanced);
  CHECK_FALSE(odd.sample_order_balanced);
  CHECK_THROWS_AS(plan_attempt(1, 0, 0, 6), std::invalid_argument);
  CHECK_THROWS_AS(plan_attempt(1, 0, 6, 0), std::invalid_argument);
}

TEST_CASE("an arm built first is slower: the fixed order qualified it, the balanced one does not",
          "[tune]") {
  // An allocation-order effect: whichever arm is built first in a block runs 2 % slower, the
  // last-built 2 % slower too (the control slot of the old order). The old design always built
  // baseline, candidate, control, so the same code won every pair as the "candidate": a false
  // qualification. Balanced build orders spread the effect over every arm.
  auto model = quiet_model(21);
  model.build_order_bias = {0.02, 0.0, 0.02};
  auto const bucket = make_bucket(8, 6, 1);
  CalibrationOptions o;
  o.null_trials = 30;
  o.power_trials = 0;
  ReplaySampler sampler(model);
  auto const r = calibrate(bucket, sampler, o);
  auto const* null = r.null_case();
  REQUIRE(null != nullptr);
  CHECK(null->qualified() == 0);
  // What the fixed order would have measured in the same model: every round a candidate win.
  Setup s;
  ReplaySampler fixed(model);
  AttemptLayout old_order = plan_attempt(5, 0, 4, 8);
  for (auto& b : old_order.blocks) {
    b.build_order = {ConfirmRole::baseline, ConfirmRole::candidate, ConfirmRole::control};
  }
  ConfirmArms same{{"baseline", s.base}, {"candidate", s.base}, {"control", s.base}};
  auto const biased = run_confirmation(fixed, ProtocolOptions{}, same, old_order);
  CHECK(biased.attempt.comparison_summary.wins == 32);
  CHECK(biased.attempt.gate_vs_baseline.passed);
}

TEST_CASE("run_confirmation: a candidate fault is returned, a baseline fault propagates",
          "[tune]") {
  Setup s;
  ProtocolOptions opt;
  auto const layout = plan_attempt(3, 0, 2, 6);
  {
    auto model = quiet_model();
    model.sample_failure[s.cand.name()] = Outcome::timeout;
    ReplaySampler sampler(model);
    auto const r = run_confirmation(sampler, opt, s.arms, layout);
    REQUIRE(r.fault.has_value());
    CHECK(r.fault->kind == Outcome::timeout);
    CHECK_FALSE(r.fault->while_building);
    CHECK(r.attempt.comparison.empty());
  }
  {
    auto model = quiet_model();
    model.sample_failure[s.base.name()] = Outcome::launch_error;
    ReplaySampler sampler(model);
    CHECK_THROWS_AS(run_confirmation(sampler, opt, s.arms, layout), SamplerError);
  }
  ReplaySampler sampler(quiet_model());
  ConfirmArms same_labels{{"a", s.base}, {"a", s.cand}, {"c", s.base}};
  CHECK_THROWS_AS(run_confirmation(sampler, opt, same_labels, layout), std::invalid_argument);
  CHECK_THROWS_AS(run_confirmation(sampler, opt, s.arms, AttemptLayout{}), std::invalid_argument);
}

TEST_CASE("the gate judges the candidate against the control too", "[tune]") {
  // The baseline arm alone is slow in this model (a bias of one instance): against the
  // baseline the candidate "gains" 2 %, against the control (the other instance of the same
  // baseline code) nothing. The control itself fails too, but the verdict on the claim must
  // not rest on the baseline arm alone.
  Setup s;
  auto model = quiet_model(8);
  model.arm_bias["baseline"] = 0.02;
  ReplaySampler sampler(model);
  ConfirmArms same{{"baseline", s.base}, {"candidate", s.base}, {"control", s.base}};
  ProtocolOptions opt;
  opt.futility_stop = false;  // every block, so that both gates' full verdicts exist
  auto const r = run_confirmation(sampler, opt, same, plan_attempt(9, 0, 6, 6));
  CHECK(r.attempt.gate_vs_baseline.passed);
  CHECK_FALSE(r.attempt.gate_vs_control.passed);
  CHECK_FALSE(r.attempt.gate.passed);
  CHECK_FALSE(r.attempt.control_verdict.passed);
  SECTION("with the futility stop: stops after block 1, against the control") {
    ReplaySampler stop_sampler(model);
    auto const t = run_confirmation(stop_sampler, ProtocolOptions{}, same, plan_attempt(9, 0, 6, 6));
    REQUIRE(t.attempt.stopped_after_blocks.has_value());
    CHECK(*t.attempt.stopped_after_blocks == 1);
    CHECK_FALSE(t.attempt.gate.passed);
    CHECK_THAT(t.attempt.stop_reason, Catch::Contains("against the control"));
    REQUIRE_FALSE(t.attempt.gate.reasons.empty());
    CHECK(t.attempt.gate.reasons.front() == t.attempt.stop_reason);
    // find_futility_stop on the full attempt points at the same block, with the same words.
    auto const found = find_futility_stop(opt.gate, r.attempt.rounds, r.attempt.layout);
    REQUIRE(found.has_value());
    CHECK(found->after_blocks == 1);
    CHECK(found->reason == t.attempt.stop_reason);
  }
}

TEST_CASE("futility stop: a clear gain is never stopped, and the last block is never cut",
          "[tune]") {
  Setup s;
  auto model = quiet_model(8);
  model.mean_us[s.cand.name()] = 97.0;  // 3 % faster in every pair
  ReplaySampler sampler(model);
  auto const r = run_confirmation(sampler, ProtocolOptions{}, s.arms, plan_attempt(3, 0, 6, 6));
  CHECK_FALSE(r.attempt.stopped_after_blocks.has_value());
  CHECK(r.attempt.rounds.size() == 36);
  CHECK(r.attempt.gate.passed);
  // A null candidate in a one-block attempt: that block is the last, so nothing is cut.
  ReplaySampler null_sampler(quiet_model(8));
  ConfirmArms same{{"baseline", s.base}, {"candidate", s.base}, {"control", s.base}};
  auto const one = run_confirmation(null_sampler, ProtocolOptions{}, same, plan_attempt(3, 0, 1, 6));
  CHECK_FALSE(one.attempt.stopped_after_blocks.has_value());
  CHECK(one.attempt.rounds.size() == 6);
  CHECK_THROWS_AS(find_futility_stop(ProtocolOptions{}.gate, {}, plan_attempt(3, 0, 2, 3)),
                  std::invalid_argument);
}
