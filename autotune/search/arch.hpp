#pragma once
// The compile targets the search knows, and the per-target limits its validity rules use.
#include <string>
#include <string_view>

namespace moetune::search {

enum class Arch { sm_90, gfx90a, gfx942, gfx950 };

[[nodiscard]] std::string_view to_string(Arch arch);
// "sm_90", "sm_90a" (same rules), "gfx90a", "gfx942", "gfx950"; throws moetune::Error otherwise.
[[nodiscard]] Arch parse_arch(std::string_view text);

struct ArchLimits {
  int warp_size;           // 32 (NVIDIA) or 64 (CDNA wave64)
  int shared_bytes;        // largest dynamic shared memory / LDS one CTA may use
  int registers_per_lane;  // architectural maximum per thread (VGPR+AGPR on CDNA)
  int max_waves;           // the occupancy knob's upper bound
  bool nvidia;
  // One NVIDIA SM's capacities, what resident CTAs share (0 on AMD, whose rules use waves per
  // EU instead): registers, shared memory (of which the SM keeps shared_reserved_per_cta for
  // each resident CTA), threads and CTAs.
  int registers_per_sm = 0;
  int shared_per_sm = 0;
  int shared_reserved_per_cta = 0;
  int threads_per_sm = 0;
  int ctas_per_sm = 0;
};
[[nodiscard]] ArchLimits limits(Arch arch);

}  // namespace moetune::search
