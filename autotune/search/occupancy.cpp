#include "autotune/search/occupancy.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "autotune/search/kernel_traits.hpp"

namespace moetune::search {

std::optional<Occupancy> sm90_occupancy(const KernelConfig& config, Arch arch, int registers, int static_shared) {
  if (arch != Arch::sm_90 || registers < 1) return std::nullopt;
  auto const sm = limits(arch);
  auto const t = kernel_traits(config, arch);
  int const threads = std::max(1, t.threads);
  // Registers go to a warp in 256s (8 per lane).
  int const per_thread = (registers + 7) / 8 * 8;
  int const lds = t.smem_bytes + std::max(0, static_shared) + sm.shared_reserved_per_cta;
  std::array<std::pair<int, char const*>, 4> const caps{{{sm.registers_per_sm / (per_thread * threads), "registers"},
                                                          {sm.shared_per_sm / lds, "LDS"},
                                                          {sm.threads_per_sm / threads, "threads"},
                                                          {sm.ctas_per_sm, "CTAs"}}};
  Occupancy o;
  o.ctas_per_sm = std::min_element(caps.begin(), caps.end())->first;
  for (auto const& [count, name] : caps) {
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
