#pragma once
// Merging newly tuned rows into an existing AITER tuned table (`moe-tune merge`).
//
// The merge is planned in memory first and only then written, so a reviewer (or --dry-run)
// can see the exact change and nothing is written when anything is wrong:
//  - the target keeps its header, column order, final-newline state and the raw bytes of every
//    row the merge does not touch; a replaced row stays on its line, a new row is appended;
//  - every row of the incoming file must pass `validate` (and must not be a padded short row,
//    whose result columns may be shifted), and must be writable in the target's columns;
//  - no incoming key may already exist in another tuned table of the sibling directory: AITER
//    loads all of them into one lookup and would silently use only one row;
//  - the merged text is parsed again before it is accepted, so a file that AITER or
//    `validate` would reject is never produced.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/io/diagnostic.hpp"

namespace moetune::io {

struct MergeChange {
  enum class Kind { replaced, appended, unchanged };
  Kind kind = Kind::appended;
  std::int64_t source_line = 0;  // line in the incoming file
  std::int64_t target_line = 0;  // line in the merged target
};

struct MergePlan {
  std::filesystem::path target;
  std::filesystem::path incoming;
  std::string before;  // the target's bytes as read
  std::string after;   // the merged bytes (== before when the merge is refused)
  std::vector<MergeChange> changes;
  // Errors refuse the merge; warnings (from validating the incoming file) are only reported.
  std::vector<Diagnostic> findings;
  std::vector<std::filesystem::path> siblings_checked;  // tuned tables compared against
  std::vector<std::filesystem::path> siblings_skipped;  // CSVs that are not fMoE tuned tables

  [[nodiscard]] std::size_t error_count() const;
  [[nodiscard]] bool ok() const { return error_count() == 0; }
  [[nodiscard]] std::size_t count(MergeChange::Kind kind) const;
};

// Plans merging the rows of `incoming` into `target`, comparing keys with every tuned fMoE
// table directly in `siblings_dir` other than `target` and `incoming` themselves. Throws
// FileError or InputError when a file cannot be read as a table at all (missing, binary, CRLF,
// bad header, ...); every other problem is an error-level finding in the plan.
[[nodiscard]] MergePlan plan_merge(const std::filesystem::path& target,
                                   const std::filesystem::path& incoming,
                                   const std::optional<std::filesystem::path>& siblings_dir);

// Writes plan.after to plan.target atomically (a failed write leaves the old file). Throws
// moetune::Error if the plan has errors: a refused merge must never be written.
void apply_merge(const MergePlan& plan);

// A unified-style diff with no context lines: "--- a", "+++ b", then one "@@ -l,n +l,n @@"
// hunk per run of changed lines, "-" old and "+" new lines. Lines are compared by position,
// which is the exact diff for a merge (it replaces lines in place and appends at the end; it
// never moves or deletes one). Empty when the texts are equal.
[[nodiscard]] std::string positional_diff(std::string_view before, std::string_view after,
                                          std::string_view label_before,
                                          std::string_view label_after);

}  // namespace moetune::io
