#pragma once
// What the qualification protocol needs from a measurement back end, and nothing more, so
// the whole orchestration (screen, select, manifest, blocked confirmation with control, gate)
// runs identically against the GPU (GpuSampler) and against recorded or synthetic samples
// (ReplaySampler) in CI.
//
// The protocol drives a sampler like this, for one bucket:
//   begin_bucket(bucket)
//   prepare(pair), quick_check(pair)             per candidate, before any timing
//   verify(pair, baseline)                       the baseline and each finalist (all gates)
//   begin_block(spec)                            fresh buffers and fresh graph captures for
//   sample_us(arm, unit) ...                     the arms named in spec, then samples
//   begin_block(spec) ...
// Screening (#15) keeps its arms instead: screen blocks set BlockSpec::keep_arms, share one
// set of inputs and weights for the bucket's screen, and an arm built in an earlier screen
// block is used again as it is (graph captured, already warm); release_arm drops one early.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autotune/search/kernel_config.hpp"
#include "autotune/measure/outcome.hpp"
#include "autotune/measure/bucket_plan.hpp"

namespace moetune::measure {

// Stage one and stage two run as one pipeline: they share block_m (the sort granularity),
// and the full-MoE time of the pair is what the gate judges.
struct TunePair {
  search::KernelConfig stage1;
  search::KernelConfig stage2;
  // "STAGE1_NAME+STAGE2_NAME": the identity of the pair in logs, models and reports.
  [[nodiscard]] std::string name() const;
  friend bool operator==(const TunePair&, const TunePair&) = default;
};

// One separately built instance of a pair inside a block: its own pipeline (scratch buffers)
// and its own captured graph. Two arms may run the same pair — that is how the
// identical-kernel control is built exactly like the comparison.
struct Arm {
  // A constructor rather than an aggregate, so that {label, pair} stays complete (no
  // missing-initializer warning) now that calibrate's optional delay exists.
  Arm() = default;
  Arm(std::string label_, TunePair pair_, std::optional<std::uint64_t> delay = std::nullopt)
      : label(std::move(label_)), pair(std::move(pair_)), delay_ns(delay) {}

  std::string label;  // unique within a block: "baseline", "candidate", "control", a pair name
  TunePair pair;
  // Only `calibrate` sets this: one extra kernel after stage two that spins this many ns
  // (0 = the extra kernel's launch cost alone), a known slowdown that is real on the GPU.
  // Empty = the pipeline exactly as tuned.
  std::optional<std::uint64_t> delay_ns;
};

// What one sample times: the full MoE (sort + stage one + stage two + any zeroing/reduce/
// quantisation) or a stage in isolation (for the us1/us2 columns of a tuned row).
enum class TimedUnit { full, stage1, stage2 };

enum class Phase { screen, select, confirm, stage_times };
[[nodiscard]] std::string_view to_string(Phase phase);
[[nodiscard]] std::string_view to_string(TimedUnit unit);

// A block: every arm gets freshly allocated buffers and freshly captured graphs, so memory
// placement varies between blocks (noise the paired statistics can see) instead of being one
// fixed bias for the whole comparison (DESIGN.md §4, item 2). All arms of a block read the
// very same input and weight buffers; only the code (and each arm's own scratch) differs.
struct BlockSpec {
  Phase phase = Phase::confirm;
  int attempt = 0;  // confirmation: 0, or 1 for the one re-measure after a failed control
  int index = 0;    // block index within the phase (and attempt)
  std::uint64_t seed = 0;  // inputs for this block
  // Bytes allocated (and held for the block) before its inputs and weights, so that fresh
  // buffers of consecutive blocks do not land on the same addresses (confirmation_layout.hpp).
  std::uint64_t placement_pad_bytes = 0;
  std::vector<Arm> arms;  // built in this order
  std::vector<TimedUnit> units{TimedUnit::full};  // the units that will be sampled
  // The tokens of this block's inputs; empty = the bucket's M. Only the stage-times block
  // sets it (to the row's `token`): AITER reads us1/us2 as times at `token`, while screening
  // and confirmation run at the bucket's M (actual_m).
  std::optional<std::int64_t> M;
  // Kept arms (screen only, #15). Set: this block is not fresh. Its inputs and weights are
  // those of the previous kept block when that was the sampler's last block and had the same
  // tokens and units (else allocated anew from this block's seed and pad, and held until a
  // block that is not kept, or begin_bucket). An arm of that previous block with the same
  // label, pair and delay is used again as it is: not rebuilt, not recaptured, not warmed up
  // again. Arms of the previous block this one does not name are released. Never set for
  // select, confirm or stage_times: those blocks stay fresh (DESIGN.md §4).
  bool keep_arms = false;
  // Replays after capture, per graph, of the arms built in this block; empty = the sampler's
  // own (3 on the GPU). A kept arm is warmed once, when it is built.
  std::optional<int> warmup_replays;
  // Launches per graph replay (R) of this block's arms; empty = the sampler's repeats(). The
  // GPU sampler raises a smaller R to one launch per cold weight copy, up to its repeats() (a
  // replay must not come back to a copy still in L2).
  // Samples stay microseconds per launch.
  std::optional<int> repeats;
};

// Compiling and loading a pair, before anything is verified or timed.
struct Preparation {
  Outcome status = Outcome::qualified;  // qualified = "ready"; else compile/launch/timeout
  std::string detail;
  [[nodiscard]] bool ok() const { return status == Outcome::qualified; }
};

// The correctness gates of DESIGN.md §2 for one pair, and how far it moved numerics.
struct Verification {
  bool passed = false;
  std::string detail;         // the first failure, or a summary of what passed
  int checks = 0;             // number of checks run
  double max_abs = 0;         // worst against the reference
  double max_rel = 0;
  double err1 = 0;            // AITER's mismatch share of stage one's / stage two's outputs
  double err2 = 0;            //   at M = token (the err1/err2 columns of a tuned row)
  double max_abs_vs_baseline = 0;  // largest |y_pair - y_baseline| on identical inputs
  Outcome failure = Outcome::wrong_result;  // when !passed: wrong_result, launch_error, timeout
};

// Thrown by sample_us/begin_block when a kernel faults or hangs: the protocol turns it into
// the arm's outcome (launch_error or timeout) instead of aborting the run.
class SamplerError : public std::runtime_error {
 public:
  SamplerError(Outcome kind, std::string arm, const std::string& message)
      : std::runtime_error(message), m_kind(kind), m_arm(std::move(arm)) {}
  [[nodiscard]] Outcome kind() const { return m_kind; }
  [[nodiscard]] const std::string& arm() const { return m_arm; }

 private:
  Outcome m_kind;
  std::string m_arm;
};

class Sampler {
 public:
  virtual ~Sampler() = default;

  // All following calls concern this bucket (shape, M). Weights may be generated here.
  virtual void begin_bucket(const BucketPlan& bucket) = 0;
  // Compile and load; never throws for a candidate's own failure.
  [[nodiscard]] virtual Preparation prepare(const TunePair& pair) = 0;
  // One run at the bucket's own M, under the routing the run times with, against the
  // reference (sort, NaN-sentinel coverage, y and the intermediate): every candidate passes
  // this before it is timed at all, so a wrong result never reaches screening. Cheap: one
  // launch per candidate.
  [[nodiscard]] virtual Verification quick_check(const TunePair& pair) = 0;
  // All the correctness gates of DESIGN.md §2 for `pair` (boundary M; the timed M and both
  // ends of the range the bucket's row serves, token/2+1 and token (served_tokens.hpp), each
  // under uniform, concentrated and the run's routing; input preservation; changed-input
  // graph replay), plus its output's distance from
  // `baseline`'s: the baseline and every finalist pass this before selection.
  [[nodiscard]] virtual Verification verify(const TunePair& pair, const TunePair& baseline) = 0;
  // Drops every previous block's buffers and graphs, allocates fresh inputs and weights,
  // builds each arm and captures its graphs for the listed units.
  virtual void begin_block(const BlockSpec& block) = 0;
  // One sample: microseconds per launch of one replay of the arm's graph of R launches.
  [[nodiscard]] virtual double sample_us(std::string_view arm, TimedUnit unit = TimedUnit::full) = 0;
  // Drops one arm of the current block (its graphs and pipeline), e.g. a screen candidate
  // raced out: it is sampled no more, and a kept block does not hold it either. An unknown
  // label is ignored. Samplers without device memory to give back may do nothing else.
  virtual void release_arm(std::string_view arm) = 0;
  // The launches per graph replay (R), for the manifest.
  [[nodiscard]] virtual int repeats() const = 0;
};

}  // namespace moetune::measure
