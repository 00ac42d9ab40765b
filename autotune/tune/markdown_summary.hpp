#pragma once
// The human summary of a run, shaped like the tables the users publish (the seeds): one
// table line per bucket with the actual M, baseline -> tuned full-MoE µs (confirmation
// medians), the median paired reduction, wins/N, the control's verdict, the sign-test p and
// the outcome; above it, the predeclared gate and the design's false-qualification rate.
#include <filesystem>
#include <span>
#include <string>

#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/protocol_options.hpp"
#include "autotune/tune/tune_report.hpp"

namespace moetune::tune {

[[nodiscard]] std::string markdown_summary(std::span<const BucketResult> buckets,
                                           const ProtocolOptions& options,
                                           const Provenance& provenance);
// The table (markdown_summary) followed by the line of every bucket that could not be tuned
// (failed_buckets.hpp).
void write_markdown_summary(const std::filesystem::path& file,
                            std::span<const BucketResult> buckets, const ProtocolOptions& options,
                            const Provenance& provenance);

}  // namespace moetune::tune
