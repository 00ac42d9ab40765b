#include "autotune/io/csv_table.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "autotune/core/error.hpp"
#include "test/io/io_test_files.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::io;
using moetune::test::input_error_from;

namespace {

InputError parse_error(std::string_view text, CsvReadOptions options = {}) {
  return input_error_from([&] { (void)parse_csv(text, "t.csv", options); });
}

}  // namespace

TEST_CASE("csv: rows remember line, raw text and each cell's column", "[io]") {
  auto const table = parse_csv("a,bb,c\n1,22,333\n,x,\n", "t.csv");
  CHECK(table.column_names() == std::vector<std::string>{"a", "bb", "c"});
  REQUIRE(table.rows().size() == 2);
  auto const& r = table.rows()[0];
  CHECK(r.line == 2);
  CHECK(r.raw == "1,22,333");
  CHECK(r.cells == std::vector<std::string>{"1", "22", "333"});
  CHECK(r.columns == std::vector<std::int64_t>{1, 3, 6});
  auto const& empty_cells = table.rows()[1];
  CHECK(empty_cells.line == 3);
  CHECK(empty_cells.cells == std::vector<std::string>{"", "x", ""});
  CHECK(empty_cells.columns == std::vector<std::int64_t>{1, 2, 4});
  CHECK(table.ends_with_newline());
  CHECK(table.column_index("c") == 2);
  CHECK(table.column_index("d") == -1);
}

TEST_CASE("csv: a file without a final newline is remembered as such", "[io]") {
  auto const table = parse_csv("a,b\n1,2", "t.csv");
  CHECK_FALSE(table.ends_with_newline());
  REQUIRE(table.rows().size() == 1);
  CHECK(table.rows()[0].raw == "1,2");
  CHECK(parse_csv("a,b\n", "t.csv").rows().empty());  // a header alone is a valid, empty table
}

TEST_CASE("csv: empty file", "[io]") {
  auto const e = parse_error("");
  CHECK(e.line() == 1);
  CHECK(e.column() == 1);
  CHECK(std::string(e.what()) ==
        "t.csv:1:1: error: empty file: expected a header line of column names");
}

TEST_CASE("csv: binary garbage (NUL byte) is named as such", "[io]") {
  auto const e = parse_error(std::string("a,b\n1,\0x\n", 9));
  CHECK(e.line() == 2);
  CHECK(e.column() == 3);
  CHECK(e.message() == "binary data: NUL byte (0x00); expected a text CSV file");
}

TEST_CASE("csv: invalid UTF-8 and control characters are rejected", "[io]") {
  auto const utf8 = parse_error("a,b\n1,2\n3,\xff\n");
  CHECK(utf8.line() == 3);
  CHECK(utf8.column() == 3);
  CHECK(utf8.message() == "invalid UTF-8 byte 0xFF: binary data? expected a text CSV file");

  auto const tab = parse_error("a,b\n1\t,2\n");
  CHECK(tab.line() == 2);
  CHECK(tab.column() == 2);
  CHECK(tab.message() == "control character 0x09 (tab); expected printable text (binary data?)");

  // Valid multi-byte UTF-8 is text, and columns count bytes.
  auto const ok = parse_csv("a,b\n\xc3\xa9,x\n", "t.csv");
  CHECK(ok.rows()[0].columns[1] == 4);
}

TEST_CASE("csv: CRLF line ends name the carriage return", "[io]") {
  auto const e = parse_error("a,b\n1,2\r\n3,4\r\n");
  CHECK(e.line() == 2);
  CHECK(e.column() == 4);
  CHECK(e.message().starts_with("CRLF line ending (carriage return before the newline)"));
  auto const header = parse_error("a,b\r\n1,2\n");
  CHECK(header.line() == 1);
  CHECK(header.column() == 4);
}

TEST_CASE("csv: quoted fields are rejected", "[io]") {
  auto const e = parse_error("a,b,c\n1,\"x,y\",3\n");
  CHECK(e.line() == 2);
  CHECK(e.column() == 3);
  CHECK(e.message() ==
        "quoted field ('\"'): AITER fMoE tables never quote; expected plain comma-separated "
        "values");
}

TEST_CASE("csv: a row with too many fields points at the extra separator", "[io]") {
  auto const e = parse_error("a,b,c\n1,2,3\n1,2,3,4\n");
  CHECK(e.line() == 3);
  CHECK(e.column() == 6);
  CHECK(e.message() == "too many fields: expected 3 (as in the header), found 4");
}

TEST_CASE("csv: short rows are padded only up to the allowed count", "[io]") {
  SECTION("strict by default") {
    auto const e = parse_error("a,b,c\n1,2\n");
    CHECK(e.line() == 2);
    CHECK(e.column() == 4);
    CHECK(e.message() ==
          "too few fields: expected 3 (as in the header), found 2; first missing column is 'c'");
  }
  SECTION("one missing field allowed") {
    CsvReadOptions options;
    options.max_missing_fields = 1;
    auto const table = parse_csv("a,b,c\n1,2\n", "t.csv", options);
    auto const& row = table.rows()[0];
    CHECK(row.missing_fields == 1);
    CHECK(row.cells == std::vector<std::string>{"1", "2", ""});
    CHECK(row.raw == "1,2");  // the original text is kept for writing back
    auto const e = parse_error("a,b,c\n1\n", options);
    CHECK(e.line() == 2);
    CHECK(e.column() == 2);
    CHECK(e.message() ==
          "too few fields: expected 3 (as in the header), found 1; first missing column is 'b'");
  }
}

TEST_CASE("csv: empty lines, bad header names and merge conflicts", "[io]") {
  // pandas (so AITER) skips blank lines; they are remembered so a rewrite keeps them.
  auto const blank = parse_csv("a,b\n1,2\n\n\n3,4\n\n", "t.csv");
  REQUIRE(blank.rows().size() == 2);
  CHECK(blank.rows()[0].blank_lines_before == 0);
  CHECK(blank.rows()[1].blank_lines_before == 2);
  CHECK(blank.rows()[1].line == 5);
  CHECK(blank.trailing_blank_lines() == 1);
  CHECK(parse_error("\na,b\n").message() == "empty header line: expected column names");

  auto const dup = parse_error("a,b,a\n1,2,3\n");
  CHECK(dup.line() == 1);
  CHECK(dup.column() == 5);
  CHECK(dup.message() == "duplicate column name 'a' in the header");

  auto const unnamed = parse_error("a,,c\n");
  CHECK(unnamed.column() == 3);
  CHECK(unnamed.message() == "empty column name (column 2 of the header)");

  auto const conflict = parse_error("a,b\n<<<<<<< HEAD\n1,2\n");
  CHECK(conflict.line() == 2);
  CHECK(conflict.column() == 1);
  CHECK(conflict.message() ==
        "git merge conflict marker '<<<<<<<': resolve the merge first (AITER's CSV test "
        "rejects a table containing one anywhere)");
  // Anywhere in the text, as AITER's test_no_git_conflict_markers looks for it.
  auto const inside = parse_error("a,b\n1,x=======y\n");
  CHECK(inside.line() == 2);
  CHECK(inside.column() == 4);
  CHECK(inside.message().starts_with("git merge conflict marker '======='"));
  CHECK(parse_error("a,b>>>>>>> theirs\n1,2\n").line() == 1);
}

TEST_CASE("csv: a missing file is a FileError naming it", "[io]") {
  auto const dir = moetune::test::scratch_dir("csv_missing");
  auto const path = dir / "nope.csv";
  try {
    (void)read_csv(path);
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(e.file() == path);
    CHECK(std::string(e.what()).starts_with(path.string() + ": error: cannot open for reading"));
  }
}
