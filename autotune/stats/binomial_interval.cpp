#include "autotune/stats/binomial_interval.hpp"

#include <cmath>
#include <stdexcept>

namespace moetune::stats {

double binomial_cdf(int n, int k, double p) {
  if (k < 0) return 0.0;
  if (k >= n) return 1.0;
  if (p <= 0.0) return 1.0;
  if (p >= 1.0) return 0.0;
  double const lp = std::log(p);
  double const lq = std::log1p(-p);
  double const lgn = std::lgamma(n + 1.0);
  double sum = 0.0;
  for (int i = 0; i <= k; ++i) {
    double const log_term = lgn - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * lp +
                            (n - i) * lq;
    sum += std::exp(log_term);
  }
  return std::fmin(sum, 1.0);
}

namespace {

// The p in (0, 1) where the decreasing function f(p) = P(X <= k | p) - target crosses zero.
// 200 halvings are far below double resolution; the loop stops once the bracket collapses.
double solve_decreasing_cdf(int n, int k, double target) {
  double lo = 0.0, hi = 1.0;
  for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
    double const mid = 0.5 * (lo + hi);
    if (binomial_cdf(n, k, mid) > target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

}  // namespace

Interval clopper_pearson(int successes, int trials, double confidence) {
  if (trials < 1 || successes < 0 || successes > trials || !(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument("clopper_pearson: need 0 <= successes <= trials, trials >= 1, "
                                "0 < confidence < 1");
  }
  double const tail = (1.0 - confidence) / 2.0;
  Interval out;
  // P(X >= k | p) = 1 - P(X <= k-1 | p) = tail  <=>  P(X <= k-1 | p) = 1 - tail.
  out.lower = successes == 0 ? 0.0 : solve_decreasing_cdf(trials, successes - 1, 1.0 - tail);
  out.upper = successes == trials ? 1.0 : solve_decreasing_cdf(trials, successes, tail);
  return out;
}

}  // namespace moetune::stats
