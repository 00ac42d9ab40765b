#include "autotune/measure/outcome.hpp"

#include "autotune/core/enum_names.hpp"

namespace moetune::measure {
namespace {
constexpr EnumNames<Outcome, 11> kNames{{
    {Outcome::pruned, "pruned"},
    {Outcome::compile_error, "compile_error"},
    {Outcome::launch_error, "launch_error"},
    {Outcome::timeout, "timeout"},
    {Outcome::wrong_result, "wrong_result"},
    {Outcome::slower, "slower"},
    {Outcome::not_significant, "not_significant"},
    {Outcome::control_failed, "control_failed"},
    {Outcome::qualified, "qualified"},
    {Outcome::baseline_failed, "baseline_failed"},
    {Outcome::setup_failed, "setup_failed"},
}};
}  // namespace

std::string_view to_string(Outcome outcome) { return name_in(kNames, outcome); }

std::optional<Outcome> parse_outcome(std::string_view text) { return value_in(kNames, text); }

}  // namespace moetune::measure
