#pragma once
// TEST ONLY: renders a configuration's unit with one deliberate bug (kernels/
// moe_test_break.cuh), so a GPU test can show that each correctness gate of the verifier fails
// when it should. Nothing in a tuning run asks for this: only a UnitCompiler built with a
// TestBreakSpec (exec/unit_compiler.hpp) renders through it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/jit/kernel_source.hpp"
#include "autotune/search/arch.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::search {

// Values equal to kernels/moe_test_break.cuh's TestBreak.
enum class TestBreak {
  none = 0,
  wrong_output_element = 1,   // y[0][0] off by 1 + |y[0][0]|          -> y against the reference
  skip_routing_weight = 2,    // every routing weight taken as 1 (stage one or two) -> y, h
  unwritten_output_row = 3,   // the last token's y row is never written -> write coverage
  corrupt_input = 4,          // the sort changes topk_ids[0] after reading -> input preservation
  wrong_output_above_m = 5,   // wrong_output_element only when M > above_m -> boundary M
};
[[nodiscard]] std::string_view to_string(TestBreak kind);

struct TestBreakSpec {
  TestBreak kind = TestBreak::none;
  std::int64_t above_m = 64;  // wrong_output_above_m's threshold
};

// -DMOETUNE_TEST_BREAK=N (and -DMOETUNE_TEST_BREAK_ABOVE_M=K); nothing for TestBreak::none.
[[nodiscard]] std::vector<std::string> test_break_defines(const TestBreakSpec& spec);

// render(cfg, arch) with the spec's defines, and the unit name marked ("...+test_break=...")
// so a log never mistakes it for the real unit. Equal to render() for TestBreak::none.
[[nodiscard]] jit::KernelSource render_with_test_break(const KernelConfig& cfg, Arch arch,
                                                       const TestBreakSpec& spec);

}  // namespace moetune::search
