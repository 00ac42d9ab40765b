#pragma once
// Host mirror of kernels/moe_config.cuh: the quantities a configuration implies (matrix path,
// fragment counts, shared memory, a register estimate). Validity rules, rendering and launch
// planning all read these, so a change to MoeConfig's derivations belongs here too.
#include "autotune/search/arch.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::search {

// Matches kernels/mma_paths.cuh's MmaPath values (the rendered TU passes the number).
enum class MmaPath { fma = 0, sm80 = 1, mfma16 = 2, mfma32 = 3, smfma16 = 4, smfma32 = 5 };

[[nodiscard]] std::string_view to_string(MmaPath path);
// The instruction family a configuration uses on an arch; nullopt-free: nonkdim values an arch
// does not have are reported by the validity rules, here they map to the closest path.
[[nodiscard]] MmaPath mma_path(const KernelConfig& cfg, Arch arch);

struct KernelTraits {
  MmaPath path;
  int fw, lpr, mh, acc;  // fragment width (weight rows), lanes per row, fragment rows, accs
  int threads, nv, warps_m, warps_n, warp_rows, mt, nt, run, chunk;
  int a_row_bytes, a_bytes, c_bytes, smem_bytes;
  int a_vecs_per_thread;
  // Swapped operands (cfg.swap_ab): tokens per MMA fragment, weight rows a lane supplies, and
  // the split of the warps into row-fragment groups (warps_n above) and K groups.
  int tokens_per_frag = 0, rows_per_lane = 0, warps_k = 1;
  int accumulators;         // fp32 accumulators per lane
  int estimated_registers;  // rough per-lane estimate (see validity.cpp)
};

// Integer divisions are floored; the validity rules reject the configurations where that
// matters before anything reads the results.
[[nodiscard]] KernelTraits kernel_traits(const KernelConfig& cfg, Arch arch);

}  // namespace moetune::search
