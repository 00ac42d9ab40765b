// The shipped shape lists (shapes/*.csv) are what `moe-tune tune` reads by default: each must
// validate clean, and every row must be a power-of-two bucket timed at an M inside it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/validate.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;

namespace {

std::vector<std::filesystem::path> shape_lists() {
  std::vector<std::filesystem::path> files;
  for (auto const& entry : std::filesystem::directory_iterator(test::source_dir() / "shapes")) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every shipped shape list validates clean", "[apps][shapes]") {
  auto const files = shape_lists();
  REQUIRE(files.size() == 6);
  auto const report = io::validate_files(files);
  INFO("errors: " << report.error_count() << ", warnings: " << report.warning_count());
  CHECK(report.exit_code() == 0);
  CHECK(report.warning_count() == 0);
}

TEST_CASE("shape-list rows are power-of-two buckets with an actual M inside", "[apps][shapes]") {
  for (auto const& file : shape_lists()) {
    auto const table = io::read_fmoe_table(file);
    CAPTURE(file.filename().string());
    REQUIRE(table.kind() == io::FmoeFileKind::untuned);
    for (auto const& row : table.rows()) {
      auto const token = row.key.token;
      CHECK((token & (token - 1)) == 0);
      REQUIRE(row.actual_m.has_value());
      CHECK(*row.actual_m <= token);
      CHECK(*row.actual_m > token / 2);
    }
  }
}

TEST_CASE("the DSv4.1-Flash TP4 lists carry the seeds' buckets and decode M", "[apps][shapes]") {
  auto const table =
      io::read_fmoe_table(test::source_dir() / "shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv");
  std::set<std::pair<std::int64_t, std::int64_t>> backbone, draft;
  for (auto const& row : table.rows()) {
    CHECK(row.key.model_dim == 5120);
    CHECK(row.key.inter_dim == 640);
    CHECK(row.key.q_dtype_w == io::TorchDtype::fp4x2_e2m1fn);
    if (row.key.expert == 384) backbone.insert({row.key.token, *row.actual_m});
    if (row.key.expert == 128) draft.insert({row.key.token, *row.actual_m});
  }
  std::set<std::pair<std::int64_t, std::int64_t>> want_backbone, want_draft;
  for (int i = 0; i < 8; ++i) {
    want_backbone.insert({8 << i, 6 << i});
    want_draft.insert({8 << i, 5 << i});
  }
  CHECK(backbone == want_backbone);
  CHECK(draft == want_draft);
}
