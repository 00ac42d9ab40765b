#pragma once
// Where a replayed `tune` may write (DESIGN.md §5, docs/tuning.md "Replay runs"). Replayed
// rows are simulated: under results/ they would sit beside, and be taken for, measurements.
// So a replay's outputs are refused before anything runs when they resolve inside the
// repository's results/ (or ./results/, where a measurement writes by default), however the
// path is spelled: `..` components and symlinks are resolved first.
#include <filesystem>
#include <string>
#include <vector>

namespace moetune::app {

struct ReplayOutput {
  std::string option;  // "-o", "--report", "--journal": named in the error
  std::filesystem::path path;
};

// The results/ directories a replay must stay out of: <repo>/results and ./results.
[[nodiscard]] std::vector<std::filesystem::path> measurement_directories();

// Throws moetune::Error naming the option, the path as given and what it resolves to, for the
// first output that lies inside one of `forbidden` (weakly_canonical on both sides).
void refuse_outputs_inside(const std::vector<ReplayOutput>& outputs,
                           const std::vector<std::filesystem::path>& forbidden);

// A replay tags its rows `_tag` = replay; an existing -o table of an older AITER layout has no
// `_tag` column to hold it, which the writer would only find after the whole run. Throws
// moetune::Error naming the file's header line; a file that does not exist yet is fine.
void require_tag_column(const std::filesystem::path& table);

}  // namespace moetune::app
