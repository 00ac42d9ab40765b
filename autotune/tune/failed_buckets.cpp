#include "autotune/tune/failed_buckets.hpp"

#include <fmt/format.h>

namespace moetune::tune {

std::optional<FailedBucket> failed_bucket(const nlohmann::json& bucket_report) {
  auto const status = parse_bucket_status(bucket_report.value("status", std::string()));
  if (!status || *status == BucketStatus::qualified || *status == BucketStatus::not_qualified) {
    return std::nullopt;
  }
  FailedBucket out;
  out.key = bucket_report.value("key", std::string());
  out.token = bucket_report.value("token", std::int64_t{0});
  out.line = bucket_report.value("line", std::int64_t{0});
  out.status = *status;
  if (*status == BucketStatus::baseline_failed) {
    auto const& f = bucket_report.at("baseline_failure");
    out.reason = fmt::format("{}: {}", f.value("kind", std::string()),
                             f.value("message", std::string()));
  } else {
    out.reason = bucket_report.value("setup_failure", std::string());
  }
  // The candidates carry the bucket's failure as their outcome (outcome.hpp).
  auto const outcome = std::string(to_string(*status));
  for (auto const& c : bucket_report.value("candidates", nlohmann::json::array())) {
    if (c.value("outcome", std::string()) == outcome) ++out.candidates_not_measured;
  }
  return out;
}

std::string failed_buckets_markdown(std::span<const FailedBucket> failed) {
  if (failed.empty()) return {};
  std::string out = fmt::format(
      "\n**{} bucket(s) could not be tuned** (no candidate's fault; `tune` exits non-zero):\n\n",
      failed.size());
  for (auto const& f : failed) {
    if (f.status == BucketStatus::baseline_failed) {
      out += fmt::format(
          "- **baseline failed** in bucket token={} (line {}): {}. Its {} candidate(s) were not "
          "measured (outcome `baseline_failed`); the default configuration itself needs "
          "fixing.\n",
          f.token, f.line, f.reason, f.candidates_not_measured);
    } else {
      out += fmt::format(
          "- **set-up failed** in bucket token={} (line {}): {}. Nothing was measured and the "
          "bucket is not in the journal: `tune --resume` measures it again.\n",
          f.token, f.line, f.reason);
    }
  }
  return out;
}

}  // namespace moetune::tune
