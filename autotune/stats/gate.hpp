#pragma once
// The predeclared qualification gate and the identical-kernel control (DESIGN.md §4).
// A gate is written into the run's manifest before any confirmation sample is taken; these
// functions only apply it.
#include <string>
#include <vector>

#include "autotune/stats/paired_comparison.hpp"

namespace moetune::stats {

struct GateSpec {
  double min_median_reduction = 0.01;  // >= 1 % median paired improvement
  int reference_wins = 25;             // ">= 25 of 31 wins", carried to other pair counts
  int reference_pairs = 31;            //   at the same one-sided binomial level
  bool require_every_block = true;     // the gain must hold in every block's median:
  double block_share = 0.5;            //   each block median >= block_share x threshold
  double control_fraction = 0.5;       // control |median| must stay under this x threshold
};

// The every-block floor: block_share x the threshold.
[[nodiscard]] inline double block_floor(const GateSpec& gate) {
  return gate.block_share * gate.min_median_reduction;
}
// Whether one block's median reduction `m` meets it (with a share of 0, some gain is still
// required). The one predicate apply_gate and the futility stop both judge a block by.
[[nodiscard]] inline bool block_meets_floor(const GateSpec& gate, double m) {
  return m >= block_floor(gate) && m > 0;
}

// The win count required for `pairs` pairs: the smallest k with P(X >= k | pairs) no larger
// than P(X >= reference_wins | reference_pairs).
[[nodiscard]] int required_wins(const GateSpec& gate, int pairs);

struct GateVerdict {
  bool passed = false;
  int required_wins = 0;
  std::vector<std::string> reasons;  // every condition, met or not, in words
};

[[nodiscard]] GateVerdict apply_gate(const GateSpec& gate, const PairedSummary& summary);

struct ControlVerdict {
  bool passed = false;  // true: the timing showed no bias
  std::vector<std::string> reasons;
};

// The baseline timed against itself, built exactly like the real comparison. It fails if the
// gate fires in either direction or if |median reduction| reaches control_fraction x threshold.
[[nodiscard]] ControlVerdict judge_control(const GateSpec& gate, const PairedSummary& control);

}  // namespace moetune::stats
