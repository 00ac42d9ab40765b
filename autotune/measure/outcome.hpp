#pragma once
// The one outcome every candidate of a bucket ends in (DESIGN.md §1). A failing candidate is
// data for the report, never a crash of the run, so each outcome carries a reason in words.
#include <optional>
#include <string_view>

namespace moetune::measure {

enum class Outcome {
  pruned,           // invalid for the shape/arch (the rule that rejected it is the reason)
  compile_error,    // a unit did not compile
  launch_error,     // loading or running it failed on the device
  timeout,          // it hung past the watchdog
  wrong_result,     // failed a correctness gate (figures in the reason)
  slower,           // dropped by screening or selection
  not_significant,  // confirmed, but the predeclared gate did not pass
  control_failed,   // the identical-kernel control showed bias twice: no row
  qualified,        // passed the gate with an honest control: a tuned row
  // Not measured through no fault of its own: the bucket's baseline failed to build, verify
  // or time (the reason names the baseline's failure), so there was nothing honest to compare
  // against. Inheriting the baseline's kind instead (wrong_result, ...) would blame the
  // candidate for the default's defect.
  baseline_failed,
  // Not measured: the bucket could not be set up (weights, a worker, memory). The bucket is
  // not decided and a resumed run measures it again.
  setup_failed,
};

[[nodiscard]] std::string_view to_string(Outcome outcome);
[[nodiscard]] std::optional<Outcome> parse_outcome(std::string_view text);

}  // namespace moetune::measure
