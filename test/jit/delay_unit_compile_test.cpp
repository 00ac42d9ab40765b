// calibrate's delay kernel compiles, with its name resolved and nothing spilled, for every arch
// moe-tune targets (it must run on the users' GPUs, not only on the H200). A compile test, so it
// lives with the other every-arch compile tests (moetune_test_jit, run by CI where all four
// toolchains are installed), not in the GPU suite.
#include <catch2/catch.hpp>

#include <string>

#include "autotune/exec/delay_unit.hpp"
#include "autotune/jit/compiler.hpp"

using namespace moetune;

TEST_CASE("the delay unit compiles for every target arch", "[exec][jit]") {
  auto const arch = GENERATE(as<std::string>{}, "sm_90", "gfx90a", "gfx942", "gfx950");
  INFO("arch " << arch);
  auto const compiler = jit::make_compiler({arch, std::nullopt, {}});
  auto const source = exec::delay_unit_source();
  auto const result = compiler->compile(source);
  INFO(result.log);
  REQUIRE(result.ok);
  REQUIRE(result.kernels.size() == 1);
  CHECK(result.kernels[0].name_expression == exec::delay_kernel_name);
  CHECK(result.kernels[0].lowered_name == "_ZN7moetune9moe_delayEy");
  CHECK(result.kernels[0].resources.spill_bytes == 0);
  // The plan launches exactly that kernel, as one thread.
  auto const plan = exec::delay_launch_plan();
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel_name == exec::delay_kernel_name);
  CHECK(plan.launches[0].block.x == 1);
}
