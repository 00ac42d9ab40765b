#pragma once
// Exact (Clopper-Pearson) confidence interval for a binomial proportion. `calibrate` reports
// rates such as "0 false qualifications in 100 trials"; a normal approximation says nothing
// useful at 0 or n, the exact interval does (0/100 -> upper bound 3.6 % at 95 %).
namespace moetune::stats {

// P(X <= k) for X ~ Binomial(n, p), summed in log space (valid for any n a run can reach).
[[nodiscard]] double binomial_cdf(int n, int k, double p);

struct Interval {
  double lower = 0;
  double upper = 1;
};

// The two-sided `confidence` interval for `successes` of `trials`: lower solves
// P(X >= k | p) = alpha/2 (0 when k = 0), upper solves P(X <= k | p) = alpha/2 (1 when k = n),
// found by bisection on the exact CDF (monotone in p). Throws std::invalid_argument unless
// 0 <= successes <= trials, trials >= 1 and 0 < confidence < 1.
[[nodiscard]] Interval clopper_pearson(int successes, int trials, double confidence = 0.95);

}  // namespace moetune::stats
