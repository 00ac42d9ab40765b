#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "autotune/stats/binomial_interval.hpp"

using namespace moetune::stats;

TEST_CASE("binomial cdf against closed forms", "[stats]") {
  CHECK(binomial_cdf(10, 0, 0.3) == Approx(std::pow(0.7, 10)).epsilon(1e-12));
  CHECK(binomial_cdf(10, 9, 0.3) == Approx(1 - std::pow(0.3, 10)).epsilon(1e-12));
  CHECK(binomial_cdf(4, 2, 0.5) == Approx(11.0 / 16.0).epsilon(1e-12));
  CHECK(binomial_cdf(4, 4, 0.5) == 1.0);
  CHECK(binomial_cdf(4, -1, 0.5) == 0.0);
}

TEST_CASE("Clopper-Pearson intervals match worked values", "[stats]") {
  // 0 of n has the closed form upper = 1 - (alpha/2)^(1/n); n of n mirrors it.
  auto const none = clopper_pearson(0, 100);
  CHECK(none.lower == 0.0);
  CHECK(none.upper == Approx(1 - std::pow(0.025, 0.01)).epsilon(1e-9));
  CHECK(none.upper == Approx(0.0362).margin(5e-5));
  auto const all = clopper_pearson(100, 100);
  CHECK(all.upper == 1.0);
  CHECK(all.lower == Approx(std::pow(0.025, 0.01)).epsilon(1e-9));
  // Published values (e.g. R's binom.test(95, 100)$conf.int: 0.8871651 0.9835681).
  auto const p95 = clopper_pearson(95, 100);
  CHECK(p95.lower == Approx(0.8871651).margin(1e-6));
  CHECK(p95.upper == Approx(0.9835681).margin(1e-6));
  // binom.test(1, 100): 0.0002531460 0.0544593854; binom.test(5, 10): 0.1870860 0.8129140.
  auto const p1 = clopper_pearson(1, 100);
  CHECK(p1.lower == Approx(0.000253146).margin(1e-8));
  CHECK(p1.upper == Approx(0.0544594).margin(1e-6));
  auto const half = clopper_pearson(5, 10);
  CHECK(half.lower == Approx(0.1870860).margin(1e-6));
  CHECK(half.upper == Approx(0.8129140).margin(1e-6));
  // A 90 % interval is strictly inside the 95 % one.
  auto const narrow = clopper_pearson(5, 10, 0.90);
  CHECK(narrow.lower > half.lower);
  CHECK(narrow.upper < half.upper);
}

TEST_CASE("Clopper-Pearson rejects impossible counts", "[stats]") {
  CHECK_THROWS_AS(clopper_pearson(3, 2), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson(-1, 2), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson(0, 0), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson(1, 2, 1.0), std::invalid_argument);
}
