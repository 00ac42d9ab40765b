#pragma once
// The run's declaration for one bucket, fixed and handed to the caller (who writes it out)
// BEFORE the first confirmation sample: which pair is confirmed against which baseline, the
// gate, the pair count and blocking, the order rule, the control and every block seed —
// including those of the one permitted re-measure. Nothing measured in confirmation can
// change any of it (DESIGN.md §4, "declared in the run's manifest").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/stats/gate.hpp"
#include "autotune/tune/confirmation_layout.hpp"

namespace moetune::tune {

struct Manifest {
  std::string bucket;  // the key, described
  std::int64_t token = 0;
  std::int64_t M = 0;  // the actual M the bucket is timed at
  std::string baseline;   // pair names
  std::string candidate;
  stats::GateSpec gate;
  int blocks = 0;
  int pairs_per_block = 0;
  int pairs = 0;
  int required_wins = 0;
  int repeats = 0;  // launches per graph replay (R)
  int max_remeasures = 0;
  std::string order;    // in words
  std::string control;  // in words
  std::string stopping;  // in words: the futility stop, or that every block is measured
  std::vector<std::vector<std::uint64_t>> block_seeds;  // [attempt][block]
  // [attempt]: build order, placement pad and sample order of every block, the re-measure's
  // included (confirmation_layout.hpp).
  std::vector<AttemptLayout> layouts;
  std::optional<double> false_qualification_rate;
  std::string calibration;  // where the rate comes from, or why there is none
};

[[nodiscard]] nlohmann::json to_json(const Manifest& manifest);
[[nodiscard]] nlohmann::json to_json(const stats::GateSpec& gate);

}  // namespace moetune::tune
