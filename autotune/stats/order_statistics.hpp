#pragma once
// Exact order statistics. Gates are decided on these, never on streaming estimates
// (Boost.Accumulators' median is a P² approximation: fine for progress lines, not for gates).
#include <span>

namespace moetune::stats {

// The exact sample median: the middle value, or the mean of the two middle values for an
// even count. Throws std::invalid_argument on an empty sample or a NaN.
[[nodiscard]] double exact_median(std::span<const double> values);

// The exact q-quantile (0 <= q <= 1) by linear interpolation between order statistics
// (the "type 7" definition used by NumPy and R by default).
[[nodiscard]] double exact_quantile(std::span<const double> values, double q);

}  // namespace moetune::stats
