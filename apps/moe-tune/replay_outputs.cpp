#include "apps/moe-tune/replay_outputs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/io/fmoe_table.hpp"

namespace moetune::app {

namespace {

// Component-wise, so results_old/ is not inside results/.
bool inside(const std::filesystem::path& path, const std::filesystem::path& dir) {
  auto const [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end() || (std::next(d) == dir.end() && d->empty());  // "dir/" ends in ""
}

}  // namespace

std::vector<std::filesystem::path> measurement_directories() {
  return {std::filesystem::path(MOETUNE_SOURCE_DIR) / "results",
          std::filesystem::current_path() / "results"};
}

void refuse_outputs_inside(const std::vector<ReplayOutput>& outputs,
                           const std::vector<std::filesystem::path>& forbidden) {
  for (auto const& out : outputs) {
    if (out.path.empty()) continue;
    // weakly_canonical resolves the existing part (symlinks included) and `..` in the rest.
    auto const resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(out.path));
    for (auto const& dir : forbidden) {
      auto const results = std::filesystem::weakly_canonical(dir);
      if (!inside(resolved, results)) continue;
      throw Error(fmt::format(
          "{} {}: a replayed run never writes under {} (it resolves to {}): replayed rows are "
          "simulated and must not sit beside measurements; write them elsewhere. Nothing was "
          "written.",
          out.option, out.path.string(), results.string(), resolved.string()));
    }
  }
}

void require_tag_column(const std::filesystem::path& table) {
  if (!std::filesystem::exists(table)) return;
  auto const existing = io::read_fmoe_table(table);
  auto const& columns = existing.column_names();
  if (std::find(columns.begin(), columns.end(), "_tag") != columns.end()) return;
  throw Error(fmt::format("{}:1: the table has no '_tag' column (an older AITER layout), so it "
                          "cannot hold replayed rows, which are tagged 'replay'; write the "
                          "replay to another file. Nothing was written.",
                          table.string()));
}

}  // namespace moetune::app
