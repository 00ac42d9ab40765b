#pragma once
// The correctness gates every finalist passes before it is timed for the record
// (DESIGN.md §2), run on the GPU against the double-precision CPU reference:
//  1. token counts: the boundaries 31/32/33/255/256/257 and the bucket's own M values (the
//     tuner passes the timed M and the lowest and highest M the bucket's row serves);
//  2. routing: uniform and concentrated (every token to the same topk experts), and the
//     routing the run times with, at each bucket M;
//  3. write coverage: every buffer the pipeline writes starts as NaN (0xFF bytes) — a y, h
//     or sort entry left unwritten shows up;
//  4. input preservation: a hash of inputs and weights before and after;
//  5. changed-input replay: a captured graph replayed, the inputs changed in place and the
//     graph replayed again (the output must follow), then the originals restored (the
//     original output must come back).
// Each check compares y and stage one's intermediate h with the reference on the token sample
// (h: bf16 as is; A8W4's MXFP8 h dequantised, moe::compare_intermediate_mxfp8), and the GPU
// sort entry by entry with the host sort. Every problem a check reports starts with the name
// of the gate it belongs to (gate_names below), so a report says which gate failed.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "autotune/exec/device_buffers.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/moe/compare.hpp"
#include "autotune/exec/device_checksum.hpp"
#include "autotune/moe/reference.hpp"
#include "autotune/moe/workload.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::exec {

// The words each problem in CheckResult::detail starts with.
namespace gate_names {
inline constexpr std::string_view sort = "sort";
inline constexpr std::string_view output = "y against the reference";
inline constexpr std::string_view intermediate = "h against the reference";
inline constexpr std::string_view write_coverage = "write coverage (NaN sentinel)";
inline constexpr std::string_view input_preservation = "input preservation";
inline constexpr std::string_view graph_replay = "changed-input replay";
// Gate 1 is named in the check's name instead: "M=257 uniform (boundary M)".
inline constexpr std::string_view boundary_m = "boundary M";
}  // namespace gate_names

struct CheckResult {
  std::string name;    // "M=33 uniform", "graph replay: changed inputs", ...
  bool passed = false;
  std::string detail;  // the comparison's summary or the reason
  double max_abs = 0;  // against the reference, where one applies
  double max_rel = 0;
  double seconds = 0;  // wall time of the check (host work included): where verification time goes
  // A run against the reference (Verifier::check): its M and routing, and AITER's mismatch
  // shares (moe::aiter_err_tolerance) of stage one's h and of y on the token sample: what
  // AITER's tuner writes as err1 / err2. Unset for other checks.
  std::int64_t m = 0;
  moe::RoutingSpec routing;
  std::optional<double> aiter_err1, aiter_err2;
};

struct VerifyReport {
  std::string stage1, stage2;  // configuration names
  std::vector<CheckResult> checks;
  double worst_max_abs = 0;
  double worst_max_rel = 0;
  [[nodiscard]] bool passed() const;
  [[nodiscard]] const CheckResult* first_failure() const;
};

// A tuned row's err1 / err2 in AITER's meaning: the mismatch shares of the uniform-routing
// check at M = token (the row's key), or nullopt when the report has no such check.
struct AiterErr {
  double err1 = 0, err2 = 0;
};
[[nodiscard]] std::optional<AiterErr> aiter_err_at(const VerifyReport& report, std::int64_t token);

struct VerifyOptions {
  std::vector<std::int64_t> bucket_ms;  // the bucket's own M values
  // Optional words saying why an M is checked ("lowest M bucket 64 serves"), added to the
  // names of its checks; the boundaries are labelled gate_names::boundary_m.
  std::map<std::int64_t, std::string> m_roles;
  bool boundaries = true;               // add M = 31, 32, 33, 255, 256, 257
  bool concentrated = true;             // also concentrated routing at each bucket M
  // The routing the run times with: also checked at each bucket M when it is neither uniform
  // nor concentrated (those are checked anyway).
  moe::RoutingSpec routing;
  bool graph_replay = true;             // gate 5 at the first bucket M
  moe::Tolerance tolerance;
};

// Holds one shape's weights (host and device) for many verifications.
class Verifier {
 public:
  // base.tokens is ignored. Generates the seeded weights (seconds for DeepSeek shapes), then
  // lets `edit_weights` change them before upload and before any reference is computed: the
  // tests' way to reach inputs the generator never makes (e.g. MXFP4 scales outside the
  // kernels' fast decode range).
  Verifier(const gpu::Device& device, UnitCompiler& compiler, const moe::MoeShape& base,
           std::uint64_t seed, const std::function<void(moe::Weights&)>& edit_weights = {});

  [[nodiscard]] VerifyReport verify(const search::KernelConfig& stage1,
                                    const search::KernelConfig& stage2,
                                    const VerifyOptions& options);

  // One run on fresh seeded inputs (uniform routing) returning y, for "how far did tuning
  // move numerics" comparisons between configurations on identical inputs.
  [[nodiscard]] std::vector<std::uint16_t> run_once(const search::KernelConfig& stage1,
                                                    const search::KernelConfig& stage2,
                                                    std::int64_t M);

  // One run at M tokens with this routing, checked against the reference (sort, write
  // coverage, y and h on the token sample; with check_inputs, input preservation too).
  [[nodiscard]] CheckResult check(const search::KernelConfig& stage1,
                                  const search::KernelConfig& stage2, std::int64_t M,
                                  const moe::RoutingSpec& routing, bool check_inputs = false,
                                  const moe::Tolerance& tolerance = {});

  [[nodiscard]] const moe::MoeShape& shape() const { return m_workload.shape; }
  [[nodiscard]] const moe::Workload& workload() const { return m_workload; }
  [[nodiscard]] const DeviceWeights& device_weights() const { return m_weights; }

 private:
  CheckResult check_graph_replay(const search::KernelConfig& s1, const search::KernelConfig& s2,
                                 std::int64_t M, const moe::Tolerance& tolerance);
  void set_tokens(std::int64_t M, const moe::RoutingSpec& routing, std::uint64_t seed);
  [[nodiscard]] std::uint64_t weights_checksum() const;
  // The reference for the current inputs (set_tokens' arguments identify them). Inputs depend
  // only on (M, routing, seed), never on the configuration, so a sweep over many variants
  // computes each reference once.
  const moe::ReferenceRows& reference_for(std::int64_t M, const moe::RoutingSpec& routing,
                                          std::uint64_t seed);

  const gpu::Device* m_device;
  UnitCompiler* m_compiler;
  std::uint64_t m_seed;
  moe::Workload m_workload;  // weights fixed; shape.tokens, x and routing change per check
  DeviceWeights m_weights;
  // Checksum of the weights as uploaded, computed on the device. Every variant shares them, so
  // one checksum after each verification (compared with this) proves that no kernel wrote them.
  DeviceChecksum m_checksum;
  std::uint64_t m_weights_checksum;
  std::map<std::tuple<std::int64_t, std::string, std::uint64_t>, moe::ReferenceRows> m_references;
  // set_tokens' arguments for the inputs m_workload holds now (x and routing are only ever
  // written by set_tokens, so equal arguments mean equal inputs).
  std::optional<std::tuple<std::int64_t, std::string, std::uint64_t>> m_inputs_key;
};

}  // namespace moetune::exec
