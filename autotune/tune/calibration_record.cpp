#include "autotune/tune/calibration_record.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "autotune/tune/confirmation.hpp"

namespace moetune::tune {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what) {
  throw InputError(file, 0, 0, what);
}

const json& member(const std::filesystem::path& file, const json& j, const char* key, const char* where) {
  if (!j.is_object() || !j.contains(key)) bad(file, fmt::format("no \"{}\" in {}: not `moe-tune calibrate --json` output", key, where));
  return j.at(key);
}

}  // namespace

std::string CalibrationRecord::describe() const {
  return fmt::format("{}/{} null trials qualified (95 % CI {:.1f}-{:.1f} %), moe-tune calibrate on {}, {}",
                     qualified, trials, 100 * ci_lower, 100 * ci_upper, device, source);
}

CalibrationRecord read_calibration(const std::filesystem::path& file, const ProtocolOptions& options,
                                   const CalibrationContext& context) {
  auto const& arch = context.arch;
  bool const replayed_run = context.replayed_run;
  json j;
  try {
    j = json::parse(read_file(file));
  } catch (const json::exception& e) {
    bad(file, fmt::format("invalid JSON: {}", e.what()));
  }
  try {
    auto const& machine = member(file, j, "machine", "the file");
    auto const& protocol = member(file, j, "protocol", "the file");
    auto const& cases = member(file, j, "cases", "the file");

    // The design: every field that changes what "qualified" means.
    int const pairs = options.confirm_blocks * options.pairs_per_block;
    std::vector<std::string> differ;
    auto same_int = [&](const char* key, std::int64_t ours) {
      auto const theirs = member(file, protocol, key, "\"protocol\"").get<std::int64_t>();
      if (theirs != ours) differ.push_back(fmt::format("{}: calibrated {}, this run {}", key, theirs, ours));
    };
    auto same_real = [&](const char* key, double ours) {
      auto const theirs = member(file, protocol, key, "\"protocol\"").get<double>();
      if (std::abs(theirs - ours) > 1e-12) differ.push_back(fmt::format("{}: calibrated {}, this run {}", key, theirs, ours));
    };
    same_int("confirm_blocks", options.confirm_blocks);
    same_int("pairs_per_block", options.pairs_per_block);
    same_int("control_remeasures", options.control_remeasures);
    // Files written before the futility stop existed measured every block.
    if (bool const theirs = protocol.value("futility_stop", false); theirs != options.futility_stop) {
      differ.push_back(fmt::format("futility_stop: calibrated {}, this run {}", theirs,
                                   options.futility_stop));
    }
    same_int("required_wins", stats::required_wins(options.gate, pairs));
    same_real("min_median_reduction", options.gate.min_median_reduction);
    same_real("control_fraction", options.gate.control_fraction);
    same_real("block_share", options.gate.block_share);
    auto const design = member(file, protocol, "order_design", "\"protocol\"").get<std::string>();
    if (design != kConfirmationOrderDesign) {
      differ.push_back(fmt::format("order_design: calibrated {}, this run {}", design,
                                   kConfirmationOrderDesign));
    }
    if (member(file, protocol, "require_every_block", "\"protocol\"").get<bool>() != options.gate.require_every_block)
      differ.push_back(fmt::format("require_every_block: calibrated {}, this run {}",
                                   !options.gate.require_every_block, options.gate.require_every_block));
    auto const their_arch = member(file, machine, "arch", "\"machine\"").get<std::string>();
    if (their_arch != arch) differ.push_back(fmt::format("arch: calibrated {}, this run {}", their_arch, arch));
    // The timing conditions: another device, routing or weight rotation is another null.
    auto same_text = [&](const char* key, const std::string& ours) {
      auto const theirs = member(file, machine, key, "\"machine\"").get<std::string>();
      if (theirs != ours) differ.push_back(fmt::format("{}: calibrated {}, this run {}", key, theirs, ours));
    };
    if (!replayed_run) same_text("device", context.device);
    same_text("routing", context.routing);
    if (member(file, machine, "hot", "\"machine\"").get<bool>() != context.hot) {
      differ.push_back(fmt::format("hot: calibrated {}, this run {}", !context.hot, context.hot));
    }
    if (!differ.empty()) {
      std::string list;
      for (auto const& d : differ) list += "\n  " + d;
      bad(file, "calibrated for a different design, so its rate does not apply to this run:" + list);
    }
    auto const sampler = member(file, machine, "sampler", "\"machine\"").get<std::string>();
    if (sampler == "replay" && !replayed_run)
      bad(file, "a replayed calibration (synthetic samples) cannot state the rate of a GPU run");

    for (auto const& c : cases) {
      if (member(file, c, "name", "a case").get<std::string>() != "null") continue;
      CalibrationRecord r;
      r.trials = member(file, c, "trials", "the null case").get<std::int64_t>();
      r.qualified = member(file, c, "qualified", "the null case").get<std::int64_t>();
      auto const& ci = member(file, c, "ci95", "the null case");
      if (!ci.is_array() || ci.size() != 2) bad(file, "the null case's \"ci95\" is not [lower, upper]");
      r.ci_lower = ci[0].get<double>();
      r.ci_upper = ci[1].get<double>();
      if (r.trials <= 0) bad(file, "the null case has no trials: run calibrate with --trials N > 0");
      r.rate = static_cast<double>(r.qualified) / static_cast<double>(r.trials);
      r.device = member(file, machine, "device", "\"machine\"").get<std::string>();
      r.source = file.string();
      auto const& w = member(file, j, "workload", "the file");
      r.scope.shape.hidden = member(file, w, "hidden", "\"workload\"").get<std::int64_t>();
      r.scope.shape.inter = member(file, w, "inter", "\"workload\"").get<std::int64_t>();
      r.scope.shape.experts = member(file, w, "experts", "\"workload\"").get<std::int64_t>();
      r.scope.shape.topk = member(file, w, "topk", "\"workload\"").get<std::int64_t>();
      r.scope.shape.dtype = moe::parse_dtype_path(member(file, w, "dtype", "\"workload\"").get<std::string>());
      r.scope.M = member(file, w, "M", "\"workload\"").get<std::int64_t>();
      r.scope.baseline = member(file, j, "baseline", "the file").get<std::string>();
      return r;
    }
    bad(file, "no null case (calibrate --trials 0 measures power only)");
  } catch (const json::exception& e) {
    bad(file, fmt::format("unexpected value: {}", e.what()));
  }
}

void check_calibration_applies(const CalibrationRecord& record, const TunePlan& plan) {
  for (auto const& b : plan.buckets) {
    if (record.scope.matches(b)) return;
  }
  std::string planned;
  for (auto const& b : plan.buckets) {
    CalibrationScope s{b.shape, b.M, baseline_pair(b).name()};
    planned += "\n  line " + std::to_string(b.line) + ": " + s.describe();
  }
  throw InputError(record.source, 0, 0,
                   "calibrated for " + record.scope.describe() +
                       ", which is no bucket of this run (another shape, M or baseline): its "
                       "rate would describe nothing measured here. Planned buckets:" + planned);
}

void apply_calibration(const CalibrationRecord& record, ProtocolOptions& options) {
  options.false_qualification_rate = record.rate;
  options.calibration = record.describe() + " at " + record.scope.describe();
  options.calibration_scope = record.scope;
}

}  // namespace moetune::tune
