#include <algorithm>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/kernel_traits.hpp"
#include "autotune/search/render.hpp"
#include "autotune/search/search_space.hpp"
#include "autotune/search/validity.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::search;

namespace {

moe::MoeShape backbone(moe::DtypePath d = moe::DtypePath::a16w4, Arch arch = Arch::sm_90) {
  moe::MoeShape s;
  s.tokens = 8, s.hidden = 5120, s.inter = 640, s.experts = 384, s.topk = 6, s.dtype = d;
  s.fp8_flavor = arch == Arch::gfx942 ? moe::Fp8Flavor::fnuz : moe::Fp8Flavor::ocp;
  return s;
}

std::filesystem::path spaces() { return test::source_dir() / "search_spaces"; }

std::filesystem::path write(const char* test, const std::string& text) {
  auto const p = test::scratch_dir(test) / "space.json";
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("every search space file loads and every candidate name round-trips", "[search]") {
  int files = 0;
  for (auto const& entry : std::filesystem::directory_iterator(spaces())) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    INFO(entry.path().string());
    auto const space = load_search_space(entry.path());
    REQUIRE(!space.arches.empty());
    for (auto const& a : space.arches) {
      for (auto d : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
        auto const cands = enumerate(space, a.arch, backbone(d, a.arch));
        int valid = 0;
        for (auto const& c : cands) {
          auto const n = c.config.name();
          INFO(n);
          CHECK(parse_kernel_name(n) == c.config);
          if (!c.pruned_reason) ++valid;
        }
        CHECK(valid > 0);
      }
    }
  }
  CHECK(files >= 5);
}

// The bound keeps the CI compile step short; sm_90 covers five main loops (tokens on M,
// swapped, staged, staged with fragment decode, wgmma) and the wgmma loop's three decodes (64-K,
// k16, k32), so 20. The fragment-decode entries list both
// weight layouts: A16W4 decodes the repacked one and A8W4 the natural one, so each dtype prunes
// the other's by that rule and by no other; A8W4 prunes the k16- and k32-decode wgmma entries by theirs,
// the other dtypes the entries keeping h or reading x in bf16 by theirs.
TEST_CASE("ci.json keeps 4 to 24 valid variants per stage per arch", "[search]") {
  auto const space = load_search_space(spaces() / "ci.json");
  std::set<Arch> arches;
  for (auto const& a : space.arches) {
    arches.insert(a.arch);
    for (auto d : {moe::DtypePath::a16w4, moe::DtypePath::a8w4}) {
      int valid[3] = {0, 0, 0};
      for (auto const& c : enumerate(space, a.arch, backbone(d, a.arch))) {
        INFO(to_string(a.arch) << " " << c.config.name() << " " << c.pruned_reason.value_or(""));
        std::string const layout_rule = d == moe::DtypePath::a8w4 ? "a8w4 fragment decode turns natural"
                                                                   : "a16w4 fragment decode reads whole words";
        bool const fd_other_layout = c.config.fragment_decode && c.pruned_reason.value_or("").find(layout_rule) == 0;
        bool const k16_a8w4 = (c.config.wgmma_k16 || c.config.wgmma_k32) && d == moe::DtypePath::a8w4 &&
                              (c.pruned_reason.value_or("").find("wgmma_k16 1 with a8w4") == 0 ||
                               c.pruned_reason.value_or("").find("wgmma_k32 1 with a8w4") == 0);
        bool const hb_not_a8w4 = c.config.h_bf16 && d != moe::DtypePath::a8w4 &&
                                 c.pruned_reason.value_or("").find("h_bf16 1 with") == 0;
        bool const xb_not_a8w4 = c.config.x_bf16 && d != moe::DtypePath::a8w4 &&
                                 c.pruned_reason.value_or("").find("x_bf16 1 with") == 0;
        // The 128-token three-warpgroup pair (session 29) is A16W4's; A8W4 compiles it only as
        // the twin reading x and keeping h in bf16, its own e4m3 kernels stop at 64 tokens.
        bool const a8w4_128 = d == moe::DtypePath::a8w4 && c.config.block_m == 128 &&
                              c.pruned_reason.value_or("").find("block_m 128 with a8w4 wgmma") == 0;
        // The register GEMV (session 41) is A16W4's.
        bool const gv_a8w4 = c.config.gemv && d == moe::DtypePath::a8w4 &&
                             c.pruned_reason.value_or("").find("gemv 1 with a non-A16W4 main loop") == 0;
        CHECK((!c.pruned_reason || fd_other_layout || k16_a8w4 || hb_not_a8w4 || xb_not_a8w4 || a8w4_128 || gv_a8w4));
        if (!c.pruned_reason) ++valid[c.config.stage];
      }
      CHECK(valid[1] >= 4);
      CHECK(valid[1] <= 24);
      CHECK(valid[2] >= 4);
      CHECK(valid[2] <= 24);
    }
  }
  CHECK(arches.size() == 4);
}

TEST_CASE("search space errors name the file and the JSON path", "[search]") {
  using Catch::Contains;
  auto p = write("space_bad_value", R"({"arch":"sm_90","stage1":{"block_m":[16,"x"]},"stage2":{}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("space.json") && Contains("$.stage1.block_m[1]"));
  p = write("space_bad_knob", R"({"arch":"sm_90","stage1":{"blockm":[16]},"stage2":{}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage1.blockm"));
  p = write("space_bad_arch", R"({"arch":"sm_80","stage1":{},"stage2":{}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.arch"));
  p = write("space_missing_stage", R"({"arch":"sm_90","stage1":{}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage2"));
  p = write("space_bad_mode", R"({"arch":"sm_90","stage1":{},"stage2":{"stage2_mode":["sum"]}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage2.stage2_mode[0]"));
  p = write("space_bad_swap", R"({"arch":"sm_90","stage1":{"swap_ab":[0,2]},"stage2":{}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage1.swap_ab[1]") && Contains("0 or 1"));
  p = write("space_bad_staged", R"({"arch":"sm_90","stage1":{},"stage2":{"staged":[1,3]}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage2.staged[1]") && Contains("0 or 1"));
  p = write("space_bad_k32", R"({"arch":"sm_90","stage1":{"wgmma_k32":[0,2]},"stage2":{}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage1.wgmma_k32[1]") && Contains("0 or 1"));
  p = write("space_bad_gemv", R"({"arch":"sm_90","stage1":{},"stage2":{"gemv":[1,3]}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage2.gemv[1]") && Contains("0 or 1"));
  p = write("space_bad_hb", R"({"arch":"sm_90","stage1":{},"stage2":{"h_bf16":[2]}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage2.h_bf16[0]") && Contains("0 or 1"));
  // x_bf16 is stage one's knob (only stage one reads x).
  p = write("space_xb_stage2", R"({"arch":"sm_90","stage1":{"x_bf16":[0,1]},"stage2":{"x_bf16":[1]}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage2.x_bf16") && Contains("unknown stage-two knob"));
  // sort_halves is stage two's knob (only a stage two reads the sort in halves).
  p = write("space_hs_stage1", R"({"arch":"sm_90","stage1":{"sort_halves":[1]},"stage2":{"sort_halves":[0,1]}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage1.sort_halves") && Contains("unknown stage-one knob"));
  p = write("space_hs_bad", R"({"arch":"sm_90","stage1":{},"stage2":{"sort_halves":[2]}})");
  CHECK_THROWS_WITH(load_search_space(p), Contains("$.stage2.sort_halves[0]") && Contains("0 or 1"));
  p = write("space_syntax", "{\n  \"arch\": \"sm_90\",\n  oops\n}");
  CHECK_THROWS_WITH(load_search_space(p), Contains("space.json:3:"));
  CHECK_NOTHROW(load_search_space(spaces() / "ci.json").for_arch(Arch::sm_90));
}

TEST_CASE("validity rules give readable reasons", "[search]") {
  using Catch::Contains;
  KernelConfig c;  // s1 a16w4 t16x64x256 w4 kp1 nk16 st2
  c.block_m = 16, c.block_n = 64;
  CHECK(!check_config(c, Arch::sm_90));
  auto k = c;
  k.block_k = 48;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("block_k 48 is not a multiple of 32 (MX scale granularity)"));
  k = c, k.kpack = 2, k.block_k = 128;
  CHECK_THAT(check_config(k, Arch::gfx950).value(), Contains("kpack 2 on gfx950: only 1 is valid"));
  k = c, k.nonkdim = 32;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("nonkdim 32 on sm_90"));
  k = c, k.block_m = 256, k.block_n = 256, k.block_k = 512, k.warps = 4;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("exceed 128"));
  k = c, k.block_m = 64, k.block_n = 256, k.block_k = 512, k.warps = 16, k.stages = 1;
  CHECK_THAT(all_violations(k, Arch::sm_90).back(), Contains("limit of sm_90") || Contains("registers"));
  k = c, k.block_m = 128, k.block_n = 128, k.block_k = 128, k.warps = 8, k.stages = 1;
  CHECK_THAT(check_config(k, Arch::gfx942).value(), Contains("exceeds the 64 KB limit of gfx942"));
  k = c, k.ksplit = 2;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("stage one splits K only in the wgmma main loop"));
  k = c, k.stage = 2, k.ksplit = 2, k.stage2_mode = Stage2Mode::reduce, k.block_n = 128;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("needs atomic"));
  k = c, k.block_k = 64;  // sm80 chunk is 128 K
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("block_k 64 is not a multiple of 128"));
  k = c, k.nonkdim = 32, k.block_m = 16, k.block_k = 128;
  CHECK_THAT(check_config(k, Arch::gfx942).value(), Contains("32-row"));
  k = c, k.dtype = DtypePath::a8w4, k.fp8 = Fp8Flavor::ocp, k.block_k = 128;
  CHECK_THAT(check_config(k, Arch::gfx942).value(), Contains("e4m3fnuz"));
  // Swapped operands: block_m is the MMA's N (8 on sm_90, 16 on the 16x16 MFMA), block_n
  // fills 16-row fragments, stages is a copy ring of 2 to 8 k-tiles.
  auto w = c;
  w.swap_ab = true, w.block_m = 8, w.block_n = 8, w.block_k = 256, w.stages = 2;
  CHECK(!check_config(w, Arch::sm_90));
  k = w, k.swap_ab = false;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("block_m 8 is not a positive multiple of 16"));
  CHECK_THAT(check_config(w, Arch::gfx942).value(), Contains("not a multiple of 16 (the MMA's N)"));
  k = w, k.block_m = 16, k.block_k = 128;  // wave64: a 64-lane ring, 43 KB of LDS
  CHECK(!check_config(k, Arch::gfx942));
  k = w, k.stages = 1;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("copy ring of 2 to 8"));
  k = w, k.nonkdim = 0;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("only 16 (16 weight rows per MMA)"));
  k = w, k.block_k = 64;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("block_k 64 is not a multiple of 128"));
  k = w, k.dtype = DtypePath::a8w4;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("quantised per 32 columns"));
  k = w, k.stage = 2, k.block_n = 24;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("16-row weight fragments"));
  k = w, k.stage = 2, k.block_n = 48, k.warps = 2;  // 3 fragments over 2 warps
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("do not split over 2 warps"));
  k = w, k.block_k = 256, k.stages = 8, k.block_m = 64, k.block_n = 64, k.warps = 8;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("shared memory"));
  // The staged main loop: sm_90 only, MXFP4 weights, block_k a multiple of 64, a ring of 3-5
  // k-tiles, weight fragments loaded in pairs.
  auto g = c;
  g.staged = true, g.block_m = 64, g.block_n = 64, g.block_k = 64, g.stages = 3, g.warps = 4;
  CHECK(!check_config(g, Arch::sm_90));
  CHECK_THAT(check_config(g, Arch::gfx942).value(), Contains("no gfx942 variant"));
  k = g, k.dtype = DtypePath::bf16;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("bf16 weights use the register main loop"));
  k = g, k.swap_ab = true;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("pick one"));
  k = g, k.block_k = 96;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("not a multiple of 64 (128-byte swizzled"));
  k = g, k.stages = 2;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("copy ring of 3 to 5"));
  k = g, k.kpack = 2;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("kpack 2 in the staged main loop"));
  k = g, k.block_n = 32, k.warps = 8;  // 64 weight rows over 8 warps: one fragment each
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("in pairs (ldmatrix.x4)"));
  k = g, k.block_m = 128, k.block_n = 128, k.block_k = 128, k.warps = 8, k.stages = 4;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("shared memory"));
  // Repacked MXFP4 weights: sm_90, MXFP4, read by the staged or the swapped main loop only.
  k = g, k.repacked = true;
  CHECK(!check_config(k, Arch::sm_90));
  k.staged = false, k.swap_ab = true, k.block_m = 8, k.block_n = 8, k.block_k = 256, k.stages = 2;
  CHECK(!check_config(k, Arch::sm_90));
  CHECK_THAT(check_config(k, Arch::gfx942).value(), Contains("gfx942 reads the natural layout"));
  k.swap_ab = false, k.block_m = 32, k.block_n = 64, k.stages = 2;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("swapped and the staged main loops only"));
  k = g, k.repacked = true, k.staged = false, k.swap_ab = true, k.dtype = DtypePath::bf16, k.block_m = 8;
  k.block_n = 8, k.block_k = 256, k.stages = 2;
  CHECK_THAT(check_config(k, Arch::sm_90).value(), Contains("bf16 weights have none"));
  // Fragment decode: a staged variant with one warp row and 2, 4 or 8 pieces of 32 K per row
  // (the ring's XOR swizzle); A16W4 reads repacked words, A8W4 natural ones as OCP e4m3.
  auto f = g;
  f.repacked = true, f.fragment_decode = true, f.block_m = 32, f.block_k = 128, f.stages = 4;
  CHECK(!check_config(f, Arch::sm_90));
  for (int const bk : {64, 256}) {
    k = f, k.block_k = bk;
    CHECK(!check_config(k, Arch::sm_90));
  }
  for (int const bk : {192, 320, 512}) {
    k = f, k.block_k = bk;
    CAPTURE(bk);
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""),
               Contains(fmt::format("block_k {} with fragment decode: 64, 128 or 256", bk)));
  }
  k = f, k.repacked = false;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("(repack 1)"));
  k = f, k.block_m = 128, k.warps = 8;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_m 128 with fragment decode: at most 64"));
  auto f8 = f;
  f8.dtype = DtypePath::a8w4, f8.repacked = false, f8.fp8 = moe::Fp8Flavor::ocp;
  CHECK(!check_config(f8, Arch::sm_90));
  k = f8, k.repacked = true;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("(repack 0;"));
  k = f8, k.fp8 = moe::Fp8Flavor::fnuz;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("e4m3fnuz has no such MMA"));
  // wgmma: one 16-row fragment per warp (block_n 8 x warps in stage one, 16 x warps in stage
  // two), 8-128 tokens on N, 64-K steps, its own weight layout, sm_90 only.
  KernelConfig wg;
  wg.wgmma = true, wg.block_m = 16, wg.block_n = 32, wg.block_k = 256, wg.warps = 4, wg.stages = 4;
  CHECK(!check_config(wg, Arch::sm_90));
  CHECK(!check_config(wg, Arch::sm_90, backbone()));
  for (int const bm : {8, 32, 64, 128}) {
    k = wg, k.block_m = bm;
    if (bm == 128) k.block_k = 128, k.stages = 3;  // 4 x 256-K stages of 128 tokens: 272 KB
    CAPTURE(bm);
    CHECK(!check_config(k, Arch::sm_90));
  }
  k = wg, k.block_m = 128;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("exceeds the 227 KB limit"));
  k = wg, k.block_m = 24;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_m 24 with wgmma: 8, 16, 32, 64 or 128"));
  k = wg, k.block_n = 64;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_n 64 with wgmma and 4 warps: 32"));
  k = wg, k.stage = 2, k.block_n = 64;
  CHECK(!check_config(k, Arch::sm_90));
  k = wg, k.warps = 8, k.block_n = 64;
  CHECK(!check_config(k, Arch::sm_90));
  k = wg, k.warps = 2, k.block_n = 16;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("warps 2 with wgmma: 4, 8 or 12"));
  // Three warpgroups (session 29): 12 warps with wgmma (the 128-token pair, one CTA per SM), but
  // neither four warpgroups nor 12 warps in any other main loop (a power of two there).
  k = wg, k.warps = 12, k.block_n = 96, k.block_m = 128, k.block_k = 128, k.stages = 3, k.wgmma_k16 = true;
  CHECK(!check_config(k, Arch::sm_90, backbone()));
  k.stage = 2, k.block_n = 192;
  CHECK(!check_config(k, Arch::sm_90, backbone()));
  k = wg, k.warps = 16, k.block_n = 128;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("warps 16 with wgmma: 4, 8 or 12"));
  k = wg, k.wgmma = false, k.warps = 12, k.block_n = 96;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("warps 12 is not a power of two"));
  k = wg, k.block_k = 64;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_k 64 with wgmma: 128 or 256"));
  k = wg, k.stages = 2;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("stages 2 with wgmma: a copy ring of 3 to 8"));
  // The k16 decode: a16w4 wgmma only.
  k = wg, k.wgmma_k16 = true;
  CHECK(!check_config(k, Arch::sm_90, backbone()));
  k.wgmma = false;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("wgmma_k16 1 without wgmma"));
  k = wg, k.wgmma_k16 = true, k.dtype = DtypePath::a8w4, k.fp8 = moe::Fp8Flavor::ocp;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("wgmma_k16 1 with a8w4: the k16 decode is A16W4's"));
  // The k32 decode: a16w4 wgmma only, and not with the k16 one; its A registers count 16.
  k = wg, k.wgmma_k32 = true;
  CHECK(!check_config(k, Arch::sm_90, backbone()));
  CHECK(kernel_traits(k, Arch::sm_90).estimated_registers ==
        kernel_traits(wg, Arch::sm_90).estimated_registers - 16);
  k.wgmma = false;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("wgmma_k32 1 without wgmma"));
  k = wg, k.wgmma_k32 = true, k.dtype = DtypePath::a8w4, k.fp8 = moe::Fp8Flavor::ocp;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("wgmma_k32 1 with a8w4: the k32 decode is A16W4's"));
  k = wg, k.wgmma_k32 = true, k.wgmma_k16 = true;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("wgmma_k16 1 with wgmma_k32 1"));
  // The register GEMV: the wgmma family's layout, its own geometry (one fragment per CTA, 8 or
  // 16 tokens, any warp count up to 16 splitting K in whole 64-K pieces, no ring), A16W4, sm_90.
  {
    KernelConfig gv;
    gv.wgmma = gv.gemv = true, gv.block_m = 8, gv.block_n = 8, gv.block_k = 640, gv.warps = 8, gv.stages = 1;
    CHECK(!check_config(gv, Arch::sm_90, backbone()));
    auto const t = kernel_traits(gv, Arch::sm_90);
    // C tile 8 x 20 floats, then 8 warps x 8 tokens x 16 rows of partial sums, then 8 row slots.
    CHECK(t.smem_bytes == 640 + 8 * 8 * 16 * 4 + 8 * 4);
    CHECK(t.estimated_registers == 4 + 5 * 10 + 16 + 2 + 24);
    k = gv, k.stage = 2, k.block_n = 16, k.block_k = 128, k.warps = 5, k.block_m = 16;
    CHECK(!check_config(k, Arch::sm_90, backbone()));
    k = gv, k.gemv = true, k.wgmma = false;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("gemv 1 without wgmma"));
    k = gv, k.wgmma_k16 = true;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("gemv 1 with wgmma_k16 or wgmma_k32"));
    k = gv, k.block_n = 16;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_n 16 with gemv: 8 (one 16-row weight fragment"));
    k = gv, k.stage = 2;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_n 8 with gemv: 16"));
    k = gv, k.block_m = 32;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_m 32 with gemv: 8 or 16"));
    k = gv, k.block_k = 96;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_k 96 with gemv: a multiple of 64"));
    k = gv, k.block_k = 1088;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_k 1088 with gemv"));
    k = gv, k.warps = 20;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("warps 20 with gemv: 1 to 16"));
    k = gv, k.warps = 5;
    CHECK(!check_config(k, Arch::sm_90));
    k = gv, k.stages = 3;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("stages 3 with gemv: 1"));
    k = gv, k.ksplit = 2;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("ksplit 2 in a gemv stage one"));
    k = gv, k.stage = 2, k.block_n = 16, k.block_k = 128, k.ksplit = 2;
    CHECK(!check_config(k, Arch::sm_90, backbone()));  // stage two's split adds atomically, as every loop's
    k = gv, k.dtype = DtypePath::a8w4, k.fp8 = moe::Fp8Flavor::ocp;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("gemv 1 with a non-A16W4 main loop"));
    k = gv, k.dtype = DtypePath::a8w4, k.fp8 = moe::Fp8Flavor::ocp, k.x_bf16 = true;
    CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("gemv 1 with a non-A16W4 main loop"));
    k = gv;
    CHECK_THAT(check_config(k, Arch::gfx942).value_or(""), Contains("gfx942 has none"));
    moe::MoeShape odd = backbone();
    odd.hidden = 5120 + 32;
    CHECK_THAT(check_config(gv, Arch::sm_90, odd).value_or(""), Contains("model_dim 5152 with gemv: a multiple of 64"));
  }
  // The ring keeps token rows (1024-aligned) and weight parts (128-aligned) apart, so the
  // 64-token tiles with 128-K k-tiles and a ring of 3 take 3 x (16384 + 8704) + 1024 B plus
  // their 64 row slots: three CTAs per SM fit with the 1 KB each reserves (session 20's
  // default), four do not.
  {
    KernelConfig t64 = wg;
    t64.block_m = 64, t64.block_n = 64, t64.block_k = 128, t64.warps = 8, t64.stages = 3, t64.wgmma_k16 = true;
    CHECK(kernel_traits(t64, Arch::sm_90).smem_bytes == 3 * (16384 + 8704) + 1024 + 64 * 4);
    t64.waves = 3;
    CHECK(!check_config(t64, Arch::sm_90, backbone()));
    t64.waves = 4;
    auto const v = all_violations(t64, Arch::sm_90);
    CHECK(std::any_of(v.begin(), v.end(), [](auto const& r) {
      return r == "waves 4 CTAs of 76544 B shared memory exceed 228 KB per SM";
    }));
  }
  // Stage one's split-K: a cluster of 2..8 wgmma CTAs, each at least one k-tile of model_dim.
  k = wg, k.ksplit = 4;
  CHECK(!check_config(k, Arch::sm_90, backbone()));
  k.ksplit = 16;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("ksplit 16 in stage one: a cluster of at most 8 CTAs"));
  k = wg, k.ksplit = 2, k.wgmma = false, k.swap_ab = true, k.block_n = 8;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("stage one splits K only in the wgmma main loop"));
  {
    auto narrow = backbone();
    narrow.hidden = 512;  // two 256-K k-tiles
    k = wg, k.ksplit = 4;
    CHECK_THAT(check_config(k, Arch::sm_90, narrow).value_or(""), Contains("ksplit 4 exceeds the 2 block_k tiles of model_dim 512"));
  }
  k = wg, k.repacked = true;
  {
    auto const v = all_violations(k, Arch::sm_90);
    CHECK(std::any_of(v.begin(), v.end(), [](auto const& r) { return r.find("repack must be 0") != std::string::npos; }));
  }
  k = wg, k.staged = true;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("wgmma is a main loop of its own"));
  k = wg, k.dtype = DtypePath::bf16;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("bf16 weights use the register main loop"));
  CHECK_THAT(check_config(wg, Arch::gfx950).value_or(""), Contains("gfx950 has none"));
  auto w8 = wg;
  w8.dtype = DtypePath::a8w4, w8.fp8 = moe::Fp8Flavor::ocp;
  CHECK(!check_config(w8, Arch::sm_90, backbone(DtypePath::a8w4, Arch::sm_90)));
  k = w8, k.block_m = 128, k.warps = 8, k.block_n = 64;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("block_m 128 with a8w4 wgmma: at most 64"));
  k = w8, k.fp8 = moe::Fp8Flavor::fnuz;
  CHECK_THAT(check_config(k, Arch::sm_90).value_or(""), Contains("e4m3fnuz has no such wgmma"));
  {
    auto odd = backbone();
    odd.hidden = 5120 + 32;  // stage one's K: not in 64s
    CHECK_THAT(check_config(wg, Arch::sm_90, odd).value_or(""), Contains("model_dim 5152 with wgmma: a multiple of 64"));
    auto ragged = backbone(DtypePath::a8w4, Arch::sm_90);
    k = w8, k.stage = 2, k.block_n = 64, k.block_k = 256;  // inter_dim 640 = 2.5 k-tiles of 256
    CHECK_THAT(check_config(k, Arch::sm_90, ragged).value_or(""),
               Contains("inter_dim 640 with a8w4 wgmma: a multiple of 128 and of block_k 256"));
    k.block_k = 128;
    CHECK(!check_config(k, Arch::sm_90, ragged));
  }
  {
    // h kept in bf16: A8W4 only; its stage two follows the A16W4 stage two's rules (the k16
    // decode, which A8W4 prunes, is valid there), and a pair must agree on it.
    auto const a8 = backbone(DtypePath::a8w4, Arch::sm_90);
    auto hb2 = parse_kernel_name("moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic");
    CHECK(all_violations(hb2, Arch::sm_90, &a8).empty());
    auto no_hb = hb2;
    no_hb.h_bf16 = false;
    CHECK_THAT(check_config(no_hb, Arch::sm_90, a8).value_or(""), Contains("wgmma_k16 1 with a8w4"));
    auto wrong_dtype = hb2;
    wrong_dtype.dtype = DtypePath::a16w4;
    CHECK_THAT(check_config(wrong_dtype, Arch::sm_90, backbone()).value_or(""),
               Contains("h_bf16 1 with a16w4: only A8W4"));
    // The shape's dtype is still the name's: an A8W4 stage two is not an A16W4 layer's.
    CHECK_THAT(check_config(hb2, Arch::sm_90, backbone()).value_or(""),
               Contains("dtype path a8w4 does not match the shape's a16w4"));
    auto fnuz = hb2;
    fnuz.fp8 = moe::Fp8Flavor::fnuz;
    CHECK_THAT(check_config(fnuz, Arch::sm_90).value_or(""), Contains("uses OCP e4m3 (fp8), not e4m3fnuz"));
    auto const hb1 = parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_hb_gi_dw0");
    CHECK(all_violations(hb1, Arch::sm_90, &a8).empty());
    CHECK(!pair_violation(hb1, hb2));
    auto fp8_h1 = hb1;
    fp8_h1.h_bf16 = false;
    CHECK_THAT(pair_violation(fp8_h1, hb2).value_or(""),
               Contains("stage one writes h as fp8 codes and scales but stage two reads bf16"));
    auto other_m = hb1;
    other_m.block_m = 16, other_m.block_k = 256;
    CHECK_THAT(pair_violation(other_m, hb2).value_or(""), Contains("disagree on block_m (16 and 64)"));
  }
  {
    // x read in bf16: an A8W4 stage one with the wgmma main loop, checked by the A16W4 stage
    // one's rules (the k16 decode and 128-token blocks, which A8W4's own loop prunes, are valid).
    auto const a8 = backbone(DtypePath::a8w4, Arch::sm_90);
    auto const xb = parse_kernel_name("moetune_s1_a8w4_fp8_t128x64x128_w8_kp1_nk16_wv0_st3_wg_xb_gi_dw0");
    CHECK(all_violations(xb, Arch::sm_90, &a8).empty());
    auto no_xb = xb;
    no_xb.x_bf16 = false;
    CHECK_THAT(check_config(no_xb, Arch::sm_90, a8).value_or(""), Contains("block_m 128 with a8w4 wgmma"));
    auto k16 = parse_kernel_name("moetune_s1_a8w4_fp8_t16x64x256_w8_kp1_nk16_wv0_st3_wg_k16_hb_xb_gi_dw0");
    CHECK(all_violations(k16, Arch::sm_90, &a8).empty());
    k16.x_bf16 = false;
    CHECK_THAT(check_config(k16, Arch::sm_90, a8).value_or(""), Contains("wgmma_k16 1 with a8w4"));
    auto a16 = xb;
    a16.dtype = DtypePath::a16w4;
    CHECK_THAT(check_config(a16, Arch::sm_90, backbone()).value_or(""),
               Contains("x_bf16 1 with a16w4: only A8W4"));
    CHECK_THAT(check_config(xb, Arch::sm_90, backbone()).value_or(""),
               Contains("dtype path a8w4 does not match the shape's a16w4"));
    auto s2 = parse_kernel_name("moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic");
    REQUIRE(all_violations(s2, Arch::sm_90, &a8).empty());
    s2.x_bf16 = true;
    CHECK_THAT(check_config(s2, Arch::sm_90, a8).value_or(""), Contains("x_bf16 1 in stage two"));
    auto staged = parse_kernel_name("moetune_s1_a8w4_fp8_t16x64x128_w4_kp1_nk16_wv0_st3_stg_fd_gi_dw0");
    staged.x_bf16 = true;
    CHECK_THAT(check_config(staged, Arch::sm_90, a8).value_or(""), Contains("x_bf16 1 needs the wgmma main loop"));
    auto fnuz = xb;
    fnuz.fp8 = moe::Fp8Flavor::fnuz;
    CHECK_THAT(check_config(fnuz, Arch::sm_90).value_or(""), Contains("uses OCP e4m3 (fp8), not e4m3fnuz"));
    // x's format is stage one's alone: it pairs with either stage two of its h format.
    auto const s2_fp8_h = parse_kernel_name("moetune_s2_a8w4_fp8_t128x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic");
    CHECK(!pair_violation(xb, s2_fp8_h));
  }
  // Shape-dependent rules.
  auto s = backbone();
  s.inter = 96;
  k = c, k.block_n = 128, k.warps = 8;
  CHECK_THAT(check_config(k, Arch::sm_90, s).value(), Contains("block_n 128 exceeds the output width 96"));
  s = backbone(), s.experts = 1024;
  CHECK_THAT(check_config(c, Arch::sm_90, s).value(), Contains("1024 experts"));
}

TEST_CASE("rendering instantiates exactly the configuration and names its kernels", "[search]") {
  KernelConfig c;
  c.block_n = 64;
  auto const s1 = render(c, Arch::sm_90);
  CHECK(s1.unit_name == c.name());
  CHECK_THAT(s1.source, Catch::Contains("#include \"moe_stage1.cuh\""));
  CHECK_THAT(s1.source, Catch::Contains("MOETUNE_INSTANTIATE_STAGE1(moetune::MoeConfig<1,0,32,64,256,4,1,1,0,2,1,0,0,0,0,0,0,0,0,0,0>);"));
  REQUIRE(s1.kernel_names.size() == 3);
  CHECK(s1.primary_kernel == 2);  // the tile the unit is named for, after the sorts
  CHECK(s1.kernel_names[0] == "moetune::moe_sort");
  CHECK(s1.kernel_names[1] == "moetune::moe_sort_multi");
  CHECK(s1.kernel_names[2] == "moetune::moe_stage1<moetune::MoeConfig<1,0,32,64,256,4,1,1,0,2,1,0,0,0,0,0,0,0,0,0,0>>");
  {
    auto sw = parse_kernel_name("moetune_s1_a16w4_bf16_t8x8x256_w4_kp1_nk16_wv0_st2_sab_gi_dw0");
    CHECK(render(sw, Arch::sm_90).kernel_names[2] ==
          "moetune::moe_stage1<moetune::MoeConfig<1,0,8,8,256,4,1,1,0,2,1,0,0,0,0,1,0,0,0,0,0>>");
    // On AMD the swapped kernels take the plain 16x16 MFMA (path 2), a8w4 on gfx950 too.
    sw.dtype = DtypePath::a8w4, sw.block_m = 16, sw.block_n = 32;
    CHECK_THAT(render(sw, Arch::gfx950).source, Catch::Contains("MoeConfig<1,1,16,32,256,4,1,2,0,2,1,0,0,0,0,1,0,0,0,0,0>"));
  }
  {
    // The staged main loop is the configuration's last parameter, value 2.
    auto const st = parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic");
    CHECK(render(st, Arch::sm_90).kernel_names[0] ==
          "moetune::moe_stage2<moetune::MoeConfig<2,0,64,128,64,8,1,1,0,3,1,0,0,0,0,2,0,0,0,0,0>>");
    // The wgmma main loop: 4, with the k16 decode 5, with the k32 decode 6.
    auto const k32 = parse_kernel_name("moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv4_st3_wg_k32_ks1_dw0_atomic");
    CHECK_THAT(render(k32, Arch::sm_90).kernel_names[0], Catch::Contains(",6,2,0,0,0,0>>"));
    // The register GEMV: 7, reading the same tiles (layout 2).
    auto const gv = parse_kernel_name("moetune_s2_a16w4_bf16_t8x16x128_w5_kp1_nk16_wv0_st1_wg_gv_ks1_dw0_atomic");
    CHECK(render(gv, Arch::sm_90).kernel_names[0] ==
          "moetune::moe_stage2<moetune::MoeConfig<2,0,8,16,128,5,1,1,0,1,1,0,0,0,0,7,2,0,0,0,0>>");
    // Repacked weights: the last parameter, value 1.
    auto const rp = parse_kernel_name("moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0");
    CHECK(rp.repacked);
    CHECK(render(rp, Arch::sm_90).kernel_names[2] ==
          "moetune::moe_stage1<moetune::MoeConfig<1,0,32,64,64,4,1,1,0,3,1,0,0,0,0,2,1,0,0,0,0>>");
  }
  {
    // Stage one split over K: its own entry point (the cluster shape is compiled into it) and
    // ksplit in the configuration.
    auto const ks = parse_kernel_name("moetune_s1_a16w4_bf16_t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0");
    auto const unit = render(ks, Arch::sm_90);
    CHECK_THAT(unit.source, Catch::Contains("MOETUNE_INSTANTIATE_STAGE1_KSPLIT(moetune::MoeConfig<1,0,8,32,256,4,1,1,0,4,4,0,0,0,0,4,2,0,0,0,0>);"));
    CHECK(unit.kernel_names[2] == "moetune::moe_stage1_ksplit<moetune::MoeConfig<1,0,8,32,256,4,1,1,0,4,4,0,0,0,0,4,2,0,0,0,0>>");
  }
  {
    // The tile-major grid (session 27): its parameter last, the stage kernel's grid (tiles,
    // blocks) instead of (blocks, tiles), the other launches as they were; not with stage
    // one's cluster split; a block count past the grid's y limit is refused by name.
    auto const tm2 = parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_ks1_dw0_atomic");
    auto const rm2 = parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic");
    CHECK(tm2.tile_major);
    CHECK(render(tm2, Arch::sm_90).kernel_names[0] ==
          "moetune::moe_stage2<moetune::MoeConfig<2,0,64,128,128,8,1,1,3,3,1,0,0,0,0,5,2,0,0,1,0>>");
    auto const shape = backbone();
    auto const a = plan_launch(tm2, Arch::sm_90, shape, 4096), b = plan_launch(rm2, Arch::sm_90, shape, 4096);
    REQUIRE(a.launches.size() == b.launches.size());
    CHECK(a.launches[0].grid.x == b.launches[0].grid.y);
    CHECK(a.launches[0].grid.y == b.launches[0].grid.x);
    CHECK(a.launches[0].grid.x == 5120 / 128);
    CHECK(a.launches[0].grid.y == b.max_sorted_blocks);
    CHECK(a.launches[1].grid == b.launches[1].grid);
    auto tm1 = parse_kernel_name("moetune_s1_a16w4_bf16_t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_gi_dw0");
    CHECK(!check_config(tm1, Arch::sm_90, shape));
    CHECK(plan_launch(tm1, Arch::sm_90, shape, 16).launches[1].grid.x == 640 / 64);
    tm1.ksplit = 2;
    CHECK_THAT(check_config(tm1, Arch::sm_90).value_or(""), Catch::Contains("tile_major 1 with ksplit 2 in stage one"));
    auto tiny = parse_kernel_name("moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv4_st3_wg_k16_tm_ks1_dw0_atomic");
    CHECK_THROWS_WITH(plan_launch(tiny, Arch::sm_90, shape, 131072), Catch::Contains("exceed a tile-major grid's 65535 rows"));
  }
  {
    // A stage two reading the sort in halves (sort_halves, `_hs`, session 35): its parameter
    // last; two grid rows per sorted block of its stage one's sort of twice its block_m, whose
    // capacity the plan carries; a pair only with a stage one of that block_m.
    auto const hs = parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_hs_ks1_dw0_atomic");
    auto const whole = parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_ks1_dw0_atomic");
    auto const s1_128 = parse_kernel_name("moetune_s1_a16w4_bf16_t128x96x128_w12_kp1_nk16_wv0_st3_wg_k16_tm_gi_dw0");
    auto const s1_64 = parse_kernel_name("moetune_s1_a16w4_bf16_t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_gi_dw0");
    REQUIRE(hs.sort_halves);
    CHECK(sort_block_m(hs) == 128);
    CHECK(sort_block_m(whole) == 64);
    CHECK(sort_block_m(s1_128) == 128);
    CHECK(render(hs, Arch::sm_90).kernel_names[0] ==
          "moetune::moe_stage2<moetune::MoeConfig<2,0,64,128,128,8,1,1,3,3,1,0,0,0,0,5,2,0,0,1,1>>");
    CHECK_THAT(render(hs, Arch::gfx942).source, Catch::Contains(",1,1>);"));
    auto const shape = backbone();
    CHECK(!check_config(hs, Arch::sm_90, shape));
    CHECK(!check_config(s1_128, Arch::sm_90, shape));
    for (std::int64_t M : {1, 4096, 16384}) {
      auto const plan = plan_launch(hs, Arch::sm_90, shape, M);
      auto const sort = plan_launch(s1_128, Arch::sm_90, shape, M);
      CHECK(plan.max_sorted_blocks == 2 * sort.max_sorted_blocks);
      CHECK(plan.launches[0].grid.y == plan.max_sorted_blocks);  // tile-major: the rows on y
      CHECK(plan.sort_capacity == sort.sort_capacity);
    }
    CHECK(!pair_violation(s1_128, hs));
    CHECK(!pair_violation(s1_64, whole));
    CHECK_THAT(pair_violation(s1_64, hs).value_or(""), Catch::Contains("its stage one's block_m must be 128, not 64"));
    CHECK_THAT(pair_violation(s1_128, whole).value_or(""), Catch::Contains("disagree on block_m (128 and 64)"));
    // Only a stage two reads in halves, and only a sort of at most 128 tokens a block.
    auto s1_hs = s1_64;
    s1_hs.sort_halves = true;
    CHECK_THAT(check_config(s1_hs, Arch::sm_90).value_or(""), Catch::Contains("sort_halves 1 in stage one"));
    auto wide = hs;
    wide.block_m = 128, wide.warps = 12, wide.block_n = 192, wide.waves = 0;
    CHECK_THAT(check_config(wide, Arch::sm_90).value_or(""), Catch::Contains("sort_halves 1 with block_m 128"));
    // The partner rule (tuner, verify): the other stage made to read the subject's sort.
    CHECK(with_sort_of(s1_64, hs).block_m == 128);
    CHECK(with_sort_of(s1_128, hs) == s1_128);
    auto const back = with_sort_of(hs, s1_64);
    CHECK(back.block_m == 64);
    CHECK_FALSE(back.sort_halves);
    CHECK(with_sort_of(hs, s1_128) == hs);
  }
  {
    // h kept in bf16: stage one's last parameter is 1; stage two is the A16W4 kernel itself
    // (its dtype 0, its wgmma tiles the layout 2 it always reads), the same unit source.
    auto const hb1 = parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_hb_gi_dw0");
    CHECK(render(hb1, Arch::sm_90).kernel_names[2] ==
          "moetune::moe_stage1<moetune::MoeConfig<1,1,64,64,128,8,1,1,0,3,1,0,0,0,0,4,2,1,0,0,0>>");
    auto const hb2 = parse_kernel_name("moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic");
    auto const a16 = parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic");
    CHECK(render(hb2, Arch::sm_90).kernel_names == render(a16, Arch::sm_90).kernel_names);
    CHECK(render(hb2, Arch::sm_90).kernel_names[0] ==
          "moetune::moe_stage2<moetune::MoeConfig<2,0,64,128,128,8,1,1,3,3,1,0,0,0,0,5,2,0,0,0,0>>");
    CHECK(kernel_traits(hb2, Arch::sm_90).smem_bytes == kernel_traits(a16, Arch::sm_90).smem_bytes);
  }
  {
    // x read in bf16: the sort's launch is moe_sort_upcast_x of the flavour, the stage one is
    // compiled with dtype 0 (A16W4's main loop), the A8W4 epilogue picked by its flavour, h
    // format and the last parameter.
    auto const xb = parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_xb_gi_dw0");
    auto const unit = render(xb, Arch::sm_90);
    CHECK_THAT(unit.source, Catch::Contains("#include \"moe_upcast_x.cuh\""));
    CHECK_THAT(unit.source, Catch::Contains("MOETUNE_INSTANTIATE_SORT_UPCAST_X(0);"));
    REQUIRE(unit.kernel_names.size() == 3);
    CHECK(unit.kernel_names[0] == "moetune::moe_sort_upcast_x<0>");
    CHECK(unit.kernel_names[1] == "moetune::moe_sort_multi_upcast_x<0>");
    CHECK(unit.kernel_names[2] == "moetune::moe_stage1<moetune::MoeConfig<1,0,64,64,128,8,1,1,0,3,1,0,0,0,0,5,2,1,1,0,0>>");
    auto a16 = xb;
    a16.dtype = DtypePath::a16w4, a16.x_bf16 = false, a16.h_bf16 = false;
    CHECK(kernel_traits(xb, Arch::sm_90).smem_bytes == kernel_traits(a16, Arch::sm_90).smem_bytes);
    // The launch plan: the sort's CTAs (12 at 24576 slots), the upcast's, and the bf16 x the
    // host allocates.
    auto shape = backbone(DtypePath::a8w4, Arch::sm_90);
    auto const plan = plan_launch(xb, Arch::sm_90, shape, 4096);
    CHECK(plan.x_bf16_bytes == 4096LL * 5120 * 2);
    CHECK(plan.upcast_ctas == 4 * 132);  // 1.3 M groups of 16: the cap
    CHECK(plan.sort_ctas == 12);
    CHECK(plan.launches.at(0).kernel_name == "moetune::moe_sort_multi_upcast_x<0>");
    CHECK(plan.launches.at(0).grid.x == 12 + 4 * 132);
    auto const small = plan_launch(xb, Arch::sm_90, shape, 1);
    CHECK(small.upcast_ctas == 1);  // 320 groups
    CHECK(small.sort_ctas == 1);
    CHECK(small.launches.at(0).kernel_name == "moetune::moe_sort_upcast_x<0>");
    CHECK(small.launches.at(0).grid.x == 2);
    auto plain = xb;
    plain.x_bf16 = false, plain.wgmma_k16 = false;
    auto const p0 = plan_launch(plain, Arch::sm_90, shape, 4096);
    CHECK(p0.x_bf16_bytes == 0);
    CHECK(p0.launches.at(0).kernel_name == "moetune::moe_sort_multi");
    CHECK(p0.launches.at(0).grid.x == 12);
    // One CTA (the one-CTA kernel) up to 4096 slots (M = 682 at top-6), then one per 2048, at
    // most 128.
    CHECK(plan_launch(plain, Arch::sm_90, shape, 682).launches.at(0).grid.x == 1);
    CHECK(plan_launch(plain, Arch::sm_90, shape, 682).launches.at(0).kernel_name == "moetune::moe_sort");
    CHECK(plan_launch(plain, Arch::sm_90, shape, 683).launches.at(0).grid.x == 3);
    CHECK(plan_launch(plain, Arch::sm_90, shape, 683).launches.at(0).kernel_name == "moetune::moe_sort_multi");
    CHECK(plan_launch(plain, Arch::sm_90, shape, 16384).launches.at(0).grid.x == 48);
    CHECK(plan_launch(plain, Arch::sm_90, shape, 1 << 20).launches.at(0).grid.x == 128);
  }
  auto c2 = c;
  c2.stage = 2, c2.stage2_mode = Stage2Mode::reduce, c2.dtype = DtypePath::a8w4, c2.block_k = 128, c2.nonkdim = 32;
  auto const s2 = render(c2, Arch::gfx950);
  CHECK_THAT(s2.source, Catch::Contains("MOETUNE_INSTANTIATE_STAGE2(moetune::MoeConfig<2,1,32,64,128,4,1,5,0,2,1,0,0,0,1,0,0,0,0,0,0>);"));
  CHECK(s2.kernel_names.back() == "moetune::moe_reduce_y");
  c2.stage2_mode = Stage2Mode::atomic;
  // The atomic stage two has the same two kernels (stage one clears its accumulator).
  auto const atomic = render(c2, Arch::gfx950);
  CHECK(atomic.kernel_names.size() == 2);
  CHECK(atomic.kernel_names.back() == "moetune::moe_reduce_y");
}

TEST_CASE("launch plans list the kernels in run order with their geometry", "[search]") {
  KernelConfig c;
  c.block_m = 16, c.block_n = 64;
  auto const s = backbone();
  auto const p = plan_launch(c, Arch::sm_90, s, 1);
  REQUIRE(p.launches.size() == 2);
  CHECK(p.launches[0].kernel_name == "moetune::moe_sort");
  CHECK(p.launches[1].grid.x == 6);   // one token: at most 6 blocks of 16
  CHECK(p.launches[1].grid.y == 10);  // 640 / 64
  CHECK(p.launches[1].block.x == 128);
  CHECK(p.sort_capacity == (6 + 384 * 15 + 15) / 16 * 16);
  CHECK(p.launches[1].grid.z == 1);
  {
    // Stage one split over K: the ranks of a column tile along z (one cluster).
    auto const ks = parse_kernel_name("moetune_s1_a16w4_bf16_t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0");
    auto const k = plan_launch(ks, Arch::sm_90, s, 1);
    CHECK(k.launches[1].kernel_name.rfind("moetune::moe_stage1_ksplit<", 0) == 0);
    CHECK(k.launches[1].grid.x == 6);
    CHECK(k.launches[1].grid.y == 20);  // 640 / 32
    CHECK(k.launches[1].grid.z == 4);
  }
  auto c2 = c;
  c2.stage = 2, c2.block_n = 128, c2.ksplit = 2;
  auto const q = plan_launch(c2, Arch::sm_90, s, 64);
  REQUIRE(q.launches.size() == 2);
  CHECK(q.launches[0].grid.z == 2);
  CHECK(q.launches[1].kernel_name == "moetune::moe_reduce_y");
  // The atomic variant accumulates in fp32 acc[M][H], which stage one clears.
  CHECK(q.partial_bytes == 64 * 5120 * 4);
  CHECK(q.accumulator_words == 64 * 5120 * 4 / 16);
  c2.ksplit = 1, c2.stage2_mode = Stage2Mode::reduce;
  auto const r = plan_launch(c2, Arch::sm_90, s, 64);
  CHECK(r.launches[1].kernel_name == "moetune::moe_reduce_y");
  CHECK(r.partial_bytes == 64LL * 6 * 5120 * 4);
  CHECK(r.accumulator_words == 0);  // nothing for stage one to clear
}

TEST_CASE("the default configuration is valid for every arch and bucket", "[search]") {
  for (auto arch : {Arch::sm_90, Arch::gfx90a, Arch::gfx942, Arch::gfx950}) {
    for (auto d : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
      for (std::int64_t m : {1, 8, 32, 64, 256, 512, 4096, 16384}) {
        auto s = backbone(d, arch);
        auto const def = default_config(s, arch, m);
        INFO(to_string(arch) << " M=" << m << " " << def.stage1.name() << " " << def.stage2.name());
        CHECK(check_config(def.stage1, arch, s).value_or("ok") == "ok");
        CHECK(check_config(def.stage2, arch, s).value_or("ok") == "ok");
        CHECK(def.stage1.block_m == def.stage2.block_m);
      }
    }
  }
}

TEST_CASE("parse_search_space reports a JSON number too large for any type as an input error",
          "[search]") {
  // Found by test/fuzz/fuzz_search_space: nlohmann throws out_of_range (not parse_error) for
  // this, which used to escape the loader as an internal error.
  try {
    (void)parse_search_space(R"({"arch": 4444444444444444444e4444444444444444444})", "big.json");
    FAIL("no error thrown");
  } catch (const InputError& e) {
    CHECK(e.file() == "big.json");
    CHECK(std::string(e.what()).find("number overflow") != std::string::npos);
  }
  // And the from-text entry point reads what the file loader reads.
  auto const space = parse_search_space(
      R"({"arch": "sm_90", "stage1": {"block_m": [16]}, "stage2": {"ksplit": [1, 2]}})", "t.json");
  REQUIRE(space.arches.size() == 1);
  CHECK(space.source == "t.json");
  CHECK(space.arches[0].stage2[0].ksplit == std::vector<int>{1, 2});
  // The k32 decode knob enumerates like the k16 one: both values, and the pair with k16 pruned.
  auto const k32 = parse_search_space(
      R"({"arch": "sm_90", "stage1": {"block_m": [8], "block_n": [64], "block_k": [256], "warps": [8],
          "stages": [3], "wgmma": [1], "wgmma_k16": [0, 1], "wgmma_k32": [0, 1]}, "stage2": {"block_m": [16]}})",
      "k32.json");
  int k32_valid = 0, both_pruned = 0;
  for (auto const& c : enumerate(k32, Arch::sm_90, backbone())) {
    if (c.config.stage != 1) continue;
    if (c.config.wgmma_k16 && c.config.wgmma_k32)
      both_pruned += c.pruned_reason.value_or("").find("wgmma_k16 1 with wgmma_k32 1") != std::string::npos;
    else if (c.config.wgmma_k32 && !c.pruned_reason)
      ++k32_valid;
  }
  CHECK(k32_valid == 1);
  CHECK(both_pruned == 1);
}
