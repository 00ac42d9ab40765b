#include "autotune/io/number_format.hpp"

#include <catch2/catch.hpp>

#include "autotune/io/cell_values.hpp"

using namespace moetune::io;

TEST_CASE("format: times are written like Python's repr(round(x, 4))", "[io]") {
  CHECK(format_us(20.9291) == "20.9291");
  CHECK(format_us(0.0) == "0.0");
  CHECK(format_us(5.0) == "5.0");
  CHECK(format_us(67.38254) == "67.3825");
  CHECK(format_us(67.38256) == "67.3826");
  CHECK(format_us(74.12219999999999) == "74.1222");  // an unrounded sum in a real AITER file
  CHECK(format_us(0.00001) == "0.0");
  CHECK(format_us(0.0001) == "0.0001");
  CHECK(format_us(1303.7752) == "1303.7752");
  // Ties round to even on the exact binary value, as CPython's round() does.
  CHECK(format_us(0.03125) == "0.0312");
  CHECK(format_us(0.03135) == "0.0314");  // 0.03135 is slightly above the tie in binary
}

TEST_CASE("format: the total is round(us1 + us2, 4)", "[io]") {
  CHECK(format_us(total_us(12.0719, 8.8572)) == "20.9291");  // dsv4 row 2
  CHECK(format_us(total_us(67.3825, 0.0)) == "67.3825");     // a one-stage row
  CHECK(total_us(0.1, 0.2) == python_round(0.3, 4));
}

TEST_CASE("format: Python float repr: shortest round trip, always marked as a float", "[io]") {
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(1e15) == "1000000000000000.0");
  CHECK(python_float_repr(1e-5) == "1e-05");
  CHECK(python_float_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(0.1 + 0.2) == "0.30000000000000004");
  CHECK(python_round(2.675, 2) == 2.67);  // 2.675 is 2.67499999... in binary
}

TEST_CASE("format: rates are written like '{:.1%}' and tflops/bw with 2 decimals", "[io]") {
  CHECK(format_percent(0.0) == "0.0%");
  CHECK(format_percent(0.003) == "0.3%");
  CHECK(format_percent(0.017) == "1.7%");
  CHECK(format_2dp(180442.80) == "180442.8");
  CHECK(format_2dp(6.3149) == "6.31");
  CHECK(format_2dp(0.0) == "0.0");
  CHECK(format_2dp(202009.6449) == "202009.64");
}

TEST_CASE("format: cells convert strictly", "[io]") {
  CHECK(parse_integer("64") == 64);
  CHECK(parse_integer("-1") == -1);
  CHECK_FALSE(parse_integer("x6"));
  CHECK_FALSE(parse_integer("64x"));
  CHECK_FALSE(parse_integer(" 64"));
  CHECK_FALSE(parse_integer("+1"));
  CHECK_FALSE(parse_integer("1.0"));
  CHECK_FALSE(parse_integer(""));
  CHECK_FALSE(parse_integer("99999999999999999999"));

  CHECK(parse_real("20.9291") == 20.9291);
  CHECK(parse_real("1e-05") == 1e-05);
  CHECK(parse_real("180442.80") == 180442.8);
  CHECK(parse_real("-0.5") == -0.5);
  CHECK_FALSE(parse_real("inf"));
  CHECK_FALSE(parse_real("nan"));
  CHECK_FALSE(parse_real("1e999"));
  CHECK_FALSE(parse_real("0.0%"));
  CHECK_FALSE(parse_real(""));

  CHECK(parse_percent("0.3%") == Approx(0.003));
  CHECK(parse_percent("0.0%") == 0.0);
  // Without '%' the cell is the fraction itself (AITER tables store err1 both ways).
  CHECK(parse_percent("0.0") == 0.0);
  CHECK(parse_percent("0") == 0.0);
  CHECK(parse_percent("0.003") == Approx(0.003));
  CHECK_FALSE(parse_percent("x%"));
  CHECK_FALSE(parse_percent(""));
  CHECK_FALSE(parse_percent("%"));

  CHECK(parse_bool01("0") == false);
  CHECK(parse_bool01("1") == true);
  CHECK_FALSE(parse_bool01("2"));
  CHECK_FALSE(parse_bool01("True"));

  CHECK(is_power_of_two(1));
  CHECK(is_power_of_two(32768));
  CHECK_FALSE(is_power_of_two(56));
  CHECK_FALSE(is_power_of_two(0));
}
