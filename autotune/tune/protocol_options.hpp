#pragma once
// The knobs of the measurement and qualification protocol (DESIGN.md §4). Defaults are the
// design's; every value ends up in the manifest and the report.
#include <cstdint>
#include <optional>
#include <string>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/stats/gate.hpp"
#include "autotune/measure/sampler.hpp"

namespace moetune::tune {

// The workload a calibration was measured on: its false-qualification rate is stated for a
// bucket of exactly this shape, M and baseline pair, and for no other.
struct CalibrationScope {
  moe::MoeShape shape;  // tokens ignored
  std::int64_t M = 0;
  std::string baseline;  // TunePair::name()
  [[nodiscard]] bool matches(const measure::BucketPlan& bucket) const;
  [[nodiscard]] std::string describe() const;  // "H=5120 I=640 E=384 topk=6 a16w4 at M=8, baseline ..."
};

struct ProtocolOptions {
  // Screen: a few samples per candidate, median; drop those slower than the best by more
  // than the margin; keep the fastest `finalists`.
  int screen_samples = 5;
  double screen_margin = 0.05;
  // Racing (#15): after `screen_race_after` rounds of a screening block, a candidate whose
  // fastest sample so far is more than `screen_race_margin` slower than the block's baseline
  // median is sampled no more (outcome slower, reason "screen: stopped after N of M
  // samples"). The margin must be at least screen_margin, so a stopped candidate could not
  // have been a finalist unless every one of its first samples was an outlier that high;
  // 0 = every candidate gets every sample (the exhaustive screen).
  double screen_race_margin = 0.10;
  int screen_race_after = 2;
  // The first cut (#15): after the first round already, a candidate whose one sample is more
  // than `screen_first_cut_margin` slower than the block's baseline is sampled no more. Most
  // of a large space is several times slower than a good default (old main loops, tiles that
  // fit another M); their second sample told nothing the first had not. The margin must be
  // at least screen_race_margin: a would-be finalist (within screen_margin) is stopped only
  // if its one sample is more than 1.5x its own time. 0 = no first cut.
  double screen_first_cut_margin = 0.50;
  int screen_block_size = 16;  // candidates per screening block: bounds device memory
  // Kept screen arms (#15): the screen blocks of a bucket share one set of inputs and weights
  // (the first screen block's), and every arm is built once per bucket — pipeline, loaded
  // code, captured graph — then sampled in as many screen blocks as name it (the baseline:
  // all of them) and released when its candidate is raced out or its block is done. An arm
  // built for the screen is warmed with `screen_warmup_replays` replays of its graph (the
  // fresh blocks of select and confirmation keep the sampler's 3); its graph holds
  // `screen_repeats` launches (0 = the sampler's R, the launches of every other phase).
  // Selection and confirmation never reuse a screen arm or a screen sample.
  // Four launches per screen sample (#15): a screen sample only ranks candidates within a
  // block against a baseline timed the same way, and 4 launches cost a quarter of R = 16;
  // the finalists are then selected and confirmed at the sampler's R on fresh blocks. The GPU
  // sampler raises it to the number of cold weight copies where that is larger (up to its own
  // R), so a replay does not reuse a copy still in L2. Checked against the exhaustive screen (R = 16, no
  // racing) on the H200 (docs/tuning.md).
  int screen_warmup_replays = 1;
  int screen_repeats = 4;
  int finalists = 3;
  // Select: finalists and the baseline interleaved in rounds, on their own block.
  int select_rounds = 9;
  // Confirm: blocks x rounds, each block fresh buffers and graphs, each round the baseline,
  // the candidate and the control once (6 x 6 = 36 pairs). Six, because the three arms have
  // six orders: six blocks build the arms in each order once, six rounds sample them in each
  // order once (confirmation_layout.hpp).
  int confirm_blocks = 6;
  int pairs_per_block = 6;
  int control_remeasures = 1;  // measure the bucket again this many times if the control fails
  // Futility stop (#15): after each block but the last, an attempt ends when the gate can no
  // longer pass against the baseline or the control whatever the remaining pairs show
  // (stats/futility.hpp: exact, the gate fails as it would have after every block). The
  // control is then judged on the pairs measured, and a failed one is measured again as after
  // a whole attempt; only that judgement can make the two designs' verdicts differ (calibrate
  // derives both from the same full trials). False: every attempt measures every block.
  bool futility_stop = true;
  // Isolated stage times of the qualified pair (us1, us2): samples per stage.
  int stage_time_samples = 15;
  stats::GateSpec gate;
  std::uint64_t seed = 1;
  // The false-qualification rate `calibrate` measured for exactly this design; stated next
  // to every verdict. Empty = not calibrated (the report says so).
  std::optional<double> false_qualification_rate;
  // Where that rate comes from (tune --calibration FILE: CalibrationRecord::describe()).
  std::string calibration;
  // The bucket the rate was measured for: other buckets state no rate (the manifest says why).
  std::optional<CalibrationScope> calibration_scope;
};

// The seed of one block's inputs: a pure function of the run seed and the block's place, so
// the manifest can declare every confirmation seed before anything is measured.
[[nodiscard]] std::uint64_t block_seed(std::uint64_t run_seed, measure::Phase phase, int attempt, int index);

}  // namespace moetune::tune
