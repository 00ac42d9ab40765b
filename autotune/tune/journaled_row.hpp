#pragma once
// Which journaled decisions may put a row into the tuned table (issue #12: "rows only from
// qualified decisions"). A journal is a file on disk: it can be edited, mixed up or written by
// another plan, and `--resume` re-emits its rows without measuring anything. So a row is
// written only when every record of the decision agrees that the bucket qualified, for this
// very bucket and machine: the entry's verdict, its report's verdict, the winning pipeline's
// outcome and the row's key. Anything else yields no row and a warning naming the journal line.
#include <filesystem>
#include <optional>
#include <string>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/tune/journal.hpp"
#include "autotune/tune/tuned_rows.hpp"

namespace moetune::tune {

struct JournaledRow {
  std::optional<io::FmoeRow> row;  // the row to write; nullopt: none for this bucket
  // Why an entry that carries a row, or claims to qualify, yields none:
  // "FILE:LINE: bucket KEY: ...; no row is written for it". Empty when the entry is consistent.
  std::string warning;
};

// The row `entry` (decided for the plan bucket `bucket_key`, read from `journal_file`, or
// measured in this run when entry.journal_line is 0) may contribute. `context` is this run's
// gfx, cu_num and tag: the row must carry exactly tuned_row_key(bucket_key, context).
[[nodiscard]] JournaledRow journaled_row(const JournalEntry& entry, const io::FmoeKey& bucket_key,
                                         const RowContext& context,
                                         const std::filesystem::path& journal_file);

}  // namespace moetune::tune
