#pragma once
// The qualification protocol for one bucket (DESIGN.md §1 and §4), on any Sampler:
//   prepare + verify every candidate pipeline (wrong results never reach timing)
//   screen  : a few samples each, in blocks that always include the baseline; score =
//             median / the baseline's median in the same block; drop those more than the
//             margin slower than the best; keep the top K finalists
//   select  : finalists and the baseline interleaved in rounds on their own block; the
//             fastest finalist is the winner if it beats the baseline there
//   manifest: declared and handed to hooks.on_manifest before any confirmation sample
//   confirm : fresh blocks (default 4 x 8 pairs), alternating AB, BA, ...; in the same
//             blocks the identical-kernel control (the baseline against a separately built
//             instance of itself); the gate on the comparison, judge_control on the control;
//             a failed control measures the bucket once more, a second failure is
//             control_failed and no row
//   stage times: us1 / us2 of the qualified pair, isolated, for the tuned row.
// Every plan candidate ends in exactly one Outcome with a reason.
// When the baseline fails (build, verification or any timing), every pipeline not yet decided
// ends baseline_failed, naming the baseline's failure. When the sampler cannot set the bucket
// up (begin_bucket throws), nothing is measured: every pipeline ends setup_failed and the
// result says why (setup_failure); the caller goes on with the next bucket.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/stats/gate.hpp"
#include "autotune/stats/paired_comparison.hpp"
#include "autotune/tune/bucket_status.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "autotune/tune/confirmation.hpp"
#include "autotune/tune/manifest.hpp"
#include "autotune/measure/outcome.hpp"
#include "autotune/tune/protocol_options.hpp"
#include "autotune/measure/sampler.hpp"
#include "autotune/tune/tune_plan.hpp"

namespace moetune::tune {

struct PairRecord {
  measure::TunePair pair;
  measure::Outcome outcome = measure::Outcome::slower;
  std::string reason;
  std::optional<measure::Verification> verification;
  std::vector<double> screen_us;                  // full-MoE samples
  std::optional<double> screen_score;             // median / baseline median in its block
  bool screen_stopped = false;  // raced out: its screen_us stop early (first cut or racing)
  double screen_stop_margin = 0;  // the margin it was stopped under
  double screen_stop_baseline_us = 0;  // the block baseline's median it was stopped against
  std::vector<double> select_us;
  std::optional<double> select_median_us;
};

// ConfirmAttempt: autotune/tune/confirmation.hpp (shared with calibrate).

// What stopped the baseline: the kind it failed with (compile_error, wrong_result,
// launch_error, timeout) and the sampler's message.
struct BaselineFailureRecord {
  measure::Outcome kind = measure::Outcome::launch_error;
  std::string message;
};

// Where a bucket's wall time went (the summary's time split; #15): set-up (the sampler's
// begin_bucket: weights, their repack, the reference), check (prepare and the one-run check of
// every pipeline), screen (screening samples), verify (every gate of the baseline and of each
// would-be finalist), select (selection rounds), confirm (confirmation and the row's stage
// times). Compilation happens once per run before any bucket (the report's "compile").
struct PhaseSeconds {
  double setup = 0, check = 0, screen = 0, verify = 0, select = 0, confirm = 0;
  [[nodiscard]] double total() const { return setup + check + screen + verify + select + confirm; }
};

struct BucketResult {
  io::FmoeKey key;
  std::int64_t line = 0;
  std::int64_t M = 0;
  moe::MoeShape shape;
  measure::TunePair baseline;
  std::optional<measure::Verification> baseline_verification;
  std::vector<CandidateSlot> slots;  // one per plan candidate
  std::vector<PairRecord> pairs;     // the timed pipelines the slots point at
  std::vector<double> baseline_screen_us;  // all screening blocks, in order
  std::vector<double> baseline_select_us;
  std::optional<double> baseline_select_median_us;
  std::optional<std::size_t> winner;  // index into pairs
  std::optional<Manifest> manifest;
  std::vector<ConfirmAttempt> attempts;
  bool qualified = false;
  std::optional<double> stage1_us, stage2_us;  // isolated medians of the qualified pair
  std::int64_t stage_times_M = 0;  // the M they were timed at: the row's token (AITER's us1/us2)
  std::vector<double> stage1_samples_us, stage2_samples_us;
  std::string summary;  // one sentence: what happened to this bucket
  std::optional<BaselineFailureRecord> baseline_failure;  // set: nothing was tuned
  std::optional<std::string> setup_failure;  // set: the set-up error's text; not decided
  PhaseSeconds seconds;

  [[nodiscard]] BucketStatus status() const;

  // The outcome and reason of a plan candidate.
  [[nodiscard]] measure::Outcome outcome_of(const CandidateSlot& slot) const;
  [[nodiscard]] std::string reason_of(const CandidateSlot& slot) const;
  // The attempt whose figures count (the last one measured), if any.
  [[nodiscard]] const ConfirmAttempt* final_attempt() const;
};

struct TuneHooks {
  // Called once per bucket, after selection and before the first confirmation sample; the
  // caller persists it (the manifest must exist before confirmation is measured).
  std::function<void(const Manifest&)> on_manifest;
  // Progress lines.
  std::function<void(std::string_view)> log;
};

[[nodiscard]] BucketResult tune_bucket(const measure::BucketPlan& bucket, measure::Sampler& sampler,
                                       const ProtocolOptions& options, const TuneHooks& hooks = {});

}  // namespace moetune::tune
