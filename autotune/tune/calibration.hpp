#pragma once
// `moe-tune calibrate` (DESIGN.md §4, item 3): what the confirmation design is worth on the
// device in hand. Two questions, each answered by many independent trials of exactly the
// design tune uses (run_confirmation: fresh blocks, randomized and balanced build and sample
// order, control, gate, one re-measure after a failed control), with an exact 95 % interval
// on every rate:
//   null case   : the candidate is the baseline itself, separately built, so nothing can be
//                 gained; every qualification is a false one (placement, clocks, order...);
//   slowdown d  : the baseline arm (and its control, which mirrors the baseline) is slowed
//                 by a fixed busy-wait of d x the baseline's median full time after stage two,
//                 the candidate is the plain baseline with a zero-length wait (so both carry
//                 the same extra launch); every qualification is a correct one: the power.
// A trial qualifies exactly when tune would write a row: gate passed and control passed in
// the last attempt. Each trial has block seeds of its own (fresh inputs, weights and graphs
// per block, as in a real confirmation), and the cases are interleaved trial by trial so
// that slow drift of the machine spreads over all of them alike.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "autotune/stats/binomial_interval.hpp"
#include "autotune/tune/confirmation.hpp"
#include "autotune/tune/device_workers.hpp"
#include "autotune/tune/protocol_options.hpp"
#include "autotune/measure/sampler.hpp"
#include "autotune/tune/tune_plan.hpp"

namespace moetune::tune {

struct CalibrationOptions {
  ProtocolOptions protocol;  // gate, blocks x pairs, control re-measures: those of tune
  int null_trials = 400;     // enough for an upper bound <= 1 % with no false qualification
  int power_trials = 100;    // per slowdown
  std::vector<double> slowdowns{0.01, 0.02, 0.03, 0.05};  // fractions of the baseline's time
  int reference_samples = 15;  // full-MoE samples of the baseline that size the delays
};

struct CalibrationTrial {
  int index = 0;
  int attempts = 0;                 // 1, or more after a failed control (either design's)
  int control_failures = 0;         // attempts of the full design whose control failed
  double median_reduction = 0;      // last attempt, comparison
  int wins = 0;
  int pairs = 0;
  std::vector<double> block_median_reductions;
  double control_median_reduction = 0;
  int control_wins = 0;
  double versus_control_median_reduction = 0;  // the candidate against the control arm
  int versus_control_wins = 0;
  bool gate_passed = false;
  bool control_passed = false;
  // Tune's verdict: gate and control passed in the last attempt of tune's design (with the
  // protocol's futility stop, where it applies: a stopped attempt fails the gate, and is
  // measured again only if the control of the pairs before the stop failed).
  bool qualified = false;
  // The trial measures every block of every attempt it needs, so the figures above and the
  // distribution below are the full design's; the futility stop's verdict and cost are
  // derived from the same samples (find_futility_stop): the first attempt it would have cut
  // and after how many blocks, the pairs tune's design measures, and the full design's own
  // verdict beside tune's. `attempts` counts the attempts measured for either design.
  std::optional<int> futility_stop_attempt;
  int futility_stop_after_blocks = 0;
  int pairs_with_futility_stop = 0;   // pairs tune's design measures in this trial
  int pairs_measured = 0;             // pairs this trial measured (every block, every attempt)
  bool qualified_without_futility_stop = false;
  std::vector<std::uint64_t> first_block_seeds;  // attempt 0
  std::vector<ConfirmRound> rounds; // last attempt: every sample with its order
  double seconds = 0;               // wall time of the trial
  std::string device;               // the worker that measured it (calibrate --devices)
};

// How the comparison's statistics fall over the trials of one case: for the null case this
// is the null distribution a fair design must centre on half the pairs.
struct TrialDistribution {
  int pairs = 0;                       // per trial (the last attempt's)
  std::vector<int> wins_histogram;     // [w] = trials with w wins, w = 0..pairs
  double mean_wins = 0;
  int trials_at_required_wins = 0;     // wins >= the gate's required wins
  int trials_with_positive_median = 0;
  // Exact order statistics of the trials' median reductions: min, 5 %, 25 %, 50 %, 75 %,
  // 95 %, max (nearest rank).
  std::vector<double> median_quantiles;
};

struct CalibrationCase {
  std::string name;                 // "null", "slowdown 3%"
  double slowdown = 0;              // 0 for the null case
  std::optional<std::uint64_t> delay_ns;  // the baseline arm's busy-wait; empty: none at all
  std::vector<CalibrationTrial> trials;

  [[nodiscard]] int qualified() const;
  [[nodiscard]] int qualified_without_futility_stop() const;
  [[nodiscard]] int futility_stops() const;              // trials the stop would have ended
  [[nodiscard]] double mean_pairs_with_futility_stop() const;
  [[nodiscard]] double mean_pairs_measured() const;
  [[nodiscard]] double rate() const;              // qualified / trials (0 without trials)
  [[nodiscard]] stats::Interval interval() const; // Clopper-Pearson 95 %
  [[nodiscard]] int control_failed_trials() const;    // final control failed: no row
  [[nodiscard]] int attempts() const;
  [[nodiscard]] int control_failed_attempts() const;
  [[nodiscard]] double median_gain() const;       // median over trials of median_reduction
  [[nodiscard]] TrialDistribution distribution(int required_wins) const;
};

struct CalibrationResult {
  measure::TunePair baseline;
  double reference_median_us = 0;   // the baseline's full time that sized the delays
  std::vector<double> reference_samples_us;
  int required_wins = 0;            // for the confirmation's pair count
  bool futility_stop = false;       // the calibrated design has tune's futility stop
  std::vector<CalibrationCase> cases;  // the null case first (when run), then the slowdowns
  double seconds = 0;

  [[nodiscard]] const CalibrationCase* null_case() const;
  [[nodiscard]] const CalibrationCase* slowdown_case(double slowdown) const;
};

// What the design must show on the device (issue #12): the false-qualification rate's exact
// 95 % upper bound <= 1 % over >= 400 null trials (a point estimate of 0/100 would still allow
// 3.6 %); a null that is centred (mean wins within half the pairs +- 1) with at most 1 % of
// trials reaching the gate's win count (the sign test's p only means something then); and
// power >= 95 % at a 2 % slowdown.
struct CalibrationTargets {
  double max_false_rate = 0.01;      // on the interval's upper bound
  int min_null_trials = 400;
  double max_mean_wins_offset = 1.0;
  double max_share_at_required_wins = 0.01;
  double min_power = 0.95;
  double power_slowdown = 0.02;
};

struct TargetVerdict {
  bool false_rate_met = false;
  bool null_centred = false;
  bool power_met = false;
  std::vector<std::string> lines;  // one sentence per target, met or not, with the figures
  [[nodiscard]] bool met() const { return false_rate_met && null_centred && power_met; }
};

[[nodiscard]] TargetVerdict judge_targets(const CalibrationResult& result,
                                          const CalibrationTargets& targets);

struct CalibrationHooks {
  std::function<void(std::string_view)> log;
  // After every round (one trial of each case): rounds done so far and the result so far.
  std::function<void(int, const CalibrationResult&)> on_round;
};

// Runs the calibration for the bucket's baseline. Throws moetune::Error if the baseline does
// not build or verify, or faults while timed (a calibration without its baseline means
// nothing), std::invalid_argument on bad counts or slowdowns outside (0, 1).
[[nodiscard]] CalibrationResult calibrate(const measure::BucketPlan& bucket, measure::Sampler& sampler,
                                          const CalibrationOptions& options,
                                          const CalibrationHooks& hooks = {});

// The same on several workers (`calibrate --devices`): every worker builds and verifies the
// baseline, the first one measures the reference that sizes the delays, and the rounds (trial
// t of every case, the unit that keeps the cases interleaved) go to whichever worker is free;
// each trial names its worker. The trials are those of a one-worker run (the same cases,
// indices and block seeds, in the same order); their samples are each device's own. on_round
// reports the rounds done, in order.
[[nodiscard]] CalibrationResult calibrate(const measure::BucketPlan& bucket,
                                          const std::vector<DeviceWorker>& workers,
                                          const CalibrationOptions& options,
                                          const CalibrationHooks& hooks = {});

}  // namespace moetune::tune
