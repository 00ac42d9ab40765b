#pragma once
// The buckets a run could not tune through no candidate's fault (BucketStatus baseline_failed
// or setup_failed). They are read back from each bucket's report JSON, so that a bucket
// measured now and one taken from the journal are named alike. summary.md lists them under
// its table, one visible line each (a table cell is easy to overlook), and `tune` exits
// non-zero for them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "autotune/tune/bucket_status.hpp"

namespace moetune::tune {

struct FailedBucket {
  std::string key;  // io::FmoeKey::describe()
  std::int64_t token = 0;
  std::int64_t line = 0;  // in the untuned list
  BucketStatus status = BucketStatus::baseline_failed;
  std::string reason;                      // the baseline's failure, or the set-up error
  std::size_t candidates_not_measured = 0;  // plan candidates given that outcome
};

// The failure of a bucket as report.json holds it (tune_report.hpp), or nullopt when the
// bucket was decided normally (qualified or not).
[[nodiscard]] std::optional<FailedBucket> failed_bucket(const nlohmann::json& bucket_report);

// The section summary.md carries under its table: empty when no bucket failed.
[[nodiscard]] std::string failed_buckets_markdown(std::span<const FailedBucket> failed);

}  // namespace moetune::tune
