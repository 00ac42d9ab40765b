#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "autotune/stats/gate.hpp"
#include "autotune/stats/order_statistics.hpp"
#include "autotune/stats/paired_comparison.hpp"
#include "autotune/stats/sign_test.hpp"

using namespace moetune::stats;

TEST_CASE("exact median of odd and even samples", "[stats]") {
  std::vector<double> odd{5, 1, 3};
  CHECK(exact_median(odd) == 3.0);
  std::vector<double> even{4, 1, 3, 2};
  CHECK(exact_median(even) == 2.5);
  std::vector<double> one{7};
  CHECK(exact_median(one) == 7.0);
  CHECK_THROWS_AS(exact_median(std::vector<double>{}), std::invalid_argument);
  CHECK_THROWS_AS(exact_median(std::vector<double>{1, NAN}), std::invalid_argument);
}

TEST_CASE("exact quantile interpolates between order statistics", "[stats]") {
  std::vector<double> v{10, 20, 30, 40, 50};
  CHECK(exact_quantile(v, 0.0) == 10.0);
  CHECK(exact_quantile(v, 1.0) == 50.0);
  CHECK(exact_quantile(v, 0.5) == 30.0);
  CHECK(exact_quantile(v, 0.1) == Approx(14.0).epsilon(1e-15));
}

TEST_CASE("binomial upper tail matches worked values", "[stats]") {
  // P(X >= 25 | 31) = sum_{k=25}^{31} C(31,k) / 2^31; C(31,25..31) = 736281, 169911,
  // 31465, 4495, 465, 31, 1, which add up to 942649.
  CHECK(binomial_upper_tail(31, 25) == 942649.0 / 2147483648.0);
  CHECK(binomial_upper_tail(31, 31) == std::ldexp(1.0, -31));
  CHECK(binomial_upper_tail(31, 0) == 1.0);
  CHECK(binomial_upper_tail(31, 32) == 0.0);
  // Symmetry: P(X >= 16 | 31) = 1/2 exactly.
  CHECK(binomial_upper_tail(31, 16) == 0.5);
  CHECK(binomial_upper_tail(62, 31) > 0.5);
  // Large n goes through log space and still agrees with symmetry.
  CHECK(binomial_upper_tail(101, 51) == Approx(0.5).epsilon(1e-12));
}

TEST_CASE("the 25-of-31 gate carries to other pair counts at the same level", "[stats]") {
  GateSpec gate;
  CHECK(required_wins(gate, 31) == 25);
  int const k32 = required_wins(gate, 32);
  CHECK(binomial_upper_tail(32, k32) <= binomial_upper_tail(31, 25));
  CHECK(binomial_upper_tail(32, k32 - 1) > binomial_upper_tail(31, 25));
  CHECK(k32 == 26);
}

namespace {

std::vector<PairedSample> pairs_with(double base, double cand, int n, int blocks) {
  std::vector<PairedSample> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({base, cand, i * blocks / n, i % 2 == 0});
  }
  return out;
}

}  // namespace

TEST_CASE("summary counts wins, losses and the exact median reduction", "[stats]") {
  std::vector<PairedSample> s{{100, 98, 0, true}, {100, 101, 0, false}, {100, 97, 1, true},
                              {100, 100, 1, false}};
  auto const sum = summarize_pairs(s);
  CHECK(sum.pairs == 4);
  CHECK(sum.wins == 2);
  CHECK(sum.losses == 1);
  // r = 0.02, -0.01, 0.03, 0 -> sorted -0.01, 0, 0.02, 0.03 -> median 0.01
  CHECK(sum.median_reduction == Approx(0.01));
  REQUIRE(sum.block_median_reductions.size() == 2);
  CHECK(sum.block_median_reductions[0] == Approx(0.005));
  CHECK(sum.block_median_reductions[1] == Approx(0.015));
}

TEST_CASE("gate passes a clear 2% gain and rejects 0.5% or too few wins", "[stats]") {
  GateSpec gate;
  CHECK(apply_gate(gate, summarize_pairs(pairs_with(100, 98, 32, 4))).passed);
  auto const small = apply_gate(gate, summarize_pairs(pairs_with(100, 99.5, 32, 4)));
  CHECK_FALSE(small.passed);
  // 24 wins of 31 at 2 %: median passes, wins do not.
  auto samples = pairs_with(100, 98, 31, 1);
  for (int i = 0; i < 7; ++i) samples[i].candidate_us = 101;
  auto const few = apply_gate(gate, summarize_pairs(samples));
  CHECK_FALSE(few.passed);
  CHECK(few.required_wins == 25);
}

TEST_CASE("gate rejects a gain that fails to hold in one block", "[stats]") {
  GateSpec gate;
  auto samples = pairs_with(100, 97, 32, 4);
  for (auto& s : samples) {
    if (s.block == 3) s.candidate_us = 100.5;  // block 3 is a loss
  }
  auto const v = apply_gate(gate, summarize_pairs(samples));
  CHECK_FALSE(v.passed);
}

TEST_CASE("control fails on a consistent bias in either direction", "[stats]") {
  GateSpec gate;
  CHECK(judge_control(gate, summarize_pairs(pairs_with(100, 100, 32, 4))).passed);
  CHECK_FALSE(judge_control(gate, summarize_pairs(pairs_with(100, 98.5, 32, 4))).passed);
  CHECK_FALSE(judge_control(gate, summarize_pairs(pairs_with(100, 101.5, 32, 4))).passed);
  // 0.6 % consistent bias: does not fire the gate but exceeds half the threshold.
  CHECK_FALSE(judge_control(gate, summarize_pairs(pairs_with(100, 99.4, 32, 4))).passed);
}
