#include "autotune/stats/order_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace moetune::stats {
namespace {

std::vector<double> sorted_copy(std::span<const double> values, const char* what) {
  if (values.empty()) throw std::invalid_argument(std::string(what) + " of an empty sample");
  std::vector<double> sorted(values.begin(), values.end());
  if (std::any_of(sorted.begin(), sorted.end(), [](double v) { return std::isnan(v); })) {
    throw std::invalid_argument(std::string(what) + " of a sample containing NaN");
  }
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

}  // namespace

double exact_median(std::span<const double> values) {
  auto const sorted = sorted_copy(values, "median");
  auto const n = sorted.size();
  if (n % 2 == 1) return sorted[n / 2];
  return (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

double exact_quantile(std::span<const double> values, double q) {
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("quantile outside [0, 1]");
  auto const sorted = sorted_copy(values, "quantile");
  double const position = q * static_cast<double>(sorted.size() - 1);
  auto const below = static_cast<std::size_t>(std::floor(position));
  auto const above = std::min(below + 1, sorted.size() - 1);
  double const fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

}  // namespace moetune::stats
