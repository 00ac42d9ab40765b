// The test-only fault kernels (kernels/moe_test_fault.cuh) and their --test-fault spec: the
// kernels must compile for every arch, since all kernels/ files are embedded and the GPU run
// that shows the isolation compiles them with the run's own runtime compiler.
#include <catch2/catch.hpp>

#include "autotune/jit/compile_pool.hpp"
#include "autotune/measure/test_fault.hpp"

using namespace moetune;
using namespace moetune::measure;

TEST_CASE("test-fault specs parse, bad ones are refused with the form", "[tune]") {
  auto const f = parse_test_faults("t16x32x64=trap,ks1_dw0_reduce=spin@build");
  REQUIRE(f.size() == 2);
  CHECK(f[0].pair_substring == "t16x32x64");
  CHECK(f[0].kind == TestFault::Kind::trap);
  CHECK(f[0].when == TestFault::When::sample);
  CHECK(f[1].pair_substring == "ks1_dw0_reduce");
  CHECK(f[1].kind == TestFault::Kind::spin);
  CHECK(f[1].when == TestFault::When::build);
  CHECK_THROWS_WITH(parse_test_faults("abc=boom"), Catch::Contains("SUBSTRING=trap|spin[@build]"));
  CHECK_THROWS_WITH(parse_test_faults("=trap"), Catch::Contains("'=trap'"));
  CHECK(parse_test_faults("").empty());
}

TEST_CASE("the fault kernels compile for every arch", "[tune]") {
  auto const arch = GENERATE(as<std::string>{}, "sm_90", "gfx90a", "gfx942", "gfx950");
  auto const compiler = jit::make_compiler({arch, std::nullopt, {}});
  auto const out = jit::compile_unit(*compiler, nullptr, test_fault_unit_source());
  INFO(arch << ": " << out.result.log);
  REQUIRE(out.status == jit::CompileStatus::ok);
  REQUIRE(out.result.kernels.size() == 2);
  CHECK_FALSE(out.result.kernels[0].lowered_name.empty());
  CHECK_FALSE(out.result.kernels[1].lowered_name.empty());
}
