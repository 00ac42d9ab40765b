#include "autotune/io/validate.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "test/io/io_test_files.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune::io;
using moetune::test::tuned_header;
using moetune::test::tuned_row;
using moetune::test::untuned_header;
using moetune::test::untuned_row;
using moetune::test::with_cell;
using moetune::test::write_text;

namespace {

std::string table_of(std::string_view header, std::initializer_list<std::string> rows) {
  std::string out(header);
  out += '\n';
  for (auto const& r : rows) out += r + '\n';
  return out;
}

std::string printed(const ValidationReport& report) {
  std::FILE* f = std::tmpfile();
  print_report(report, f);
  std::rewind(f);
  std::string out;
  char buffer[4096];
  while (auto n = std::fread(buffer, 1, sizeof buffer, f)) out.append(buffer, n);
  std::fclose(f);
  return out;
}

}  // namespace

TEST_CASE("validate: a clean file exits 0 and says ok", "[io]") {
  auto const dir = moetune::test::scratch_dir("v_clean");
  auto const a = write_text(dir, "a.csv", table_of(tuned_header, {tuned_row(1), tuned_row(2)}));
  auto const report = validate_files({a});
  CHECK(report.exit_code() == 0);
  CHECK(report.findings.empty());
  REQUIRE(report.files.size() == 1);
  CHECK(report.files[0].rows == 2);
  CHECK(report.files[0].kind == FmoeFileKind::tuned);
  CHECK(printed(report) ==
        a.string() + ": ok: 2 rows, 0 warnings\nvalidate: 1 file, 0 errors, 0 warnings\n");
}

TEST_CASE("validate: duplicate keys within a file name both lines", "[io]") {
  auto const dir = moetune::test::scratch_dir("v_dup_in");
  auto const a =
      write_text(dir, "a.csv", table_of(tuned_header, {tuned_row(1), tuned_row(2), tuned_row(1)}));
  auto const report = validate_files({a});
  CHECK(report.exit_code() == 1);
  REQUIRE(report.findings.size() == 1);
  auto const& d = report.findings[0];
  CHECK(d.severity == Severity::error);
  CHECK(d.line == 4);
  CHECK(d.column == 1);
  CHECK(d.message.starts_with("duplicate key: " + a.string() + ":2 and " + a.string() +
                              ":4 both define gfx=gfx950 cu_num=256 token=1 model_dim=7168"));
  CHECK(report.files[0].errors == 1);
}

TEST_CASE("validate: duplicate keys across files name both places", "[io]") {
  auto const dir = moetune::test::scratch_dir("v_dup_across");
  auto const a = write_text(dir, "a.csv", table_of(tuned_header, {tuned_row(1), tuned_row(2)}));
  auto const b = write_text(dir, "b.csv", table_of(tuned_header, {tuned_row(4), tuned_row(2)}));
  // A different _tag, gfx or cu_num is a different key: no collision.
  auto const c =
      write_text(dir, "c.csv",
                 table_of(tuned_header, {with_cell(tuned_row(2), tuned_header, "_tag", "draft"),
                                         with_cell(tuned_row(2), tuned_header, "cu_num", "304"),
                                         with_cell(tuned_row(2), tuned_header, "gfx", "gfx942")}));
  // An untuned list repeating the shapes it was tuned from is not a duplicate.
  auto const u = write_text(dir, "u.csv", table_of(untuned_header, {untuned_row(2)}));
  auto const report = validate_files({a, b, c, u});
  CHECK(report.exit_code() == 1);
  REQUIRE(report.findings.size() == 1);
  auto const& d = report.findings[0];
  CHECK(d.file == b);
  CHECK(d.line == 3);
  CHECK(d.message.starts_with("duplicate key: " + a.string() + ":3 and " + b.string() + ":3"));
  CHECK(report.files[0].errors == 0);
  CHECK(report.files[1].errors == 1);
  auto const text = printed(report);
  CHECK(text.find(b.string() + ":3:1: error: duplicate key: ") != std::string::npos);
  CHECK(text.find(b.string() + ": FAILED: 2 rows, 1 error, 0 warnings\n") != std::string::npos);
  CHECK(text.ends_with("validate: 4 files, 1 error, 0 warnings\n"));
}

TEST_CASE("validate: non-power-of-two tokens are warned about", "[io]") {
  auto const dir = moetune::test::scratch_dir("v_pow2");
  auto const u =
      write_text(dir, "u.csv", table_of(untuned_header, {untuned_row(32), untuned_row(56)}));
  auto const report = validate_files({u});
  CHECK(report.exit_code() == 0);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].severity == Severity::warning);
  CHECK(report.findings[0].line == 3);
  CHECK(report.findings[0].column == 1);
  CHECK(report.findings[0].message ==
        "token 56 is not a power of two: AITER rounds the runtime M up to the next power of two "
        "(64) before the lookup, so this row is never used");
  CHECK(printed(report).find(u.string() + ": ok: 2 rows, 1 warning\n") != std::string::npos);
}

TEST_CASE("validate: us must be positive in the main tuned_fmoe.csv, elsewhere a warning",
          "[io]") {
  auto const dir = moetune::test::scratch_dir("v_us");
  auto const rows = table_of(tuned_header, {tuned_row(1, "12.0", "8.0", "0.0"),  // total 0
                                            tuned_row(2, "0.0", "0.0", "0.0"),   // pinned
                                            tuned_row(4, "", "", ""),  // blank: NaN to AITER
                                            tuned_row(8, "12.0", "8.0", "25.0")});
  SECTION("AITER's test_no_invalid_times rejects us <= 0 in its main table") {
    std::filesystem::create_directories(dir / "main");
    auto const t = write_text(dir / "main", "tuned_fmoe.csv", rows);
    auto const report = validate_files({t});
    CHECK(report.exit_code() == 1);
    REQUIRE(report.findings.size() == 3);
    CHECK(report.findings[0].severity == Severity::error);
    CHECK(report.findings[0].line == 2);
    CHECK(report.findings[0].column == 203);
    CHECK(report.findings[0].message ==
          "column 'us': expected a positive total time in the main tuned table (AITER's CSV "
          "test rejects us <= 0 in tuned_fmoe.csv; us1 + us2 = 20.0), found '0.0'");
    CHECK(report.findings[1].severity == Severity::error);
    CHECK(report.findings[1].line == 3);
    CHECK(report.findings[2].severity == Severity::warning);
    CHECK(report.findings[2].message == "us 25.0 is not us1 + us2 = 20.0");
  }
  SECTION("a model table is not checked by that test: warnings only") {
    auto const t = write_text(dir, "model_tuned_fmoe.csv", rows);
    auto const report = validate_files({t});
    CHECK(report.exit_code() == 0);
    REQUIRE(report.findings.size() == 3);
    CHECK(report.findings[0].severity == Severity::warning);
    CHECK(report.findings[0].message.starts_with("us is '0.0': no positive time recorded"));
    CHECK(report.findings[1].severity == Severity::warning);
    CHECK(report.findings[2].message == "us 25.0 is not us1 + us2 = 20.0");
  }
}

TEST_CASE("validate: FlyDSL stage two must use stage one's sorting block", "[io]") {
  auto const dir = moetune::test::scratch_dir("v_sbm");
  auto const bad = with_cell(tuned_row(1), tuned_header, "block_m", "64");
  auto const sbm = with_cell(with_cell(tuned_row(2), tuned_header, "kernelName2",
                                       "flydsl_moe2_afp8_wfp4_bf16_t16x128x256_atomic_sbm32"),
                             tuned_header, "block_m", "32");
  auto const t = write_text(dir, "t.csv", table_of(tuned_header, {bad, sbm}));
  auto const report = validate_files({t});
  CHECK(report.exit_code() == 1);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].line == 2);
  CHECK(report.findings[0].column == 130);
  CHECK(report.findings[0].message ==
        "column 'block_m': 64 does not match the sorting block 32 of kernelName2 "
        "'flydsl_moe2_afp8_wfp4_bf16_t32x256x256_reduce': stage two must read the layout stage "
        "one sorted");
}

TEST_CASE("validate: value errors exit 1, unreadable files exit 2", "[io]") {
  auto const dir = moetune::test::scratch_dir("v_exit");
  auto const good = write_text(dir, "good.csv", table_of(untuned_header, {untuned_row(1)}));
  auto const bad_value = write_text(
      dir, "bad.csv",
      table_of(untuned_header, {with_cell(untuned_row(1), untuned_header, "topk", "x6")}));
  auto const crlf = write_text(dir, "crlf.csv", std::string(untuned_header) + "\r\n");
  auto const missing = dir / "missing.csv";

  auto const values = validate_files({good, bad_value});
  CHECK(values.exit_code() == 1);
  REQUIRE(values.findings.size() == 1);
  CHECK(values.findings[0].format() ==
        bad_value.string() +
            ":2:16: error: column 'topk': expected a positive integer, found 'x6'");

  auto const unreadable = validate_files({good, crlf, missing});
  CHECK(unreadable.exit_code() == 2);
  REQUIRE(unreadable.findings.size() == 2);
  CHECK(unreadable.findings[0].line == 1);
  CHECK(unreadable.findings[0].column == 105);
  CHECK(unreadable.findings[1].file == missing);
  CHECK(unreadable.findings[1].format() ==
        missing.string() + ": error: cannot open for reading: No such file or directory");
  CHECK_FALSE(unreadable.files[1].readable);
  auto const text = printed(unreadable);
  CHECK(text.find(crlf.string() + ": unreadable: not checked further\n") != std::string::npos);
  CHECK(text.ends_with("validate: 3 files, 2 errors, 0 warnings\n"));
}
