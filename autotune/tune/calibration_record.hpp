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
#include "autotune/tune/tune_plan.hpp"

namespace moetune::tune {

struct CalibrationRecord {
  double rate = 0;              // null-case qualifications / trials
  double ci_lower = 0, ci_upper = 0;  // exact 95 % Clopper-Pearson interval
  std::int64_t trials = 0, qualified = 0;
  std::string device;  // where calibrate ran
  std::string source;  // the file
  CalibrationScope scope;  // the workload it was measured on
  // One line for the report: "0/100 null trials qualified (95 % CI 0.0-3.6 %), moe-tune
  // calibrate on NVIDIA H200, FILE".
  [[nodiscard]] std::string describe() const;
};

// What the tuning run times with, which a calibration must have timed with too.
struct CalibrationContext {
  std::string arch;
  std::string device;   // GpuInfo::name; not compared for a replayed run
  std::string routing;  // --routing
  bool hot = false;     // --hot
  bool replayed_run = false;
};

// Reads a `moe-tune calibrate --json` file. Throws moetune::InputError naming the file and
// what is wrong: not calibrate output, no null case (or one with no trials), a replayed
// calibration for a GPU run, or a design, arch, device, routing or --hot setting that differs
// from `options` / `context` (each differing field with both values).
[[nodiscard]] CalibrationRecord read_calibration(const std::filesystem::path& file,
                                                 const ProtocolOptions& options,
                                                 const CalibrationContext& context);

// Refuses (InputError naming the file) a record whose workload (shape, M, baseline pair) is no
// bucket of `plan`: its rate would be stated for nothing.
void check_calibration_applies(const CalibrationRecord& record, const TunePlan& plan);

// Puts the record's rate, description and scope into the options the run states in its
// manifests, report and summary.
void apply_calibration(const CalibrationRecord& record, ProtocolOptions& options);

}  // namespace moetune::tune
