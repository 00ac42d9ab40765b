// The real AITER tables in ../shared/aiter-data: every one must read, validate with exit code 0
// and round-trip byte for byte. The numbers below are facts about those files, asserted so a
// reader regression (a dropped row, a lost warning) fails here.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "autotune/core/atomic_file.hpp"
#include "autotune/io/fmoe_writer.hpp"
#include "autotune/io/number_format.hpp"
#include "autotune/io/validate.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::io;

namespace {

std::vector<std::filesystem::path> aiter_files() {
  std::vector<std::filesystem::path> files;
  for (auto const& entry : std::filesystem::directory_iterator(moetune::test::aiter_data_dir())) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Expected {
  FmoeFileKind kind;
  std::size_t rows;
  std::size_t warnings;
};

// Warnings: dsv4 tuned has 8 rows one field short; the glm5 table has 8 rows with all
// timings 0 (pinned, untimed); untuned_fmoe.csv lists token 56, not a power of two.
const std::map<std::string, Expected> expected{
    {"a8w8_blockscale_tuned_fmoe_glm5_1.csv", {FmoeFileKind::tuned, 35, 8}},
    {"dsv4_fp8fp4_tuned_fmoe.csv", {FmoeFileKind::tuned, 168, 8}},
    {"dsv4_fp8fp4_untuned_fmoe.csv", {FmoeFileKind::untuned, 96, 0}},
    {"gptoss_a16w4_tuned_fmoe.csv", {FmoeFileKind::tuned, 24, 0}},
    {"gptoss_a16w4_untuned_fmoe.csv", {FmoeFileKind::untuned, 24, 0}},
    {"kimik2_fp8fp4_tuned_fmoe.csv", {FmoeFileKind::tuned, 63, 0}},
    {"kimik2_fp8fp4_untuned_fmoe.csv", {FmoeFileKind::untuned, 63, 0}},
    {"tuned_fhmoe.csv", {FmoeFileKind::fhmoe_tuned, 12, 0}},
    {"tuned_fmoe.csv", {FmoeFileKind::tuned, 30, 0}},
    {"untuned_fhmoe.csv", {FmoeFileKind::untuned, 0, 0}},
    {"untuned_fmoe.csv", {FmoeFileKind::untuned, 13, 1}},
};

}  // namespace

TEST_CASE("aiter-data: every real file reads with the expected kind and row count", "[io]") {
  auto const files = aiter_files();
  REQUIRE(files.size() == expected.size());
  for (auto const& file : files) {
    INFO(file.string());
    auto const& want = expected.at(file.filename().string());
    auto const table = read_fmoe_table(file);
    CHECK(table.kind() == want.kind);
    CHECK(table.rows().size() == want.rows);
  }
}

TEST_CASE("aiter-data: every real file validates with exit code 0, alone and together", "[io]") {
  auto const files = aiter_files();
  for (auto const& file : files) {
    INFO(file.string());
    auto const report = validate_files({file});
    CHECK(report.exit_code() == 0);
    auto const& want = expected.at(file.filename().string());
    REQUIRE(report.files.size() == 1);
    CHECK(report.files[0].rows == want.rows);
    CHECK(report.files[0].warnings == want.warnings);
    CHECK(report.files[0].errors == 0);
  }
  // Together: no key is defined twice across AITER's tables.
  auto const all = validate_files(files);
  CHECK(all.exit_code() == 0);
  CHECK(all.error_count() == 0);
  CHECK(all.warning_count() == 17);
}

TEST_CASE("aiter-data: every real file round-trips byte-identically", "[io]") {
  // Unmodified rows are written from their original text. That includes the 8 rows of
  // dsv4_fp8fp4_tuned_fmoe.csv that are one field short: they are read padded (with a
  // warning) but written back exactly as they were, still short, so this file round-trips
  // byte-identically too; only a row that moe-tune replaces is re-formatted in full.
  auto const dir = moetune::test::scratch_dir("aiter_roundtrip");
  for (auto const& file : aiter_files()) {
    INFO(file.string());
    auto const original = read_file(file);
    auto const table = read_fmoe_table(file);
    CHECK(render_fmoe_table(table) == original);
    auto const copy = dir / file.filename();
    write_fmoe_table(table, copy);
    CHECK(read_file(copy) == original);
  }
}

TEST_CASE("aiter-data: the short dsv4 rows are the 8 known ones, padded", "[io]") {
  auto const table =
      read_fmoe_table(moetune::test::aiter_data_dir() / "dsv4_fp8fp4_tuned_fmoe.csv");
  std::vector<std::int64_t> short_lines;
  for (auto const& row : table.rows()) {
    if (row.missing_fields > 0) {
      short_lines.push_back(row.line);
      CHECK(row.cells.size() == 29);
      CHECK(row.cells.back().empty());
    }
  }
  CHECK(short_lines == std::vector<std::int64_t>{9, 11, 12, 13, 14, 15, 16, 17});
  REQUIRE(table.warnings().size() == 8);
  CHECK(table.warnings()[0].line == 9);
}

TEST_CASE("aiter-data: rows typed from a real table match their text", "[io]") {
  auto const table =
      read_fmoe_table(moetune::test::aiter_data_dir() / "dsv4_fp8fp4_tuned_fmoe.csv");
  auto const& row = table.rows().at(0);  // line 2
  CHECK(row.line == 2);
  CHECK(row.key.token == 1);
  CHECK(row.key.inter_dim == 512);
  CHECK(format_us(*row.tuned->us1) == "12.0719");
  CHECK(format_us(total_us(*row.tuned->us1, *row.tuned->us2)) == "20.9291");
  CHECK(format_2dp(*row.tuned->bw) == "202009.64");
  // Re-formatting a real row from its typed fields reproduces AITER's own text.
  CHECK(format_row_cells(row, table.column_names(), table.file()) == row.cells);
}
