#include "autotune/stats/gate.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autotune/stats/sign_test.hpp"

namespace moetune::stats {

int required_wins(const GateSpec& gate, int pairs) {
  double const level = binomial_upper_tail(gate.reference_pairs, gate.reference_wins);
  return min_wins_for_level(pairs, level);
}

GateVerdict apply_gate(const GateSpec& gate, const PairedSummary& s) {
  GateVerdict v;
  v.required_wins = required_wins(gate, s.pairs);
  bool const median_ok = s.median_reduction >= gate.min_median_reduction;
  bool const wins_ok = s.wins >= v.required_wins;
  v.reasons.push_back(fmt::format("median paired reduction {:.3f}% {} {:.3f}%",
                                  100 * s.median_reduction, median_ok ? ">=" : "<",
                                  100 * gate.min_median_reduction));
  v.reasons.push_back(fmt::format("wins {}/{} {} required {} (sign-test p = {:.3g})", s.wins,
                                  s.pairs, wins_ok ? ">=" : "<", v.required_wins, s.sign_test_p));
  bool blocks_ok = true;
  if (gate.require_every_block) {
    // A gain carried by some placements only is a placement, not a kernel: every block must
    // show a stated share of the threshold (and, with a share of 0, at least some gain).
    double const floor = block_floor(gate);
    for (std::size_t b = 0; b < s.block_median_reductions.size(); ++b) {
      double const m = s.block_median_reductions[b];
      if (!block_meets_floor(gate, m)) {
        blocks_ok = false;
        v.reasons.push_back(fmt::format("block {} median reduction {:.3f}% < {:.3f}% ({:g} x "
                                        "threshold)",
                                        b, 100 * m, 100 * floor, gate.block_share));
      }
    }
    if (blocks_ok) {
      v.reasons.push_back(fmt::format("every one of {} block medians >= {:.3f}% ({:g} x threshold)",
                                      s.block_median_reductions.size(), 100 * floor,
                                      gate.block_share));
    }
  }
  v.passed = median_ok && wins_ok && blocks_ok;
  return v;
}

ControlVerdict judge_control(const GateSpec& gate, const PairedSummary& c) {
  ControlVerdict v;
  int const need = required_wins(gate, c.pairs);
  bool const fires_up = c.median_reduction >= gate.min_median_reduction && c.wins >= need;
  bool const fires_down = -c.median_reduction >= gate.min_median_reduction && c.losses >= need;
  double const limit = gate.control_fraction * gate.min_median_reduction;
  bool const small = std::fabs(c.median_reduction) < limit;
  if (fires_up || fires_down) {
    v.reasons.push_back(fmt::format(
        "the gate fires on identical kernels ({} direction: median {:.3f}%, wins {}/{})",
        fires_up ? "faster" : "slower", 100 * c.median_reduction, c.wins, c.pairs));
  }
  v.reasons.push_back(fmt::format("control |median| {:.3f}% {} limit {:.3f}%",
                                  100 * std::fabs(c.median_reduction), small ? "<" : ">=",
                                  100 * limit));
  v.passed = !fires_up && !fires_down && small;
  return v;
}

}  // namespace moetune::stats
