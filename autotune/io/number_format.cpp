#include "autotune/io/number_format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace moetune::io {

double python_round(double value, int digits) {
  if (!std::isfinite(value)) return value;
  // fmt's fixed-precision output is correctly rounded from the exact binary value, ties to
  // even, which is exactly what CPython's round() computes; reading it back gives the double
  // nearest to the rounded decimal, as round() returns.
  auto const text = fmt::format("{:.{}f}", value, digits);
  return std::strtod(text.c_str(), nullptr);
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // fmt's default is the shortest round-trip text with the same switch to exponent notation
  // as Python (exponent < -4 or >= 16); Python always marks a float with '.0'.
  auto text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string format_us(double microseconds) {
  return python_float_repr(python_round(microseconds, 4));
}

double total_us(double us1, double us2) { return python_round(us1 + us2, 4); }

std::string format_percent(double fraction) {
  // Python's '%' presentation multiplies by 100 in double precision, then formats 'f'.
  return fmt::format("{:.1f}%", fraction * 100.0);
}

std::string format_2dp(double value) { return python_float_repr(python_round(value, 2)); }

}  // namespace moetune::io
