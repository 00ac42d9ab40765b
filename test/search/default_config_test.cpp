// The default configuration is the baseline every tuned row must beat, and the runtime's
// choice with no tuned row: it must be valid for every shape moe-tune accepts, on every arch.
#include <catch2/catch.hpp>

#include <optional>

#include <fmt/format.h>

#include "autotune/search/default_config.hpp"
#include "autotune/search/render.hpp"
#include "autotune/search/validity.hpp"

using namespace moetune;

TEST_CASE("default configuration is valid across shapes, paths, arches and M", "[search]") {
  struct Dims {
    std::int64_t H, I;
    int E, topk;
  };
  for (auto const d : {Dims{5120, 640, 384, 6}, Dims{5120, 640, 128, 3}, Dims{5120, 768, 385, 7},
                       Dims{5120, 2304, 96, 6}, Dims{7168, 512, 384, 6}, Dims{800, 224, 16, 4},
                       Dims{96, 32, 8, 2}, Dims{2048, 512, 64, 6}}) {
    for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
      for (auto arch : {search::Arch::sm_90, search::Arch::gfx90a, search::Arch::gfx942,
                        search::Arch::gfx950}) {
        for (std::int64_t M : {1, 8, 31, 64, 257, 1024, 4096, 16384}) {
          moe::MoeShape shape;
          shape.hidden = d.H;
          shape.inter = d.I;
          shape.experts = d.E;
          shape.topk = d.topk;
          shape.dtype = dtype;
          shape.fp8_flavor = arch == search::Arch::gfx942 ? moe::Fp8Flavor::fnuz : moe::Fp8Flavor::ocp;
          auto const defaults = search::default_config(shape, arch, M);
          CAPTURE(moe::to_string(shape), search::to_string(arch), M, defaults.stage1.name(),
                  defaults.stage2.name());
          auto const r1 = search::check_config(defaults.stage1, arch, shape);
          auto const r2 = search::check_config(defaults.stage2, arch, shape);
          INFO("stage one: " << r1.value_or("valid") << "; stage two: " << r2.value_or("valid"));
          REQUIRE_FALSE(r1);
          REQUIRE_FALSE(r2);
          CHECK_FALSE(search::pair_violation(defaults.stage1, defaults.stage2));  // one sort
        }
      }
    }
  }
}

TEST_CASE("sm_90's default main loop follows the tokens per expert", "[search]") {
  moe::MoeShape shape;
  shape.hidden = 5120, shape.inter = 640, shape.experts = 384, shape.topk = 6;
  shape.dtype = moe::DtypePath::a16w4;
  struct Expect {
    std::int64_t M;
    bool swapped, staged, fragment_decode, wgmma;
    int block_m;
    std::optional<bool> stage2_wgmma = std::nullopt;  // unset: as stage one
  };
  // The sm_90 default at e.M: valid in both stages, with the expected main loop and tile.
  auto const checked_default = [](const moe::MoeShape& s, const Expect& e) {
    auto const d = search::default_config(s, search::Arch::sm_90, e.M);
    CAPTURE(e.M, d.stage1.name(), d.stage2.name());
    REQUIRE_FALSE(search::check_config(d.stage1, search::Arch::sm_90, s));
    REQUIRE_FALSE(search::check_config(d.stage2, search::Arch::sm_90, s));
    CHECK(d.stage1.swap_ab == e.swapped);
    CHECK(d.stage1.staged == e.staged);
    CHECK(d.stage2.staged == e.staged);
    CHECK(d.stage1.fragment_decode == e.fragment_decode);
    CHECK(d.stage2.fragment_decode == e.fragment_decode);
    CHECK(d.stage1.wgmma == e.wgmma);
    CHECK(d.stage2.wgmma == e.stage2_wgmma.value_or(e.wgmma));
    CHECK(d.stage1.block_m == e.block_m);
    CHECK(search::sort_block_m(d.stage2) == e.block_m);  // both read one sort
    return d;
  };
  // Backbone: 6 M / 384 tokens per expert. The wgmma main loop (sessions 10 and 11) from 0.04
  // tokens per expert, and below where its one-warpgroup stage one has at least 96 CTAs (M = 1:
  // 6 experts x 640 / 32 = 120, session 16): 8-token blocks below 6 tokens per expert (stage
  // one one warpgroup of 32 rows below 4, session 39), 16-token blocks below 16, 64-token
  // blocks above (two warpgroups), rings of 4 (3 for the two-warpgroup 8-token stage one,
  // session 15), 256-K stage-one tiles for the small blocks. (Its I = 640 keeps the 64-token
  // pair at every M: session 29's 128-token pair is for a long I, below.)
  for (auto const e : {Expect{1, false, false, false, true, 8}, Expect{2, false, false, false, true, 8},
                       Expect{4, false, false, false, true, 8},
                       Expect{8, false, false, false, true, 8}, Expect{128, false, false, false, true, 8},
                       Expect{320, false, false, false, true, 8}, Expect{512, false, false, false, true, 16},
                       Expect{4096, false, false, false, true, 64}, Expect{8192, false, false, false, true, 64},
                       Expect{16384, false, false, false, true, 64}}) {
    auto const d = checked_default(shape, e);
    CHECK(search::weight_layout(d.stage2) == search::WeightLayout::wgmma_tiles);
    // Session 24: the bounded 8-token stage two (from 0.1 tokens per expert: M = 8 on) is one
    // warpgroup of 64 rows, and since session 26 the 16-token one too; the others two of 128.
    bool const one_warpgroup2 =
        (e.block_m == 8 && static_cast<double>(e.M) * 6 / 384 >= 0.1) || e.block_m == 16;
    CHECK(d.stage2.warps == (one_warpgroup2 ? 4 : 8));
    CHECK(d.stage2.block_n == (one_warpgroup2 ? 64 : 128));
    CHECK(d.stage2.block_k == 128);
    if (e.swapped) {
      CHECK(d.stage1.repacked);
      CHECK(d.stage1.waves == 4);
      continue;
    }
    CHECK(search::weight_layout(d.stage1) == search::WeightLayout::wgmma_tiles);
    // Session 39: the 8-token stage one keeps one warpgroup (64-K decode, ring of 4) below 4
    // tokens per expert (M = 1-128 here; session 15 had it below 0.15), two with a ring of 3
    // from there (M = 320); its stage two waves 4 with a ring of 3 from 0.1 (M = 8 on); the 16-
    // and 64-token pairs rings of 3.
    double const per_expert = static_cast<double>(e.M) * 6 / 384;
    bool const one_warpgroup = e.block_m == 8 && per_expert < 4;
    CHECK(d.stage1.warps == (one_warpgroup ? 4 : 8));
    CHECK(d.stage1.block_n == (one_warpgroup ? 32 : 64));
    CHECK(d.stage1.block_k == (e.block_m < 64 ? 256 : 128));
    // Session 27: the 16-token stage one a ring of 4 from 7 tokens per expert (M = 512: 8).
    CHECK(d.stage1.stages == (one_warpgroup || (e.block_m == 16 && per_expert >= 7) ? 4 : 3));
    bool const bounded8 = e.block_m == 8 && per_expert >= 0.1;
    // Session 20: the 64-token pair three CTAs per SM (waves 3) with the k16 decode.
    CHECK(d.stage1.waves == (e.block_m == 64 ? 3 : 0));
    CHECK(d.stage2.waves == (bounded8 ? 4 : e.block_m == 64 ? 3 : 0));
    CHECK(d.stage2.stages == (e.block_m == 8 && !bounded8 ? 4 : 3));
    // Session 18: the k16 decode where ptxas serialises the 64-K form: the two-warpgroup
    // 8-token stage one, the bounded 8-token and the 16-token stage two (session 39: those
    // stage twos lost in the 64-K form where it is not serialised); session 20: the 64-token
    // pair (its launch bound of 3).
    CHECK(d.stage1.wgmma_k16 == ((e.block_m == 8 && !one_warpgroup) || e.block_m == 64));
    CHECK(d.stage2.wgmma_k16 == (bounded8 || e.block_m == 16 || e.block_m == 64));
    // Session 19: the one-warpgroup stage one splits K where it has few CTAs: M = 1 (6 experts
    // x 20 column tiles = 120 CTAs) in 4, M = 2 (240) in 2, M = 4 (480) not at all.
    CHECK(d.stage1.ksplit == (e.M == 1 ? 4 : e.M == 2 ? 2 : 1));
    CHECK(d.stage2.ksplit == 1);
    // Session 28: the wgmma pair's grids tile-major (the column tiles on x), but for a stage
    // one split over K (its cluster along z keeps the blocks on x).
    CHECK(d.stage1.tile_major == (d.stage1.ksplit == 1));
    CHECK(d.stage2.tile_major);
  }
  // Past 65535 sorted blocks a tile-major grid's y cannot hold them: M = 2^20 on the backbone
  // (6 Mi slots, over 98k 64-token blocks) keeps the blocks on x, and its launch plans.
  {
    std::int64_t const huge = std::int64_t{1} << 20;
    auto const d = checked_default(shape, Expect{huge, false, false, false, true, 64});
    CHECK_FALSE(d.stage1.tile_major);
    CHECK_FALSE(d.stage2.tile_major);
    CHECK(search::plan_launch(d.stage2, search::Arch::sm_90, shape, huge).max_sorted_blocks > 65535);
    auto forced = d.stage2;
    forced.tile_major = true;
    CHECK_THROWS_WITH(search::plan_launch(forced, search::Arch::sm_90, shape, huge),
                      Catch::Contains("exceed a tile-major grid's 65535 rows"));
  }
  // The draft (E128 top3) at M = 1 (0.023 per expert, 3 x 20 = 60 wgmma CTAs) takes the swapped
  // stage one (repacked layout, 4 CTAs per SM) with the 8-token wgmma stage two; a wide-expert
  // shape (E256 top8 I1280: 0.031 per expert, 8 x 40 = 320 CTAs) the wgmma pair; EP (E96 top6)
  // at M = 1 (0.0625) the wgmma pair by tokens per expert.
  {
    auto draft = shape;
    draft.experts = 128, draft.topk = 3;
    auto const mixed = checked_default(draft, Expect{1, true, false, false, false, 8, true});
    CHECK(mixed.stage1.repacked);
    CHECK(mixed.stage1.waves == 4);
    auto wide = shape;
    wide.inter = 1280, wide.experts = 256, wide.topk = 8;
    auto const w = checked_default(wide, Expect{1, false, false, false, true, 8});
    CHECK(w.stage1.warps == 4);
    CHECK(w.stage1.block_n == 32);
    CHECK(w.stage1.ksplit == 1);  // 320 CTAs: a split of 2 would make 640
    auto ep = shape;
    ep.inter = 2304, ep.experts = 96;
    CHECK(checked_default(ep, Expect{1, false, false, false, true, 8}).stage1.ksplit == 1);  // 6 x 72 = 432 CTAs
    // Session 24: EP's stage two reduces 18 128-K k-tiles per CTA; its bounded 8-token form
    // (one warpgroup from 0.1 tokens per expert, M = 2: 0.125) splits over K in 2 from 0.2
    // (M = 4: 0.25) on; the backbone's I = 640 (5 k-tiles) never splits its stage two (above).
    // Its stage one is the one-warpgroup form below 4 tokens per expert (session 39), the
    // two-warpgroup form at M = 64 (4).
    for (std::int64_t M : {2, 4, 8, 32, 64}) {
      auto const d = checked_default(ep, Expect{M, false, false, false, true, 8});
      bool const split = M >= 4;
      CHECK(d.stage2.name() == (split ? "moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv4_st3_wg_k16_tm_ks2_dw0_atomic"
                                      : "moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv4_st3_wg_k16_tm_ks1_dw0_atomic"));
      if (split)
        CHECK(d.stage1.name() == (M == 64 ? "moetune_s1_a16w4_bf16_t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_tm_gi_dw0"
                                          : "moetune_s1_a16w4_bf16_t8x32x256_w4_kp1_nk16_wv0_st4_wg_tm_gi_dw0"));
    }
    // Session 29: EP (I = 2304, a long stage two) from 128 tokens per expert (M = 2048: 128;
    // 2047 just below) takes the 128-token pair on three warpgroups, the kernels its
    // measurement named; past 65535 of its blocks (M = 2^21) their grids keep the blocks on x.
    CHECK(checked_default(ep, Expect{2047, false, false, false, true, 64}).stage1.warps == 8);
    for (std::int64_t M : {2048, 4096}) {
      auto const d = checked_default(ep, Expect{M, false, false, false, true, 128});
      CHECK(d.stage1.name() == "moetune_s1_a16w4_bf16_t128x96x128_w12_kp1_nk16_wv0_st3_wg_k16_tm_gi_dw0");
      CHECK(d.stage2.name() == "moetune_s2_a16w4_bf16_t128x192x128_w12_kp1_nk16_wv0_st3_wg_k16_tm_ks1_dw0_atomic");
    }
    // A8W4 there takes them as its twin (x and h in bf16), as it takes the 64-token pair.
    {
      auto a8ep = ep;
      a8ep.dtype = moe::DtypePath::a8w4;
      a8ep.fp8_flavor = moe::Fp8Flavor::ocp;
      auto const d = checked_default(a8ep, Expect{4096, false, false, false, true, 128});
      CHECK(d.stage1.x_bf16);
      CHECK(d.stage2.h_bf16);
      CHECK(d.stage1.warps == 12);
      CHECK(d.stage2.warps == 12);
    }
    {
      auto const d = checked_default(ep, Expect{std::int64_t{1} << 21, false, false, false, true, 128});
      CHECK(d.stage1.warps == 12);
      CHECK_FALSE(d.stage1.tile_major);
      CHECK_FALSE(d.stage2.tile_major);
    }
    // Session 35: from 72 to under 120 tokens per expert the 128-token stage one on three
    // warpgroups with the 64-token stage two reading its sort in halves, the kernels its
    // measurement named, on every shape (I = 640 and 2304); 64 and 120 tokens keep the
    // 64-token pair, 128 on EP the 128-token pair. A8W4 takes it as its twin.
    for (auto const& [s, M] : {std::pair{shape, std::int64_t{5120}}, std::pair{shape, std::int64_t{6144}},
                               std::pair{draft, std::int64_t{3072}}, std::pair{draft, std::int64_t{4096}},
                               std::pair{ep, std::int64_t{1536}}}) {
      auto const d = checked_default(s, Expect{M, false, false, false, true, 128});
      CHECK(d.stage1.name() == "moetune_s1_a16w4_bf16_t128x96x128_w12_kp1_nk16_wv0_st3_wg_k16_tm_gi_dw0");
      CHECK(d.stage2.name() == "moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_hs_ks1_dw0_atomic");
      CHECK_FALSE(search::pair_violation(d.stage1, d.stage2));
      auto a8 = s;
      a8.dtype = moe::DtypePath::a8w4;
      a8.fp8_flavor = moe::Fp8Flavor::ocp;
      auto const t = search::default_config(a8, search::Arch::sm_90, M);
      CHECK(t.stage1.x_bf16);
      CHECK(t.stage2.sort_halves);
      CHECK(t.stage1.block_m == 128);
      CHECK_FALSE(search::pair_violation(t.stage1, t.stage2));
    }
    for (auto const& [s, M] : {std::pair{shape, std::int64_t{4096}}, std::pair{draft, std::int64_t{5120}}}) {
      auto const d = checked_default(s, Expect{M, false, false, false, true, 64});
      CHECK_FALSE(d.stage2.sort_halves);
    }
    // The draft at M = 2 (6 experts x 20 = 120 CTAs) splits in 4, at M = 4 (240) in 2.
    CHECK(checked_default(draft, Expect{2, false, false, false, true, 8}).stage1.ksplit == 4);
    CHECK(checked_default(draft, Expect{4, false, false, false, true, 8}).stage1.ksplit == 2);
  }
  // A8W4 with OCP fp8: the same wgmma tiles (e4m3 codes from natural nibbles, scratch sums per
  // 32 K) at every size (session 12): 8-token blocks below 3 tokens per expert, their stage one
  // one warpgroup of 32 rows with 128-K tiles. From 16 tokens per expert (session 23) the
  // A16W4 default's kernels instead: stage one reading x in bf16, both keeping h in bf16.
  {
    auto a8 = shape;
    a8.dtype = moe::DtypePath::a8w4;
    a8.fp8_flavor = moe::Fp8Flavor::ocp;
    for (auto const e : {Expect{1, false, false, false, true, 8}, Expect{64, false, false, false, true, 8},
                         Expect{256, false, false, false, true, 16}, Expect{2048, false, false, false, true, 64},
                         Expect{16384, false, false, false, true, 64}}) {
      auto const d = checked_default(a8, e);
      bool const twin = e.block_m == 64;
      CHECK(d.stage1.x_bf16 == twin);
      CHECK(d.stage1.h_bf16 == twin);
      CHECK(d.stage2.h_bf16 == twin);
      CHECK(search::weight_layout(d.stage1) ==
            (twin ? search::WeightLayout::wgmma_tiles_a16w4 : search::WeightLayout::wgmma_tiles));
      if (twin) {
        // Both kernels are the A16W4 default's (the stage one with A8W4's epilogue).
        auto const a16 = search::default_config(shape, search::Arch::sm_90, e.M);
        auto k1 = search::compiled_as(d.stage1);
        k1.x_bf16 = k1.h_bf16 = false;
        CHECK(k1 == a16.stage1);
        CHECK(search::compiled_as(d.stage2) == a16.stage2);
        CHECK(d.stage1.tile_major);  // session 28's grid order comes with them
        CHECK(d.stage2.tile_major);
        continue;
      }
      CHECK(d.stage1.warps == (e.block_m == 8 ? 4 : 8));
      CHECK(d.stage1.block_n == (e.block_m == 8 ? 32 : 64));
      CHECK(d.stage1.block_k == (e.block_m == 16 ? 256 : 128));
      // A8W4's own kernels keep the blocks on x (the twin above takes A16W4's tile-major grid).
      CHECK_FALSE(d.stage1.tile_major);
      CHECK_FALSE(d.stage2.tile_major);
      // Session 26: the 8-token stage two is one warpgroup from 0.06 tokens per expert (M = 64
      // here: 1.0), two below (M = 1: 0.016); 16-token blocks keep two.
      bool const one_warpgroup2 = e.block_m == 8 && e.M >= 64;
      CHECK(d.stage2.warps == (one_warpgroup2 ? 4 : 8));
      CHECK(d.stage2.block_n == (one_warpgroup2 ? 64 : 128));
      // Session 19: A8W4's stage one splits K in 4 only up to one CTA per SM (M = 1: 120).
      CHECK(d.stage1.ksplit == (e.M == 1 ? 4 : 1));
    }
    for (std::int64_t M : {1, 4}) {  // the draft and EP at their smallest M too
      auto draft = a8;
      draft.experts = 128, draft.topk = 3;
      auto ep = a8;
      ep.inter = 2304, ep.experts = 96;
      for (auto const& s : {draft, ep}) {
        auto const d = search::default_config(s, search::Arch::sm_90, M);
        CHECK(d.stage1.wgmma);
        // Split in 4 only the draft's M = 1 stage one (3 experts x 20 = 60 CTAs); M = 4 has 240,
        // EP 432 and more.
        bool const split = s.experts == 128 && M == 1;
        CHECK(d.stage1.name() == (split ? "moetune_s1_a8w4_fp8_t8x32x128_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0"
                                         : "moetune_s1_a8w4_fp8_t8x32x128_w4_kp1_nk16_wv0_st4_wg_gi_dw0"));
        // One warpgroup from 0.06 tokens per expert (session 26): the draft's M = 4 (0.094),
        // EP's M = 1 and 4 (0.0625, 0.25); the draft's M = 1 (0.023) keeps two.
        bool const one_warpgroup2 = static_cast<double>(M * s.topk) / static_cast<double>(s.experts) >= 0.06;
        CHECK(d.stage2.name() == (one_warpgroup2 ? "moetune_s2_a8w4_fp8_t8x64x128_w4_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic"
                                                 : "moetune_s2_a8w4_fp8_t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic"));
        CHECK(one_warpgroup2 == !(s.experts == 128 && M == 1));
      }
    }
    // A K the wgmma tiles cannot take (not in 64s): the fragment-decode default again.
    auto odd = a8;
    odd.hidden = 5120 + 32;
    auto const d = search::default_config(odd, search::Arch::sm_90, 512);
    CHECK_FALSE(d.stage1.wgmma);
    CHECK(d.stage1.fragment_decode);
  }
  // bf16 weights and AMD never take the staged main loop; bf16 keeps the swapped kernels up
  // to 12 tokens per expert.
  shape.dtype = moe::DtypePath::bf16;
  CHECK_FALSE(search::default_config(shape, search::Arch::sm_90, 4096).stage1.staged);
  CHECK_FALSE(search::default_config(shape, search::Arch::sm_90, 512).stage1.repacked);
  CHECK(search::default_config(shape, search::Arch::sm_90, 512).stage1.swap_ab);
  shape.dtype = moe::DtypePath::a16w4;
  CHECK_FALSE(search::default_config(shape, search::Arch::gfx942, 4096).stage1.staged);
  CHECK_FALSE(search::default_config(shape, search::Arch::gfx942, 8).stage1.repacked);
}
