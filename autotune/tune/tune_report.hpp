#pragma once
// The machine-readable record of a tuning run (DESIGN.md §5): provenance, the protocol, and
// per bucket every candidate's outcome and reason, every sample (screen, select, each
// confirmation attempt's comparison and control pairs, isolated stage times), the gate's
// inputs and verdict, the control's verdict and the manifest.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/protocol_options.hpp"

namespace moetune::tune {

// Passed in by the caller; the report copies it verbatim.
struct Provenance {
  std::string device;             // e.g. "NVIDIA H200"
  std::string arch;               // gfx942, gfx950, sm_90
  std::int64_t cu_num = 0;
  std::string driver;
  // How the MoE's kernels follow one another in every timed graph: "overlapped" (programmatic
  // dependent launch, exec::MoePipeline's default where the device has it), "serial", or
  // "none (replay)".
  std::string launches;
  std::string runtime_compiler;   // identity and version
  std::string git_revision;
  // SHA-256 over the sources of the code that decides a verdict (default configuration,
  // statistics and gate, protocol, verifier, reference): cmake/decision_code_digest.cmake.
  std::string decision_code_sha256;
  std::string command;            // the exact command that reproduces the run
  std::string search_space;       // path
  std::string search_space_sha256;
  std::map<std::string, std::string> kernel_source_sha256;  // file -> digest
  std::string sampler;            // "gpu" or "replay": a replayed run is never a measurement
};

[[nodiscard]] nlohmann::json to_json(const ProtocolOptions& options);
[[nodiscard]] nlohmann::json to_json(const BucketResult& bucket);
[[nodiscard]] nlohmann::json tune_report_json(std::span<const BucketResult> buckets,
                                              const ProtocolOptions& options,
                                              const Provenance& provenance);
// Writes tune_report_json atomically.
void write_tune_report(const std::filesystem::path& file, std::span<const BucketResult> buckets,
                       const ProtocolOptions& options, const Provenance& provenance);

}  // namespace moetune::tune
