#pragma once
// The qualification protocol over every planned bucket of `moe-tune tune`, on any Sampler:
// the GPU (GpuSampler) for a measurement, a ReplaySampler for a replayed run (`--replay`).
// Both paths go through this one loop, so what CI replays is exactly what a GPU run does.
#include <cstddef>
#include <filesystem>

#include "autotune/tune/protocol_options.hpp"
#include "autotune/tune/sampler.hpp"
#include "autotune/tune/tune_plan.hpp"
#include "autotune/tune/tune_report.hpp"
#include "autotune/tune/tuned_rows.hpp"

namespace moetune::app {

struct ProtocolRun {
  std::filesystem::path output;      // tuned CSV: qualified rows only
  std::filesystem::path report_dir;  // report.json, summary.md, manifest_line<N>.json
  tune::ProtocolOptions protocol;
  tune::Provenance provenance;       // its `sampler` says whether this is a measurement
  tune::RowContext rows;             // gfx and cu_num written into every tuned row
};

// Runs tune_bucket on every bucket of the plan, in order, writing each bucket's manifest
// before its confirmation and the report and summary after every bucket; then the rows.
// Returns the number of qualified buckets.
std::size_t run_protocol(const tune::TunePlan& plan, tune::Sampler& sampler,
                         const ProtocolRun& run);

}  // namespace moetune::app
