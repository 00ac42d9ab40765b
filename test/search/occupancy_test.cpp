// CTAs per SM of a compiled tile on sm_90: the registers ptxas gave it against the LDS its
// configuration lays out, as sessions 20 and 25 worked them out by hand.
#include <catch2/catch.hpp>

#include "autotune/search/kernel_traits.hpp"
#include "autotune/search/occupancy.hpp"

using namespace moetune;
using namespace moetune::search;

namespace {

// The 64-token wgmma stage one of session 20's default: 8 warps, a ring of three 128-K
// k-tiles (76544 B of LDS with its row slots).
KernelConfig tile64() {
  KernelConfig c;
  c.stage = 1;
  c.block_m = 64, c.block_n = 64, c.block_k = 128, c.warps = 8, c.stages = 3, c.waves = 3;
  c.wgmma = true, c.wgmma_k16 = true;
  return c;
}

}  // namespace

TEST_CASE("sm_90 occupancy: the tile's registers against its LDS", "[search]") {
  auto const c = tile64();
  REQUIRE(kernel_traits(c, Arch::sm_90).smem_bytes == 76544);
  // 80 registers: 65536 / (80 x 256) = 3.2, and 233472 / (76544 + 1024) = 3.01: both give 3.
  auto const at80 = sm90_occupancy(c, Arch::sm_90, 80);
  REQUIRE(at80);
  CHECK(at80->ctas_per_sm == 3);
  CHECK(at80->limited_by == "registers+LDS");
  CHECK(to_string(at80) == "3 (registers+LDS)");
  // 64 registers would allow 4; the LDS still holds 3.
  CHECK(to_string(sm90_occupancy(c, Arch::sm_90, 64)) == "3 (LDS)");
  // Registers are allocated 8 per lane at a time: 81 counts as 88, which holds 2.
  CHECK(to_string(sm90_occupancy(c, Arch::sm_90, 81)) == "2 (registers)");
  // Static shared memory adds to the dynamic LDS: 1 KB more leaves room for only 2.
  CHECK(to_string(sm90_occupancy(c, Arch::sm_90, 64, 1024)) == "2 (LDS)");
}

TEST_CASE("sm_90 occupancy: threads and the CTA limit", "[search]") {
  KernelConfig small;  // 2 warps, FMA, a small tile: registers and LDS allow more than 16
  small.block_m = 16, small.block_n = 32, small.block_k = 64, small.warps = 2, small.nonkdim = 0, small.stages = 1;
  auto const o = sm90_occupancy(small, Arch::sm_90, 32);
  REQUIRE(o);
  // 2048 threads / 64 = 32 and the 32-CTA limit, and at 32 registers 65536 / (32 x 64) = 32 too.
  CHECK(o->ctas_per_sm == 32);
  CHECK(o->limited_by == "registers+threads+CTAs");
}

TEST_CASE("sm_90 occupancy has no figure elsewhere or without a register count", "[search]") {
  CHECK_FALSE(sm90_occupancy(tile64(), Arch::gfx942, 80));
  CHECK_FALSE(sm90_occupancy(tile64(), Arch::sm_90, 0));
  CHECK_FALSE(sm90_occupancy(tile64(), Arch::sm_90, -1));
  CHECK(to_string(std::optional<Occupancy>{}) == "-");
}
