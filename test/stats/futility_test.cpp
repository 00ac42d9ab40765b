// The futility rule: exact, i.e. it fires exactly when no remaining pairs could make the gate
// pass, for each of the gate's three conditions; and never when they still could.
#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>
#include <vector>

#include "autotune/stats/futility.hpp"

using namespace moetune::stats;

namespace {

// `n` pairs of block `block`, each with the candidate at `reduction` below a 100 µs baseline.
std::vector<PairedSample> pairs(int n, int block, double reduction) {
  std::vector<PairedSample> out;
  for (int i = 0; i < n; ++i) out.push_back({100.0, 100.0 * (1 - reduction), block, i % 2 == 0});
  return out;
}

void append(std::vector<PairedSample>& to, const std::vector<PairedSample>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

TEST_CASE("futility: a clear gain never stops, nothing measured never stops", "[stats]") {
  GateSpec const gate;
  std::vector<PairedSample> s;
  CHECK_FALSE(gate_cannot_pass(gate, s, 36));
  for (int b = 0; b < 5; ++b) {
    append(s, pairs(6, b, 0.03));
    CHECK_FALSE(gate_cannot_pass(gate, s, 36));
  }
  CHECK_THROWS_AS(gate_cannot_pass(gate, pairs(37, 0, 0.03), 36), std::invalid_argument);
}

TEST_CASE("futility: the win count, exactly at the edge", "[stats]") {
  GateSpec const gate;
  int const need = required_wins(gate, 36);  // 29
  REQUIRE(need == 29);
  // Block 0: every pair a 3 % gain. Block 1: losses of 3 % (block median negative, so use a
  // gate without the every-block rule to isolate the win count).
  GateSpec no_blocks = gate;
  no_blocks.require_every_block = false;
  std::vector<PairedSample> s = pairs(24, 0, 0.03);
  append(s, pairs(36 - need, 1, -0.03));  // 7 losses: 29 wins still possible (24 + 5 more)
  CHECK_FALSE(gate_cannot_pass(no_blocks, s, 36));
  append(s, pairs(1, 1, -0.03));  // an 8th loss: at most 28 wins
  auto const why = gate_cannot_pass(no_blocks, s, 36);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("under the 29 of 36 required"));
}

TEST_CASE("futility: the median, exactly at the edge", "[stats]") {
  GateSpec gate;
  gate.require_every_block = false;
  gate.reference_wins = 1;  // the win count out of the way: every pair below is a win, and
  gate.reference_pairs = 1;  // the 19 of 36 this level asks for are always within reach
  // 17 pairs at 0.5 % (wins, but under the 1 % threshold): with 19 remaining at their best
  // the median of 36 is the mean of the 18th and 19th largest, both "best" values: passes.
  auto s = pairs(17, 0, 0.005);
  CHECK_FALSE(gate_cannot_pass(gate, s, 36));
  // 18 such pairs: the 19th largest is at most 0.5 %, the 18th at most 1 (the best a pair
  // can be): the median can still reach (1 + 0.005) / 2 >= 1 %: not certain.
  append(s, pairs(1, 0, 0.005));
  CHECK_FALSE(gate_cannot_pass(gate, s, 36));
  // 19 such pairs: the 18th and 19th largest are both at most 0.5 %: the median cannot reach 1 %.
  append(s, pairs(1, 0, 0.005));
  auto const why = gate_cannot_pass(gate, s, 36);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("median paired reduction"));
}

TEST_CASE("futility: a measured block under the floor ends it, as in the gate", "[stats]") {
  GateSpec const gate;
  auto s = pairs(6, 0, 0.03);
  append(s, pairs(6, 1, 0.004));  // block 1 median 0.4 % < 0.5 % (0.5 x threshold)
  auto const why = gate_cannot_pass(gate, s, 36);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("measured block 1"));
  // At the floor exactly, the block passes (the gate's own rule: >= share x threshold).
  auto t = pairs(6, 0, 0.03);
  append(t, pairs(6, 1, 0.005));
  CHECK_FALSE(gate_cannot_pass(gate, t, 36));
  // Whatever it says, the gate itself on the completed pairs agrees: stop => gate fails.
  auto u = s;
  while (static_cast<int>(u.size()) < 36) append(u, pairs(6, static_cast<int>(u.size()) / 6, 0.99));
  CHECK_FALSE(apply_gate(gate, summarize_pairs(u)).passed);
}

TEST_CASE("futility: exact on random attempts, against the gate itself", "[stats]") {
  // For random partial attempts: if the rule says the gate can no longer pass, no completion
  // tried passes apply_gate (the best one included); if it says it still can, the best
  // completion (every remaining pair a reduction of 1) does pass. Both directions, so the
  // rule is neither too eager (stopping what could pass) nor too lazy.
  GateSpec const gate;
  std::mt19937_64 rng(20261202);
  std::normal_distribution<double> noise(0.0, 1.0);
  int stops = 0, goes = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    double const effect = std::uniform_real_distribution<double>(-0.01, 0.04)(rng);
    double const spread = std::uniform_real_distribution<double>(0.001, 0.02)(rng);
    int const blocks_done = 1 + static_cast<int>(rng() % 5);  // 1..5 of 6 blocks
    std::vector<PairedSample> s;
    for (int b = 0; b < blocks_done; ++b) {
      for (int i = 0; i < 6; ++i) {
        double const r = effect + spread * noise(rng);
        s.push_back({100.0, 100.0 * (1 - r), b, i % 2 == 0});
      }
    }
    auto const why = gate_cannot_pass(gate, s, 36);
    auto best = s;
    for (int b = blocks_done; b < 6; ++b) {
      for (int i = 0; i < 6; ++i) best.push_back({100.0, 1e-9, b, i % 2 == 0});
    }
    bool const best_passes = apply_gate(gate, summarize_pairs(best)).passed;
    CAPTURE(trial, effect, spread, blocks_done);
    if (why) {
      ++stops;
      CHECK_FALSE(best_passes);
      // Any other completion is no better than the best one; try a plausible one too.
      auto other = s;
      for (int b = blocks_done; b < 6; ++b) {
        for (int i = 0; i < 6; ++i) {
          double const r = effect + spread * noise(rng);
          other.push_back({100.0, 100.0 * (1 - r), b, i % 2 == 0});
        }
      }
      CHECK_FALSE(apply_gate(gate, summarize_pairs(other)).passed);
    } else {
      ++goes;
      CHECK(best_passes);
    }
  }
  // Both branches were exercised many times.
  CHECK(stops > 300);
  CHECK(goes > 300);
}
