// The machine-code digest on real compiler output: two gfx942 candidates that differ only in
// waves 0 and 1 (the same launch bounds on AMD) must digest equal although their names, and
// so their symbols and metadata, differ; a different tile must not. clang-22 builds gfx942
// here: without it this test is reported Skipped (exit 77), never passed.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/jit/compiler.hpp"
#include "autotune/jit/machine_code_digest.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/render.hpp"
#include "autotune/search/validity.hpp"

using namespace moetune;

namespace {

std::unique_ptr<jit::Compiler> gfx942_compiler_or_skip() {
  try {
    return jit::make_compiler({"gfx942", std::nullopt, {}});
  } catch (const Error& e) {
    std::printf("SKIPPED: no gfx942 compiler (clang-22): %s\n", e.what());
    std::exit(77);  // CTest: Skipped
  }
}

jit::CompileResult compile(const jit::Compiler& compiler, const search::KernelConfig& cfg) {
  REQUIRE_FALSE(search::check_config(cfg, search::Arch::gfx942).has_value());
  auto const result = compiler.compile(search::render(cfg, search::Arch::gfx942));
  INFO(cfg.name() << ": " << result.log);
  REQUIRE(result.ok);
  return result;
}

}  // namespace

TEST_CASE("gfx942: waves 0 and 1 are code twins by digest, a different tile is not",
          "[jit][code_twins]") {
  auto const compiler = gfx942_compiler_or_skip();
  moe::MoeShape shape;
  shape.tokens = 16;
  shape.hidden = 1024;
  shape.inter = 256;
  shape.experts = 32;
  shape.topk = 4;
  auto const base = search::default_config(shape, search::Arch::gfx942, 16).stage1;
  auto waves0 = base;
  waves0.waves = 0;
  auto waves1 = base;
  waves1.waves = 1;
  auto other_tile = waves0;
  other_tile.block_k = waves0.block_k == 128 ? 256 : 128;
  REQUIRE(waves0.name() != waves1.name());

  auto const r0 = compile(*compiler, waves0);
  auto const r1 = compile(*compiler, waves1);
  auto const r2 = compile(*compiler, other_tile);
  // The names really differ inside the images: a digest of the raw bytes would not match.
  auto lowered = [](const jit::CompileResult& r) {
    std::vector<std::string> names;
    for (auto const& k : r.kernels) names.push_back(k.lowered_name);
    return names;
  };
  REQUIRE(lowered(r0) != lowered(r1));
  CHECK(r0.image != r1.image);

  auto const d0 = jit::machine_code_digest(r0);
  CHECK(d0.size() == 64);
  CHECK(d0 == jit::machine_code_digest(r1));
  CHECK(d0 != jit::machine_code_digest(r2));
}

TEST_CASE("machine-code digest: nothing for a failed unit, whole bytes for a non-ELF image",
          "[jit][code_twins]") {
  jit::CompileResult failed;
  CHECK(jit::machine_code_digest(failed).empty());
  jit::CompileResult blob;
  blob.ok = true;
  blob.image = {std::byte{1}, std::byte{2}};
  auto other = blob;
  other.image.push_back(std::byte{3});
  CHECK(jit::machine_code_digest(blob) != jit::machine_code_digest(other));
  CHECK(jit::machine_code_digest(blob) == jit::machine_code_digest(blob));
}

// An A8W4 stage two that reads bf16 h (`_hb`) is rendered as the A16W4 stage two of the same
// knobs (search::compiled_as): NVRTC (no GPU needed) must give it that kernel's machine code,
// and the A8W4 stage two without `_hb` other code.
TEST_CASE("sm_90: an A8W4 stage two keeping h in bf16 is the A16W4 stage two's machine code",
          "[jit][code_twins]") {
  auto const compiler = jit::make_compiler({"sm_90", std::nullopt, {}});
  auto const hb = search::parse_kernel_name("moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic");
  auto const a16 = search::parse_kernel_name("moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic");
  auto const a8 = search::parse_kernel_name("moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic");
  auto build = [&](const search::KernelConfig& c) {
    REQUIRE_FALSE(search::check_config(c, search::Arch::sm_90).has_value());
    auto const r = compiler->compile(search::render(c, search::Arch::sm_90));
    INFO(c.name() << ": " << r.log);
    REQUIRE(r.ok);
    return jit::machine_code_digest(r);
  };
  auto const d_hb = build(hb);
  CHECK(d_hb.size() == 64);
  CHECK(d_hb == build(a16));
  CHECK(d_hb != build(a8));
}
