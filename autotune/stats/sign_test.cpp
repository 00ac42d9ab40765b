#include "autotune/stats/sign_test.hpp"

#include <cmath>
#include <stdexcept>

namespace moetune::stats {
namespace {
__extension__ typedef unsigned __int128 uint128;  // GCC/Clang extension, exact products
}  // namespace

double binomial_upper_tail(int n, int k) {
  if (n < 0) throw std::invalid_argument("binomial_upper_tail: negative n");
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  if (n <= 62) {
    // C(n, i) for i = k..n, accumulated exactly: every partial sum is below 2^62.
    std::uint64_t coefficient = 1;  // C(n, 0)
    std::uint64_t tail = 0;
    for (int i = 0; i <= n; ++i) {
      if (i >= k) tail += coefficient;
      // C(n, i+1) = C(n, i) * (n - i) / (i + 1), exact; the product can pass 2^64 near the
      // middle for n close to 62, so it is formed in 128 bits.
      uint128 next = static_cast<uint128>(coefficient) *
                               static_cast<unsigned>(n - i);
      coefficient = static_cast<std::uint64_t>(next / static_cast<unsigned>(i + 1));
    }
    return std::ldexp(static_cast<double>(tail), -n);
  }
  // Large n: sum exp(log C(n, i) - n log 2) in long double; relative error ~1e-15.
  long double total = 0.0L;
  long double const log_half_n = static_cast<long double>(n) * std::log(2.0L);
  for (int i = k; i <= n; ++i) {
    long double const log_c =
        std::lgamma(static_cast<long double>(n) + 1) - std::lgamma(static_cast<long double>(i) + 1) -
        std::lgamma(static_cast<long double>(n - i) + 1);
    total += std::exp(log_c - log_half_n);
  }
  return static_cast<double>(total);
}

int min_wins_for_level(int n, double alpha) {
  for (int k = 0; k <= n; ++k) {
    if (binomial_upper_tail(n, k) <= alpha) return k;
  }
  return n + 1;
}

}  // namespace moetune::stats
