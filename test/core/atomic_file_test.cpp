#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;

TEST_CASE("write_file_atomically replaces the target whole", "[core]") {
  auto const dir = test::scratch_dir("atomic_replace");
  auto const path = dir / "table.csv";
  write_file_atomically(path, "first\n");
  CHECK(read_file(path) == "first\n");
  write_file_atomically(path, "second\n");
  CHECK(read_file(path) == "second\n");
  // No temporary files are left behind.
  int entries = 0;
  for ([[maybe_unused]] auto const& e : std::filesystem::directory_iterator(dir)) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("write_file_atomically into a missing directory names the file and keeps nothing",
          "[core]") {
  auto const dir = test::scratch_dir("atomic_missing");
  auto const path = dir / "no-such-dir" / "table.csv";
  try {
    write_file_atomically(path, "x");
    FAIL("expected FileError");
  } catch (const FileError& e) {
    CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
  }
}

TEST_CASE("read_file names a missing file", "[core]") {
  auto const path = test::scratch_dir("read_missing") / "absent.csv";
  CHECK_THROWS_AS(read_file(path), FileError);
  CHECK_THROWS_WITH(read_file(path), Catch::Contains("absent.csv"));
}
