#pragma once
// One attempt of the blocked confirmation design (DESIGN.md §4), on any Sampler: for each
// declared block seed, a fresh block holding the baseline, the candidate and the control (a
// separately built instance of the baseline); inside it pairs_per_block comparison pairs in
// alternating order AB, BA, ... (alternating across the whole attempt), each followed by a
// control pair in the same order; then the gate on the comparison and judge_control on the
// control. tune_bucket runs it for a real winner; calibrate runs it for arms whose truth is
// known, so what calibrate measures is exactly what tune decides with.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "autotune/stats/gate.hpp"
#include "autotune/stats/paired_comparison.hpp"
#include "autotune/tune/outcome.hpp"
#include "autotune/tune/protocol_options.hpp"
#include "autotune/tune/sampler.hpp"

namespace moetune::tune {

struct ConfirmAttempt {
  int attempt = 0;
  std::vector<stats::PairedSample> comparison;  // baseline vs candidate
  std::vector<stats::PairedSample> control;     // baseline vs baseline (separately built)
  stats::PairedSummary comparison_summary;
  stats::PairedSummary control_summary;
  stats::GateVerdict gate;
  stats::ControlVerdict control_verdict;
};

// The three arms of every confirmation block. Their labels must differ; the control runs the
// baseline's pipeline (and the baseline's delay, if any).
struct ConfirmArms {
  Arm baseline;
  Arm candidate;
  Arm control;
};

// A candidate that faulted while its block was built or while it was timed: the attempt is
// abandoned, and the caller gives the candidate this outcome (launch_error, timeout).
struct CandidateFault {
  Outcome kind = Outcome::launch_error;
  std::string message;
  bool while_building = false;  // in begin_block, not in sample_us
};

struct ConfirmationResult {
  ConfirmAttempt attempt;                // summaries and verdicts valid only without a fault
  std::optional<CandidateFault> fault;
};

// Runs one attempt over `block_seeds` (one block each; index = position). A SamplerError of
// the baseline or control arm is the baseline's failure and propagates unchanged; one of the
// candidate arm is returned as the fault. Throws std::invalid_argument on an empty seed list,
// pairs_per_block < 1 or duplicate labels.
[[nodiscard]] ConfirmationResult run_confirmation(Sampler& sampler, const ProtocolOptions& options,
                                                  const ConfirmArms& arms, int attempt,
                                                  std::span<const std::uint64_t> block_seeds);

}  // namespace moetune::tune
