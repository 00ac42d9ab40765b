#pragma once
// One table of (value, name) pairs per enum serves both directions: to_string for reports and
// parsing for the files that read them back, so the two can never disagree.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace moetune {

template <class Enum, std::size_t N>
using EnumNames = std::array<std::pair<Enum, std::string_view>, N>;

template <class Enum, std::size_t N>
[[nodiscard]] constexpr std::string_view name_in(const EnumNames<Enum, N>& names, Enum value) {
  for (auto const& [v, name] : names) {
    if (v == value) return name;
  }
  return "unknown";
}

template <class Enum, std::size_t N>
[[nodiscard]] constexpr std::optional<Enum> value_in(const EnumNames<Enum, N>& names,
                                                     std::string_view text) {
  for (auto const& [v, name] : names) {
    if (name == text) return v;
  }
  return std::nullopt;
}

}  // namespace moetune
