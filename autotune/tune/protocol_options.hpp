#pragma once
// The knobs of the measurement and qualification protocol (DESIGN.md §4). Defaults are the
// design's; every value ends up in the manifest and the report.
#include <cstdint>
#include <optional>
#include <string>

#include "autotune/stats/gate.hpp"
#include "autotune/tune/sampler.hpp"

namespace moetune::tune {

struct ProtocolOptions {
  // Screen: a few samples per candidate, median; drop those slower than the best by more
  // than the margin; keep the fastest `finalists`.
  int screen_samples = 5;
  double screen_margin = 0.05;
  int screen_block_size = 16;  // candidates per screening block: bounds device memory
  int finalists = 3;
  // Select: finalists and the baseline interleaved in rounds, on their own block.
  int select_rounds = 9;
  // Confirm: blocks x pairs, each block fresh buffers and graphs (4 x 8 = 32 pairs).
  int confirm_blocks = 4;
  int pairs_per_block = 8;
  int control_remeasures = 1;  // measure the bucket again this many times if the control fails
  // Isolated stage times of the qualified pair (us1, us2): samples per stage.
  int stage_time_samples = 15;
  stats::GateSpec gate;
  std::uint64_t seed = 1;
  // The false-qualification rate `calibrate` measured for exactly this design; stated next
  // to every verdict. Empty = not calibrated (the report says so).
  std::optional<double> false_qualification_rate;
  // Where that rate comes from (tune --calibration FILE: CalibrationRecord::describe()).
  std::string calibration;
};

// The seed of one block's inputs: a pure function of the run seed and the block's place, so
// the manifest can declare every confirmation seed before anything is measured.
[[nodiscard]] std::uint64_t block_seed(std::uint64_t run_seed, Phase phase, int attempt, int index);

}  // namespace moetune::tune
