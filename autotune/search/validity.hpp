#pragma once
// Validity rules: the conditions kernels/moe_config.cuh static_asserts, plus resource limits
// of the arch and fit to the shape, each returning a readable reason. A candidate that fails
// one is recorded as `pruned` with that reason and never compiled.
#include <optional>
#include <string>
#include <vector>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::search {

// Largest expert count the one-CTA GPU sort handles (kernels/moe_sort.cuh sort_max_experts).
inline constexpr int sort_max_experts = 512;

// block_n of a wgmma stage with `warps` warps: one 16-row weight fragment per warp, which is 8
// h columns (gate and up rows) in stage one and 16 y columns in stage two.
[[nodiscard]] constexpr int wgmma_block_n(int stage, int warps) { return (stage == 1 ? 8 : 16) * warps; }

// The first rule the configuration breaks on this arch (shape-independent), or nullopt.
[[nodiscard]] std::optional<std::string> check_config(const KernelConfig& cfg, Arch arch);
// check_config plus the rules that depend on the shape (dims, data path, layout); the
// configuration's dtype/gate_up/doweight must be the shape's. tokens is not read.
[[nodiscard]] std::optional<std::string> check_config(const KernelConfig& cfg, Arch arch,
                                                      const moe::MoeShape& shape);
// Every rule broken, not only the first (for reports and tests).
[[nodiscard]] std::vector<std::string> all_violations(const KernelConfig& cfg, Arch arch,
                                                      const moe::MoeShape* shape = nullptr);

// Why a stage one and a stage two cannot run as one pipeline, or nullopt: they read one sort
// (sort_block_m: the same block_m, or a stage two reading it in halves) and stage two reads h
// in the format stage one writes (h_bf16 in both or in neither).
[[nodiscard]] std::optional<std::string> pair_violation(const KernelConfig& stage1, const KernelConfig& stage2);

// pair_violation for one configuration of each stage given in either order: the partner
// searches (the tuner's, `verify`'s) hold a subject and a candidate of the other stage.
[[nodiscard]] inline std::optional<std::string> pair_violation_either(const KernelConfig& a, const KernelConfig& b) {
  return a.stage == 1 ? pair_violation(a, b) : pair_violation(b, a);
}

}  // namespace moetune::search
