#include "autotune/io/cell_values.hpp"

#include <charconv>
#include <cmath>

namespace moetune::io {

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  auto const* first = text.data();
  auto const* last = text.data() + text.size();
  auto const [end, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc{} || end != last) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view text) {
  // from_chars also takes "inf", "nan" and hex-free exponents; the first character check
  // keeps out everything that is not a plain decimal number.
  if (text.empty()) return std::nullopt;
  char const lead = text.front() == '-' && text.size() > 1 ? text[1] : text.front();
  if (!((lead >= '0' && lead <= '9') || lead == '.')) return std::nullopt;
  double value = 0;
  auto const* last = text.data() + text.size();
  auto const [end, ec] = std::from_chars(text.data(), last, value, std::chars_format::general);
  if (ec != std::errc{} || end != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<double> parse_percent(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.back() != '%') return parse_real(text);  // a bare fraction, as pandas reads it
  if (text.size() < 2) return std::nullopt;
  auto const number = parse_real(text.substr(0, text.size() - 1));
  if (!number) return std::nullopt;
  return *number / 100.0;
}

std::optional<bool> parse_bool01(std::string_view text) {
  if (text == "0") return false;
  if (text == "1") return true;
  return std::nullopt;
}

}  // namespace moetune::io
