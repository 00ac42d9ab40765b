#include "autotune/stats/futility.hpp"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "autotune/stats/order_statistics.hpp"

namespace moetune::stats {

std::optional<std::string> gate_cannot_pass(const GateSpec& gate,
                                            std::span<const PairedSample> measured,
                                            int total_pairs) {
  auto const n = static_cast<int>(measured.size());
  if (n > total_pairs) {
    throw std::invalid_argument(
        fmt::format("gate_cannot_pass: {} pairs measured of {} declared", n, total_pairs));
  }
  if (n == 0) return std::nullopt;
  auto const summary = summarize_pairs(measured);
  int const remaining = total_pairs - n;
  int const need = required_wins(gate, total_pairs);
  if (summary.wins + remaining < need) {
    return fmt::format("{} wins in {} pairs: even winning all {} remaining gives {}, under the "
                       "{} of {} required",
                       summary.wins, n, remaining, summary.wins + remaining, need, total_pairs);
  }
  // The median can only rise as far as the remaining pairs all at the largest reduction a
  // pair can show (1: the candidate's time reaches 0); the median is monotone in every value.
  std::vector<double> best_case;
  best_case.reserve(static_cast<std::size_t>(total_pairs));
  for (auto const& s : measured) best_case.push_back((s.baseline_us - s.candidate_us) / s.baseline_us);
  best_case.insert(best_case.end(), static_cast<std::size_t>(remaining), 1.0);
  double const best_median = exact_median(best_case);
  if (best_median < gate.min_median_reduction) {
    return fmt::format("median paired reduction {:.3f}% over {} pairs: even with every remaining "
                       "pair at its best the median of {} stays at {:.3f}% < {:.3f}%",
                       100 * summary.median_reduction, n, total_pairs, 100 * best_median,
                       100 * gate.min_median_reduction);
  }
  if (gate.require_every_block) {
    // A measured block's median is final: a block under the floor fails the gate for good.
    double const floor = block_floor(gate);
    for (std::size_t b = 0; b < summary.block_median_reductions.size(); ++b) {
      double const m = summary.block_median_reductions[b];
      if (!block_meets_floor(gate, m)) {
        return fmt::format("measured block {} has median reduction {:.3f}% < {:.3f}% ({:g} x "
                           "threshold), and every block must reach it",
                           b, 100 * m, 100 * floor, gate.block_share);
      }
    }
  }
  return std::nullopt;
}

}  // namespace moetune::stats
