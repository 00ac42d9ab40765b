#pragma once
// How many CTAs of a compiled tile one Hopper SM holds, and which resource stops it there:
// the figure sessions 20 and 25 worked out by hand (a 64-token tile's three CTAs per SM were
// its registers and its LDS at once), from the tile's own registers as ptxas allocated them
// and its shared memory as kernel_traits lays it out. sm_90 only: an AMD CU's occupancy hangs
// on VGPR banks per SIMD and waves per EU, which the AMD compilers' reports do not pin down
// here.
#include <optional>
#include <string>

#include "autotune/search/arch.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::search {

struct Occupancy {
  int ctas_per_sm = 0;
  // What gives that count, "+"-joined where several give it: "registers", "LDS",
  // "threads" (2048 per SM), "CTAs" (32 per SM).
  std::string limited_by;
};

// nullopt for AMD arches and for a register count ptxas did not report (< 1). static_shared:
// the kernel's static shared memory (the compiler's report), added to the dynamic LDS.
[[nodiscard]] std::optional<Occupancy> sm90_occupancy(const KernelConfig& config, Arch arch, int registers,
                                                      int static_shared = 0);

// "3 (registers+LDS)", or "-" where sm90_occupancy has no figure.
[[nodiscard]] std::string to_string(const std::optional<Occupancy>& occupancy);

}  // namespace moetune::search
