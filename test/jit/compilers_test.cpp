// Each runtime compiler, for each supported arch, on the test kernel family. A missing compiler
// is a failure, not a skip: CI installs all of them, and a silently skipped arch is an arch
// nobody tested.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "autotune/jit/amdgpu_metadata.hpp"
#include "autotune/jit/compiler.hpp"
#include "test_kernel_family.hpp"

using namespace moetune;

namespace {

std::unique_ptr<jit::Compiler> compiler_for(const std::string& arch) {
  return jit::make_compiler({arch, test::tiny_kernel_headers(), {}});
}

}  // namespace

TEST_CASE("every supported arch compiles the test kernel, with lowered names and resources",
          "[jit][compiler]") {
  auto const arch = GENERATE(as<std::string>{}, "sm_90", "sm_90a", "gfx90a", "gfx942", "gfx950");
  INFO("arch " << arch);
  auto const compiler = compiler_for(arch);
  CHECK(compiler->arch() == arch);
  CHECK_FALSE(compiler->identity().empty());

  auto const source = test::scale_unit(3, 128);
  jit::CompileResult const result = compiler->compile(source);
  INFO(result.log);
  REQUIRE(result.ok);
  REQUIRE_FALSE(result.image.empty());
  REQUIRE(result.kernels.size() == 1);
  auto const& kernel = result.kernels[0];
  CHECK(kernel.name_expression == source.kernel_names[0]);
  // Itanium mangling of mt_test::scale_shift<mt_test::ScaleConfig<3, 128>>.
  CHECK(kernel.lowered_name == "_ZN7mt_test11scale_shiftINS_11ScaleConfigILi3ELi128EEEEEvPfPKfi");
  CHECK(kernel.resources.registers > 0);
  CHECK(kernel.resources.shared_bytes == 128 * 4);  // the tile
  CHECK(kernel.resources.spill_bytes == 0);
  CHECK(kernel.resources.scratch_bytes == 0);
  bool const amd = arch.starts_with("gfx");
  if (amd) {
    CHECK(jit::is_elf(result.image));  // the code object itself, not an offload bundle
    CHECK(kernel.resources.sgprs > 0);
  } else {
    CHECK(kernel.resources.sgprs == -1);
  }
}

TEST_CASE("a syntax error is a failed result carrying the compiler's log", "[jit][compiler]") {
  auto const arch = GENERATE(as<std::string>{}, "sm_90", "gfx90a", "gfx942");
  INFO("arch " << arch);
  auto const compiler = compiler_for(arch);
  jit::CompileResult const result = compiler->compile(test::broken_unit());
  CHECK_FALSE(result.ok);
  CHECK(result.image.empty());
  CHECK(result.kernels.empty());
  INFO(result.log);
  CHECK_THAT(result.log, Catch::Contains("error"));
  CHECK_THAT(result.log, Catch::Contains("this_is_a_syntax_error") || Catch::Contains("expected"));
}

TEST_CASE("defines reach the compiler and change the options", "[jit][compiler]") {
  auto const compiler = compiler_for("gfx942");
  auto source = test::scale_unit(2, 64);
  source.defines = {"MT_OFFSET=1.5f"};
  auto const options = compiler->options(source);
  CHECK(std::find(options.begin(), options.end(), "-DMT_OFFSET=1.5f") != options.end());
  CHECK(compiler->compile(source).ok);
}

TEST_CASE("line tables for a profiler: NVRTC's -lineinfo, keyed apart, refused on AMD", "[jit][compiler]") {
  auto const options = jit::line_info_options("sm_90");
  CHECK(options == std::vector<std::string>{"-lineinfo"});
  auto const plain = compiler_for("sm_90");
  auto const lined = jit::make_compiler({"sm_90", test::tiny_kernel_headers(), options});
  auto const source = test::scale_unit(3, 128);
  auto const lined_options = lined->options(source);
  CHECK(std::find(lined_options.begin(), lined_options.end(), "-lineinfo") != lined_options.end());
  CHECK(lined_options != plain->options(source));  // the cache key differs
  jit::CompileResult const a = plain->compile(source), b = lined->compile(source);
  INFO(b.log);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  CHECK(b.image != a.image);  // the line table is in the image
  CHECK(b.kernels.at(0).lowered_name == a.kernels.at(0).lowered_name);
  CHECK(b.kernels.at(0).resources.registers == a.kernels.at(0).resources.registers);
  CHECK_THROWS_WITH(jit::line_info_options("gfx942"), Catch::Contains("only for NVIDIA targets"));
}

TEST_CASE("a name expression that names no kernel fails the unit with a reason",
          "[jit][compiler]") {
  auto const arch = GENERATE(as<std::string>{}, "sm_90", "gfx942");
  INFO("arch " << arch);
  auto source = test::scale_unit(2, 64);
  source.kernel_names = {"mt_test::no_such_kernel<3>"};
  auto const compiler = compiler_for(arch);
  jit::CompileResult result;
  try {
    result = compiler->compile(source);
  } catch (const std::exception& error) {
    // NVRTC reports a bad name expression through its API: also acceptable, as an exception
    // the pool turns into compile_error.
    result.log = error.what();
  }
  CHECK_FALSE(result.ok);
  CHECK_FALSE(result.log.empty());
}

TEST_CASE("an unknown arch names the supported ones", "[jit][compiler]") {
  CHECK_THROWS_WITH(jit::make_compiler({"gfx1100", {}, {}}),
                    Catch::Contains("gfx1100") && Catch::Contains("gfx942"));
}
