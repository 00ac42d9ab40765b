#include "autotune/tune/outcome.hpp"

#include <array>

namespace moetune::tune {
namespace {
constexpr std::array<std::pair<Outcome, std::string_view>, 9> kNames{{
    {Outcome::pruned, "pruned"},
    {Outcome::compile_error, "compile_error"},
    {Outcome::launch_error, "launch_error"},
    {Outcome::timeout, "timeout"},
    {Outcome::wrong_result, "wrong_result"},
    {Outcome::slower, "slower"},
    {Outcome::not_significant, "not_significant"},
    {Outcome::control_failed, "control_failed"},
    {Outcome::qualified, "qualified"},
}};
}  // namespace

std::string_view to_string(Outcome outcome) {
  for (auto const& [o, name] : kNames) {
    if (o == outcome) return name;
  }
  return "unknown";
}

std::optional<Outcome> parse_outcome(std::string_view text) {
  for (auto const& [o, name] : kNames) {
    if (name == text) return o;
  }
  return std::nullopt;
}

}  // namespace moetune::tune
