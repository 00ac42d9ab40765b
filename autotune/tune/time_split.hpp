#pragma once
// Where a tuning run's wall time went (issue #15: "the summary shows each bucket's time
// split"): the run's compile step, then per bucket set-up, check, screen, verify, select and
// confirm, read back from each bucket's report JSON ("seconds", tune_report.cpp) so that a
// bucket measured now and one taken from the journal are shown alike (one measured before the
// split existed shows dashes).
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "autotune/tune/protocol_run.hpp"

namespace moetune::tune {

// report.json's "compile" object for the run's compile step (null when there was none).
[[nodiscard]] nlohmann::json to_json(const std::optional<CompileStep>& compile);

// summary.md's "Where the time went" section: the compile line, then a table of every
// bucket's phases in seconds with a total row.
[[nodiscard]] std::string time_split_markdown(const std::optional<CompileStep>& compile,
                                              std::span<const nlohmann::json> bucket_reports);

}  // namespace moetune::tune
