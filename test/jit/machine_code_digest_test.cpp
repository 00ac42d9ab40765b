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
