#include "autotune/search/occupancy.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "autotune/search/kernel_traits.hpp"

namespace moetune::search {

std::optional<Occupancy> sm90_occupancy(const KernelConfig& config, Arch arch, int registers, int static_shared) {
  if (arch != Arch::sm_90 || registers < 1) return std::nullopt;
  auto const t = kernel_traits(config, arch);
  int const threads = std::max(1, t.threads);
  // Registers go to a warp in 256s (8 per lane); the SM has 64 K of them.
  int const per_thread = (registers + 7) / 8 * 8;
  // 228 KB of shared memory per SM, of which the SM keeps 1 KB per resident CTA.
  int const lds = t.smem_bytes + std::max(0, static_shared) + 1024;
  std::array<std::pair<int, char const*>, 4> const limits{{{65536 / (per_thread * threads), "registers"},
                                                            {233472 / lds, "LDS"},
                                                            {2048 / threads, "threads"},
                                                            {32, "CTAs"}}};
  Occupancy o;
  o.ctas_per_sm = std::min_element(limits.begin(), limits.end())->first;
  for (auto const& [count, name] : limits) {
    if (count != o.ctas_per_sm) continue;
    if (!o.limited_by.empty()) o.limited_by += "+";
    o.limited_by += name;
  }
  return o;
}

std::string to_string(const std::optional<Occupancy>& occupancy) {
  return occupancy ? fmt::format("{} ({})", occupancy->ctas_per_sm, occupancy->limited_by) : "-";
}

}  // namespace moetune::search
