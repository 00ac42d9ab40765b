#pragma once
// Futility stopping of a blocked confirmation (#15): after a block, can the gate still pass
// once every declared pair has been measured? The answer is exact, not a prediction: the
// remaining pairs are given the best result a pair can have (the candidate strictly faster,
// a reduction of 1, i.e. a candidate taking no time), and the gate is asked whether even
// that would pass. When it would not, no remaining sample can change the gate's verdict, so
// stopping spends no error rate: the gate fails exactly as it would have after every block.
// (Stopping for success early cannot be exact here: the gate requires every block's median,
// and the last block's median is unknown until it is measured.)
#include <optional>
#include <span>
#include <string>

#include "autotune/stats/gate.hpp"
#include "autotune/stats/paired_comparison.hpp"

namespace moetune::stats {

// `measured`: the pairs of the blocks measured so far (whole blocks); `total_pairs`: the
// pairs the design declares. Returns why the gate can no longer pass (the first condition
// that cannot be met, in words), or nullopt while it still can. Throws
// std::invalid_argument when more pairs were measured than declared.
[[nodiscard]] std::optional<std::string> gate_cannot_pass(const GateSpec& gate,
                                                          std::span<const PairedSample> measured,
                                                          int total_pairs);

}  // namespace moetune::stats
