#pragma once
// Converting one CSV cell to a number, strictly: the whole cell must be the value, with no
// spaces, signs where none belong or trailing text ("64x" is not 64). Each returns nullopt on
// failure; the caller knows the column and builds the message.
#include <cstdint>
#include <optional>
#include <string_view>

namespace moetune::io {

// Decimal integer, optional leading '-'.
[[nodiscard]] std::optional<std::int64_t> parse_integer(std::string_view text);
// Finite decimal number as Python prints floats ("20.9291", "0.0", "1e-05", "180442.80").
[[nodiscard]] std::optional<double> parse_real(std::string_view text);
// "0.3%" -> 0.003 (a fraction, the value AITER formats with "{:.1%}"); a cell without '%' is
// the fraction itself ("0.0", "0"), which is how some AITER tables store err1/err2 and how
// AITER's CSV test reads them (str.rstrip("%") / 100 only for text with '%').
[[nodiscard]] std::optional<double> parse_percent(std::string_view text);
// "0" or "1".
[[nodiscard]] std::optional<bool> parse_bool01(std::string_view text);

[[nodiscard]] constexpr bool is_power_of_two(std::int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

}  // namespace moetune::io
