#pragma once
// The false-qualification rate `moe-tune calibrate` measured, read back for a tuning run so
// that its report states a measured rate instead of "not calibrated". A rate belongs to a
// design (blocks, pairs, gate, control, remeasures) on an arch: a file measured for another
// design or arch is refused, naming every field that differs, rather than quoted wrongly.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "autotune/tune/protocol_options.hpp"

namespace moetune::tune {

struct CalibrationRecord {
  double rate = 0;              // null-case qualifications / trials
  double ci_lower = 0, ci_upper = 0;  // exact 95 % Clopper-Pearson interval
  std::int64_t trials = 0, qualified = 0;
  std::string device;  // where calibrate ran
  std::string source;  // the file
  // One line for the report: "0/100 null trials qualified (95 % CI 0.0-3.6 %), moe-tune
  // calibrate on NVIDIA H200, FILE".
  [[nodiscard]] std::string describe() const;
};

// Reads a `moe-tune calibrate --json` file. Throws moetune::InputError naming the file and
// what is wrong: not calibrate output, no null case (or one with no trials), a replayed
// calibration for a GPU run, or a design or arch that differs from `options` / `arch` (each
// differing field with both values).
[[nodiscard]] CalibrationRecord read_calibration(const std::filesystem::path& file,
                                                 const ProtocolOptions& options,
                                                 std::string_view arch, bool replayed_run);

// Puts the record's rate and description into the options the run states in its manifest,
// report and summary.
void apply_calibration(const CalibrationRecord& record, ProtocolOptions& options);

}  // namespace moetune::tune
