#include <catch2/catch.hpp>

#include "autotune/core/error.hpp"
#include "autotune/search/kernel_config.hpp"

using namespace moetune;
using namespace moetune::search;

TEST_CASE("kernel names are generated from the knobs", "[search]") {
  KernelConfig c;
  c.stage = 1, c.block_m = 32, c.block_n = 128, c.block_k = 256, c.warps = 4, c.kpack = 2;
  c.nonkdim = 16, c.waves = 2, c.stages = 2;
  CHECK(c.name() == "moetune_s1_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_gi_dw0");
  c.ksplit = 4;  // stage one names its split-K only when it splits
  CHECK(c.name() == "moetune_s1_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_ks4_gi_dw0");
  c.stage = 2, c.dtype = DtypePath::a8w4, c.fp8 = Fp8Flavor::fnuz, c.ksplit = 2;
  c.stage2_mode = Stage2Mode::reduce, c.doweight_stage1 = true;
  CHECK(c.name() == "moetune_s2_a8w4_fnuz_t32x128x256_w4_kp2_nk16_wv2_st2_ks2_dw1_reduce");
}

TEST_CASE("kernel names parse back", "[search]") {
  for (auto const* n : {"moetune_s1_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_gi_dw0",
                        "moetune_s1_bf16_bf16_t128x64x128_w8_kp1_nk0_wv0_st1_gs_dw1",
                        "moetune_s2_a8w4_fp8_t16x64x64_w2_kp1_nk32_wv4_st1_ks4_dw0_atomic",
                        "moetune_s1_a16w4_bf16_t8x8x256_w4_kp1_nk16_wv0_st2_sab_gi_dw0",
                        "moetune_s2_bf16_bf16_t16x64x128_w8_kp1_nk16_wv0_st4_sab_ks2_dw0_reduce",
                        "moetune_s1_a16w4_bf16_t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0",
                        "moetune_s2_a8w4_fp8_t128x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_reduce",
                        "moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0",
                        "moetune_s2_a8w4_fp8_t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic",
                        "moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv4_st3_stg_fd_rp_gi_dw0",
                        "moetune_s2_a16w4_bf16_t64x128x64_w8_kp1_nk16_wv0_st4_stg_fd_rp_ks1_dw0_reduce",
                        "moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0",
                        "moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv2_st5_wg_ks2_dw0_atomic",
                        "moetune_s1_a16w4_bf16_t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0",
                        "moetune_s1_a16w4_bf16_t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_ks2_gi_dw1",
                        "moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv4_st3_wg_k32_ks2_dw0_atomic",
                        "moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_hb_gi_dw0",
                        "moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic",
                        "moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_ks2_dw0_atomic",
                        "moetune_s1_a16w4_bf16_t16x64x128_w4_kp1_nk16_wv0_st2_tm_gi_dw0",
                        "moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_hs_ks1_dw0_atomic",
                        "moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_hs_ks2_dw0_atomic",
                        "moetune_s2_a8w4_fp8_t16x128x64_w4_kp1_nk16_wv0_st4_stg_fd_rp_hb_ks1_dw0_atomic",
                        "moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_xb_gi_dw0",
                        "moetune_s1_a8w4_fp8_t16x64x256_w8_kp1_nk16_wv0_st3_wg_k16_hb_xb_ks2_gi_dw0"}) {
    CHECK(parse_kernel_name(n).name() == n);
  }
  auto const c = parse_kernel_name("moetune_s2_a8w4_fnuz_t16x64x64_w2_kp1_nk32_wv4_st1_ks4_dw1_reduce");
  CHECK(c.stage == 2);
  CHECK(c.dtype == DtypePath::a8w4);
  CHECK(c.fp8 == Fp8Flavor::fnuz);
  CHECK(c.block_m == 16);
  CHECK(c.block_n == 64);
  CHECK(c.block_k == 64);
  CHECK(c.warps == 2);
  CHECK(c.nonkdim == 32);
  CHECK(c.waves == 4);
  CHECK(c.stages == 1);
  CHECK(c.ksplit == 4);
  CHECK(c.doweight_stage1);
  CHECK(c.stage2_mode == Stage2Mode::reduce);
  CHECK_FALSE(c.swap_ab);  // names from before the knob parse as tokens-on-M
  auto const sw = parse_kernel_name("moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv0_st4_sab_ks1_dw0_atomic");
  CHECK(sw.swap_ab);
  CHECK(sw.block_m == 8);
  CHECK(sw.stages == 4);
  CHECK(sw.stage2_mode == Stage2Mode::atomic);
  CHECK_FALSE(sw.staged);
  auto const st = parse_kernel_name("moetune_s1_a16w4_bf16_t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0");
  CHECK(st.staged);
  CHECK_FALSE(st.swap_ab);
  CHECK(st.block_m == 64);
  CHECK(st.block_k == 64);
  CHECK(st.stages == 3);
  KernelConfig named = st;
  named.staged = false;
  CHECK(named.name() == "moetune_s1_a16w4_bf16_t64x64x64_w4_kp1_nk16_wv0_st3_gi_dw0");
  CHECK_FALSE(st.repacked);  // names from before the layout knob read the natural layout
  auto const rp = parse_kernel_name("moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic");
  CHECK(rp.repacked);
  CHECK(rp.swap_ab);
  CHECK(rp.waves == 4);
  CHECK_FALSE(rp.fragment_decode);
  auto const fd = parse_kernel_name("moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv4_st3_stg_fd_rp_gi_dw0");
  CHECK(fd.staged);
  CHECK(fd.fragment_decode);
  CHECK(fd.repacked);
  CHECK_FALSE(fd.swap_ab);
  CHECK(weight_layout(fd) == WeightLayout::repacked);
  auto const wg = parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0");
  CHECK(wg.wgmma);
  CHECK_FALSE(wg.staged);
  CHECK_FALSE(wg.repacked);
  CHECK(wg.block_m == 16);
  CHECK(wg.block_n == 32);
  CHECK(weight_layout(wg) == WeightLayout::wgmma_tiles);
  CHECK(weight_layout(st) == WeightLayout::natural);
  CHECK_FALSE(wg.wgmma_k16);
  auto const k16 = parse_kernel_name("moetune_s2_a16w4_bf16_t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic");
  CHECK(k16.wgmma);
  CHECK(k16.wgmma_k16);
  CHECK(k16.stage == 2);
  CHECK(k16.name() == "moetune_s2_a16w4_bf16_t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic");
  CHECK(weight_layout(k16) == WeightLayout::wgmma_tiles);
  CHECK_FALSE(k16.h_bf16);  // names from before the knob keep h in the dtype's own format
  CHECK_FALSE(k16.wgmma_k32);
  auto const k32 = parse_kernel_name("moetune_s1_a16w4_bf16_t8x64x256_w8_kp1_nk16_wv0_st3_wg_k32_gi_dw0");
  CHECK(k32.wgmma);
  CHECK(k32.wgmma_k32);
  CHECK_FALSE(k32.wgmma_k16);
  CHECK(k32.name() == "moetune_s1_a16w4_bf16_t8x64x256_w8_kp1_nk16_wv0_st3_wg_k32_gi_dw0");
  CHECK(weight_layout(k32) == WeightLayout::wgmma_tiles);
  CHECK_FALSE(k32.tile_major);
  CHECK_FALSE(k32.gemv);
  // The register GEMV: a `_gv` after `_wg` (it reads the wgmma tile layout).
  auto const gv = parse_kernel_name("moetune_s2_a16w4_bf16_t8x16x128_w5_kp1_nk16_wv0_st1_wg_gv_ks1_dw0_atomic");
  CHECK(gv.wgmma);
  CHECK(gv.gemv);
  CHECK_FALSE(gv.wgmma_k16);
  CHECK(gv.block_n == 16);
  CHECK(gv.warps == 5);
  CHECK(gv.name() == "moetune_s2_a16w4_bf16_t8x16x128_w5_kp1_nk16_wv0_st1_wg_gv_ks1_dw0_atomic");
  CHECK(weight_layout(gv) == WeightLayout::wgmma_tiles);
  auto const gv1 = parse_kernel_name("moetune_s1_a16w4_bf16_t8x8x640_w8_kp1_nk16_wv0_st1_wg_gv_tm_gi_dw0");
  CHECK(gv1.gemv);
  CHECK(gv1.tile_major);
  CHECK(gv1.name() == "moetune_s1_a16w4_bf16_t8x8x640_w8_kp1_nk16_wv0_st1_wg_gv_tm_gi_dw0");
  auto const tm = parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_xb_tm_gi_dw0");
  CHECK(tm.tile_major);
  CHECK(tm.x_bf16);
  CHECK(tm.name() == "moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_xb_tm_gi_dw0");
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t64x64x128_w8_kp1_nk16_wv3_st3_tm_wg_gi_dw0"),
                    Catch::Matchers::Contains("token 11 'wg'") && Catch::Matchers::Contains("'tm' last"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t64x64x128_w8_kp1_nk16_wv3_st3_wg_tm_tm_gi_dw0"),
                    Catch::Matchers::Contains("token 11 'tm'") && Catch::Matchers::Contains("the token once"));
  // The sort read in halves: last of the optional tokens, after 'tm' where both are given.
  auto const hs = parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_hs_ks1_dw0_atomic");
  CHECK(hs.sort_halves);
  CHECK(hs.tile_major);
  CHECK(hs.block_m == 64);
  CHECK(sort_block_m(hs) == 128);
  CHECK_FALSE(tm.sort_halves);
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hs_tm_ks1_dw0_atomic"),
                    Catch::Matchers::Contains("token 11 'tm'") && Catch::Matchers::Contains("'hs' last"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_hs_k16_ks1_dw0_atomic"),
                    Catch::Matchers::Contains("token 11 'k16'") && Catch::Matchers::Contains("'hs' last"));
}

TEST_CASE("an A8W4 pair keeping h in bf16: its stage two is compiled as the A16W4 stage two", "[search]") {
  auto const s1 = parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_hb_gi_dw0");
  auto const s2 = parse_kernel_name("moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic");
  CHECK(s1.h_bf16);
  CHECK(s2.h_bf16);
  CHECK(s2.wgmma_k16);
  // Stage one stays A8W4 (it reads fp8 x and quantises h); stage two becomes A16W4's kernel.
  CHECK(compiled_as(s1) == s1);
  auto const k2 = compiled_as(s2);
  CHECK(k2.dtype == DtypePath::a16w4);
  CHECK_FALSE(k2.h_bf16);
  CHECK(k2.name() == "moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic");
  // So its wgmma tiles are in A16W4's words, stage one's in A8W4's.
  CHECK(weight_layout(s1) == WeightLayout::wgmma_tiles);
  CHECK(weight_layout(s2) == WeightLayout::wgmma_tiles_a16w4);
  auto plain = s2;
  plain.h_bf16 = false;
  plain.wgmma_k16 = false;
  CHECK(weight_layout(plain) == WeightLayout::wgmma_tiles);
  CHECK(compiled_as(plain) == plain);
  // Which h the host allocates follows stage one.
  CHECK_FALSE(h_is_fp8(s1));
  auto fp8_s1 = s1;
  fp8_s1.h_bf16 = false;
  CHECK(h_is_fp8(fp8_s1));
  auto a16 = fp8_s1;
  a16.dtype = DtypePath::a16w4;
  CHECK_FALSE(h_is_fp8(a16));
}

TEST_CASE("an A8W4 stage one reading x in bf16 is compiled with the A16W4 main loop and A8W4's epilogue",
          "[search]") {
  auto const xb = parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_xb_gi_dw0");
  CHECK(xb.x_bf16);
  CHECK(xb.h_bf16);
  CHECK(xb.wgmma_k16);
  CHECK(xb.dtype == DtypePath::a8w4);
  // The compiled view: A16W4's main loop, keeping what picks the epilogue (flavour, h format).
  auto const k = compiled_as(xb);
  CHECK(k.dtype == DtypePath::a16w4);
  CHECK(k.x_bf16);
  CHECK(k.h_bf16);
  CHECK(k.fp8 == Fp8Flavor::ocp);
  // Its w1 tiles are in A16W4's words; h's format is still the pair's (h_bf16 here).
  CHECK(weight_layout(xb) == WeightLayout::wgmma_tiles_a16w4);
  CHECK_FALSE(h_is_fp8(xb));
  auto fp8_h = xb;
  fp8_h.h_bf16 = false;
  CHECK(h_is_fp8(fp8_h));
  auto plain = fp8_h;
  plain.x_bf16 = false;
  CHECK(weight_layout(plain) == WeightLayout::wgmma_tiles);
  CHECK(compiled_as(plain) == plain);
  // A name without the token reads x as fp8 (names from before the knob).
  CHECK_FALSE(parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_hb_gi_dw0").x_bf16);
}

TEST_CASE("kernel name parse errors name the bad token", "[search]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t64x64x64_w4_kp1_nk16_wv0_st3_stg_stg_gi_dw0"),
                    Contains("token 11 'stg'") && Contains("the token once"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t64x64x64_w4_kp1_nk16_wv0_st3_rp_stg_gi_dw0"),
                    Contains("token 11 'stg'") && Contains("before 'rp'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv0_st3_fd_rp_gi_dw0"),
                    Contains("token 11 'fd'") && Contains("'stg' before 'fd'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv0_st3_stg_rp_fd_gi_dw0"),
                    Contains("token 11 'fd'") && Contains("before 'rp'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_stg_gi_dw0"),
                    Contains("token 11 'stg'") && Contains("before 'wg'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_rp_wg_gi_dw0"),
                    Contains("token 11 'wg'") && Contains("before 'rp'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_k16_wg_gi_dw0"),
                    Contains("token 11 'k16'") && Contains("'wg' before 'k16'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_k16_k16_gi_dw0"),
                    Contains("token 11 'k16'") && Contains("the token once"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_k32_wg_gi_dw0"),
                    Contains("token 11 'k32'") && Contains("'wg' before 'k32'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_k16_k32_gi_dw0"),
                    Contains("token 11 'k32'") && Contains("one of 'k16' and 'k32'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_k32_k16_gi_dw0"),
                    Contains("token 11 'k16'") && Contains("one of 'k16' and 'k32'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t8x8x640_w8_kp1_nk16_wv0_st1_gv_wg_gi_dw0"),
                    Contains("token 11 'gv'") && Contains("'wg' before 'gv'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t8x8x640_w8_kp1_nk16_wv0_st1_wg_k16_gv_gi_dw0"),
                    Contains("token 11 'gv'") && Contains("one of 'k16', 'k32' and 'gv'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t8x8x640_w8_kp1_nk16_wv0_st1_wg_gv_k32_gi_dw0"),
                    Contains("token 11 'k32'") && Contains("one of 'k16', 'k32' and 'gv'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t8x8x640_w8_kp1_nk16_wv0_st1_wg_gv_gv_gi_dw0"),
                    Contains("token 11 'gv'") && Contains("the token once"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_rp_k32_gi_dw0"),
                    Contains("token 11 'k32'") && Contains("before 'rp'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_hb_wg_gi_dw0"),
                    Contains("token 11 'wg'") && Contains("'hb' last"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s2_a8w4_fp8_t16x128x64_w4_kp1_nk16_wv0_st4_stg_fd_hb_rp_ks1_dw0_atomic"),
                    Contains("token 11 'rp'") && Contains("'hb' last"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_hb_hb_gi_dw0"),
                    Contains("token 11 'hb'") && Contains("the token once"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_xb_hb_gi_dw0"),
                    Contains("token 11 'hb'") && Contains("'xb' last"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_xb_wg_gi_dw0"),
                    Contains("token 11 'wg'") && Contains("'xb' last"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st3_wg_xb_xb_gi_dw0"),
                    Contains("token 11 'xb'") && Contains("the token once"));
  // Stage one names its split-K only when it splits: ks1 and a malformed count are refused.
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks1_gi_dw0"),
                    Contains("token 11 'ks1'") && Contains("ks2 or more"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t8x32x256_w4_kp1_nk16_wv0_st4_wg_ksx_gi_dw0"),
                    Contains("token 11 'ksx'") && Contains("ks<ksplit>"));
  CHECK_THROWS_WITH(parse_kernel_name("aiter_s1_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_gi_dw0"),
                    Contains("token 1 'aiter'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s3_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_gi_dw0"),
                    Contains("token 2 's3'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a4w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_gi_dw0"),
                    Contains("token 3 'a4w4'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_fp8_t32x128x256_w4_kp2_nk16_wv2_st2_gi_dw0"),
                    Contains("token 4 'fp8'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t32x128_w4_kp2_nk16_wv2_st2_gi_dw0"),
                    Contains("token 5 't32x128'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t32x128x256_w4_kpx_nk16_wv2_st2_gi_dw0"),
                    Contains("token 7 'kpx'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_gx_dw0"),
                    Contains("token 11 'gx'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s2_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2_ks1_dw0_sum"),
                    Contains("token 13 'sum'"));
  CHECK_THROWS_WITH(parse_kernel_name("moetune_s1_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2"),
                    Contains("tokens"));
}
