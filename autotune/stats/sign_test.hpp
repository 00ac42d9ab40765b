#pragma once
// The exact one-sided sign test: under "no difference" each paired comparison is a fair coin,
// so the chance of at least k wins in n pairs is a binomial tail with p = 1/2.
#include <cstdint>

namespace moetune::stats {

// P(X >= k) for X ~ Binomial(n, 1/2), computed exactly in integers for n <= 62 (the sum of
// binomial coefficients over 2^n, converted to double once) and in log space beyond.
[[nodiscard]] double binomial_upper_tail(int n, int k);

// The smallest win count k whose tail P(X >= k | n) does not exceed `alpha`; n + 1 if none.
// Used to carry a gate declared as "25 of 31" over to another pair count at the same level.
[[nodiscard]] int min_wins_for_level(int n, double alpha);

}  // namespace moetune::stats
