#pragma once
// One attempt of the blocked confirmation design (DESIGN.md §4), on any Sampler. For each
// block of a declared AttemptLayout (confirmation_layout.hpp): a fresh block holding the
// baseline, the candidate and the control (a separately built instance of the baseline),
// built in the layout's order behind its placement pad; then rounds, each timing the three
// arms once in the layout's order. From every round come three paired samples:
//   comparison     baseline vs candidate   (what the row claims)
//   versus control control vs candidate    (the claim again, against the other instance of
//                                           the baseline: a bias of one arm cannot carry it)
//   control        baseline vs control     (identical code: must show nothing)
// The gate must pass on the comparison and on the versus-control samples, and judge_control
// must pass on the control. tune_bucket runs it for a real winner; calibrate runs it for arms
// whose truth is known, so what calibrate measures is exactly what tune decides with.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autotune/stats/gate.hpp"
#include "autotune/stats/paired_comparison.hpp"
#include "autotune/tune/confirmation_layout.hpp"
#include "autotune/measure/outcome.hpp"
#include "autotune/tune/protocol_options.hpp"
#include "autotune/measure/sampler.hpp"

namespace moetune::tune {

// The three times of one round, in microseconds, and the order they were taken in.
struct ConfirmRound {
  int block = 0;
  RoleOrder order{};
  double baseline_us = 0;
  double candidate_us = 0;
  double control_us = 0;
  // The time slot of `role`: the one mapping from a role to its sample.
  [[nodiscard]] double& time_of(ConfirmRole role);
  [[nodiscard]] double time_of(ConfirmRole role) const;
};

struct ConfirmAttempt {
  int attempt = 0;
  AttemptLayout layout;                          // as declared in the manifest
  std::vector<ConfirmRound> rounds;              // every sample, in time order
  std::vector<stats::PairedSample> comparison;   // baseline vs candidate
  std::vector<stats::PairedSample> versus_control;  // control (as "baseline") vs candidate
  std::vector<stats::PairedSample> control;      // baseline vs control (identical code)
  stats::PairedSummary comparison_summary;
  stats::PairedSummary versus_control_summary;
  stats::PairedSummary control_summary;
  stats::GateVerdict gate;             // both below passed; reasons of both, labelled
  stats::GateVerdict gate_vs_baseline;
  stats::GateVerdict gate_vs_control;
  stats::ControlVerdict control_verdict;
  // Futility stop (ProtocolOptions::futility_stop): the attempt ended after this many of its
  // blocks because the gate could no longer pass (stats/futility.hpp); the summaries and the
  // control verdict then cover the pairs measured (a failed control is measured again, as
  // after a whole attempt), and `gate`, `gate_vs_baseline` and `gate_vs_control` have failed,
  // stop_reason first among the reasons, the partial ones marked "after N of M pairs".
  // Unset: every declared block was measured.
  std::optional<int> stopped_after_blocks;
  std::string stop_reason;
};

// The three arms of every confirmation block. Their labels must differ; the control runs the
// baseline's pipeline (and the baseline's delay, if any).
struct ConfirmArms {
  measure::Arm baseline;
  measure::Arm candidate;
  measure::Arm control;
  [[nodiscard]] const measure::Arm& operator[](ConfirmRole role) const;
};

// A candidate that faulted while its block was built or while it was timed: the attempt is
// abandoned, and the caller gives the candidate this outcome (launch_error, timeout).
struct CandidateFault {
  measure::Outcome kind = measure::Outcome::launch_error;
  std::string message;
  bool while_building = false;  // in begin_block, not in sample_us
};

struct ConfirmationResult {
  ConfirmAttempt attempt;                // summaries and verdicts valid only without a fault
  std::optional<CandidateFault> fault;
};

// Runs one attempt over the blocks of `layout` (all of them, or, with options.futility_stop,
// until a block after which the gate can no longer pass against the baseline or against the
// control: those pairs could not change the verdict, so they are not measured). A SamplerError of the baseline or control arm
// is the baseline's failure and propagates unchanged; one of the candidate arm is returned as
// the fault. Throws std::invalid_argument on a layout without blocks or rounds, or duplicate
// labels.
// The name of the order design, recorded by calibrate and checked by tune --calibration: a
// rate measured under another order design (say the fixed order before it) does not apply.
inline constexpr const char* kConfirmationOrderDesign = "balanced-random-v1";

// The design in words, for manifests and reports.
[[nodiscard]] std::string confirmation_order_rule();
[[nodiscard]] std::string confirmation_control_rule();
[[nodiscard]] std::string confirmation_stopping_rule(bool futility_stop);

// Where the futility stop would have ended an attempt whose `rounds` cover every block of
// `layout`: the number of blocks after which the gate could no longer pass, why, and the
// control's verdict on the pairs before it; nullopt when it never stops before the last block. run_confirmation stops at exactly this point;
// calibrate, which measures every block, uses it to derive the futility design's verdicts.
struct FutilityStop {
  int after_blocks = 0;
  int pairs = 0;                // measured before the stop
  std::string reason;
  bool control_passed = false;  // judge_control on those pairs: false means a re-measure
};
[[nodiscard]] std::optional<FutilityStop> find_futility_stop(const stats::GateSpec& gate,
                                                             const std::vector<ConfirmRound>& rounds,
                                                             const AttemptLayout& layout);

[[nodiscard]] ConfirmationResult run_confirmation(measure::Sampler& sampler, const ProtocolOptions& options,
                                                  const ConfirmArms& arms,
                                                  const AttemptLayout& layout);

}  // namespace moetune::tune
