#pragma once
// How a bucket of a tuning run ended, as a whole (its candidates each have an Outcome). The
// two failures are not verdicts on any candidate and make `tune` exit non-zero:
//   baseline_failed  the default configuration failed to build, verify or time: decided (it is
//                    journaled; measuring again gives the same answer), but nothing was tuned
//   setup_failed     the bucket could not be set up (weights, a worker, memory): not decided,
//                    not journaled, so `tune --resume` measures it again
#include <optional>
#include <string_view>

namespace moetune::tune {

enum class BucketStatus { qualified, not_qualified, baseline_failed, setup_failed };

[[nodiscard]] std::string_view to_string(BucketStatus status);
[[nodiscard]] std::optional<BucketStatus> parse_bucket_status(std::string_view text);

}  // namespace moetune::tune
