// The test-only broken units (search::render_with_test_break, kernels/moe_test_break.cuh)
// compile for sm_90 and an AMD target here, with no GPU, and each bug really changes the code
// it is meant to change: the GPU tests that use them (test/exec/verifier_break_gpu_test.cpp)
// then fail for the bug, not for a unit that silently stayed correct.
#include <catch2/catch.hpp>

#include <string>

#include "autotune/jit/compiler.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/render.hpp"
#include "autotune/search/test_break.hpp"

using namespace moetune;
using search::TestBreak;

namespace {

moe::MoeShape small_shape(bool doweight_stage1) {
  moe::MoeShape s;
  s.hidden = 1024;
  s.inter = 256;
  s.experts = 32;
  s.topk = 4;
  s.dtype = moe::DtypePath::a16w4;
  s.doweight_stage1 = doweight_stage1;
  return s;
}

}  // namespace

TEST_CASE("test breaks: defines only when asked, and a marked unit name", "[search][break]") {
  auto const arch = search::Arch::sm_90;
  auto const pair = search::default_config(small_shape(false), arch, 16);
  CHECK(search::test_break_defines({}).empty());
  auto const plain = search::render(pair.stage2, arch);
  auto const same = search::render_with_test_break(pair.stage2, arch, {});
  CHECK(same.source == plain.source);
  CHECK(same.unit_name == plain.unit_name);
  CHECK(same.defines == plain.defines);
  auto const broken = search::render_with_test_break(pair.stage2, arch, {TestBreak::wrong_output_above_m, 100});
  CHECK(broken.source == plain.source);
  CHECK(broken.unit_name == plain.unit_name + "+test_break=wrong_output_above_m");
  CHECK(broken.defines == std::vector<std::string>{"MOETUNE_TEST_BREAK=5", "MOETUNE_TEST_BREAK_ABOVE_M=100"});
}

TEST_CASE("test breaks compile and change the unit they target", "[jit][break]") {
  auto const target = GENERATE(as<std::string>{}, "sm_90", "gfx950");
  auto const arch = search::parse_arch(target);
  auto const compiler = jit::make_compiler({target, std::nullopt, {}});
  struct Case {
    TestBreak kind;
    int stage;              // the unit whose code the bug is in
    bool doweight_stage1;   // where the routing weight is applied
  };
  for (auto const& c : {Case{TestBreak::wrong_output_element, 2, false},
                        Case{TestBreak::skip_routing_weight, 2, false},
                        Case{TestBreak::skip_routing_weight, 1, true},
                        Case{TestBreak::unwritten_output_row, 2, false},
                        Case{TestBreak::corrupt_input, 1, false},
                        Case{TestBreak::wrong_output_above_m, 2, false}}) {
    auto const shape = small_shape(c.doweight_stage1);
    auto const pair = search::default_config(shape, arch, 16);
    auto const& cfg = c.stage == 1 ? pair.stage1 : pair.stage2;
    INFO(target << " " << search::to_string(c.kind) << " in " << cfg.name());
    auto const plain = compiler->compile(search::render(cfg, arch));
    auto const broken = compiler->compile(search::render_with_test_break(cfg, arch, {c.kind, 64}));
    INFO(broken.log);
    REQUIRE(plain.ok);
    REQUIRE(broken.ok);
    CHECK(broken.kernels.size() == plain.kernels.size());
    CHECK(broken.image != plain.image);
  }
}
