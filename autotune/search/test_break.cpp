#include "autotune/search/test_break.hpp"

#include <fmt/format.h>

#include "autotune/search/render.hpp"

namespace moetune::search {

std::string_view to_string(TestBreak kind) {
  switch (kind) {
    case TestBreak::none: return "none";
    case TestBreak::wrong_output_element: return "wrong_output_element";
    case TestBreak::skip_routing_weight: return "skip_routing_weight";
    case TestBreak::unwritten_output_row: return "unwritten_output_row";
    case TestBreak::corrupt_input: return "corrupt_input";
    case TestBreak::wrong_output_above_m: return "wrong_output_above_m";
  }
  return "?";
}

std::vector<std::string> test_break_defines(const TestBreakSpec& spec) {
  if (spec.kind == TestBreak::none) return {};
  return {fmt::format("MOETUNE_TEST_BREAK={}", static_cast<int>(spec.kind)),
          fmt::format("MOETUNE_TEST_BREAK_ABOVE_M={}", spec.above_m)};
}

jit::KernelSource render_with_test_break(const KernelConfig& cfg, Arch arch,
                                         const TestBreakSpec& spec) {
  auto unit = render(cfg, arch);
  if (spec.kind == TestBreak::none) return unit;
  unit.unit_name += fmt::format("+test_break={}", to_string(spec.kind));
  for (auto& define : test_break_defines(spec)) unit.defines.push_back(std::move(define));
  return unit;
}

}  // namespace moetune::search
