#include "autotune/search/arch.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::search {

std::string_view to_string(Arch arch) {
  switch (arch) {
    case Arch::sm_90: return "sm_90";
    case Arch::gfx90a: return "gfx90a";
    case Arch::gfx942: return "gfx942";
    case Arch::gfx950: return "gfx950";
  }
  return "?";
}

Arch parse_arch(std::string_view text) {
  if (text == "sm_90" || text == "sm_90a") return Arch::sm_90;
  if (text == "gfx90a") return Arch::gfx90a;
  if (text == "gfx942") return Arch::gfx942;
  if (text == "gfx950") return Arch::gfx950;
  throw Error(fmt::format("unknown arch '{}': expected sm_90, gfx90a, gfx942 or gfx950", text));
}

ArchLimits limits(Arch arch) {
  switch (arch) {
    // sm_90: 227 KB of opt-in dynamic shared memory per CTA, 255 registers per thread; per SM
    // 64 K registers, 228 KB of shared memory less 1 KB per resident CTA, 2048 threads, 32 CTAs.
    case Arch::sm_90: return {32, 227 * 1024, 255, 8, true, 65536, 228 * 1024, 1024, 2048, 32};
    // CDNA2/3: 64 KB LDS per workgroup; 512 unified VGPR+AGPR per lane; waves/EU up to 8.
    case Arch::gfx90a: return {64, 64 * 1024, 512, 8, false};
    case Arch::gfx942: return {64, 64 * 1024, 512, 8, false};
    // CDNA4: 160 KB LDS.
    case Arch::gfx950: return {64, 160 * 1024, 512, 8, false};
  }
  return {32, 0, 0, 0, true};
}

}  // namespace moetune::search
