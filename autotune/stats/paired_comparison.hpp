#pragma once
// Paired, alternating timing of a baseline against a candidate, summarised for the gate.
// Each pair times both sides back to back (order alternating AB, BA, ...) so that slow drift
// of clocks and temperature cancels within the pair; pairs are grouped into blocks that each
// use freshly allocated buffers and freshly captured graphs, so memory placement becomes
// noise the statistics see rather than a bias they cannot (DESIGN.md §4).
#include <span>
#include <vector>

namespace moetune::stats {

struct PairedSample {
  double baseline_us = 0;
  double candidate_us = 0;
  int block = 0;                 // index of the allocation/capture block
  bool baseline_first = true;    // order inside the pair
};

struct PairedSummary {
  int pairs = 0;
  int wins = 0;                  // pairs where the candidate was strictly faster
  int losses = 0;                // pairs where the candidate was strictly slower
  double median_reduction = 0;   // exact median of r = (t_base - t_cand) / t_base
  double sign_test_p = 1;        // P(X >= wins), X ~ Binomial(pairs, 1/2)
  double baseline_median_us = 0;
  double candidate_median_us = 0;
  std::vector<double> block_median_reductions;  // one per block, in block order
};

// Throws std::invalid_argument on an empty sample or a non-positive baseline time.
[[nodiscard]] PairedSummary summarize_pairs(std::span<const PairedSample> samples);

}  // namespace moetune::stats
