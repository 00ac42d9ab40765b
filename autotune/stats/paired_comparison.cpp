#include "autotune/stats/paired_comparison.hpp"

#include <map>
#include <stdexcept>

#include "autotune/stats/order_statistics.hpp"
#include "autotune/stats/sign_test.hpp"

namespace moetune::stats {

PairedSummary summarize_pairs(std::span<const PairedSample> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize_pairs: no pairs");
  PairedSummary summary;
  std::vector<double> reductions, baseline, candidate;
  std::map<int, std::vector<double>> by_block;
  for (auto const& s : samples) {
    if (!(s.baseline_us > 0)) throw std::invalid_argument("summarize_pairs: baseline time <= 0");
    double const r = (s.baseline_us - s.candidate_us) / s.baseline_us;
    reductions.push_back(r);
    baseline.push_back(s.baseline_us);
    candidate.push_back(s.candidate_us);
    by_block[s.block].push_back(r);
    if (s.candidate_us < s.baseline_us) ++summary.wins;
    if (s.candidate_us > s.baseline_us) ++summary.losses;
  }
  summary.pairs = static_cast<int>(samples.size());
  summary.median_reduction = exact_median(reductions);
  summary.sign_test_p = binomial_upper_tail(summary.pairs, summary.wins);
  summary.baseline_median_us = exact_median(baseline);
  summary.candidate_median_us = exact_median(candidate);
  for (auto const& [block, values] : by_block) {
    summary.block_median_reductions.push_back(exact_median(values));
  }
  return summary;
}

}  // namespace moetune::stats
