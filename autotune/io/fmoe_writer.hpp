#pragma once
// Writing fMoE tables. Two promises:
//  1. A table read and written back unchanged is byte-identical: rows nobody touched are
//     emitted from their original text (short rows included) and the header, column order
//     and final-newline state are kept. A reviewer's diff shows only the rows moe-tune added.
//  2. New or replaced rows look like AITER's own: the file's column order, AITER's number
//     formats (number_format.hpp), and no value silently dropped for a column the file lacks.
// Files are replaced atomically (write_file_atomically), never half-written.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/io/fmoe_schema.hpp"
#include "autotune/io/fmoe_table.hpp"

namespace moetune::io {

// The cells of a row built in code, in the order of `columns` (a file's header). Throws
// InputError naming `file` if the row has a value for a column the file lacks (0 for xbf16 or
// flat, AITER's defaults, may be dropped), or a text value that would break the CSV.
[[nodiscard]] std::vector<std::string> format_row_cells(const FmoeRow& row,
                                                        const std::vector<std::string>& columns,
                                                        const std::filesystem::path& file);

// The whole file's text.
[[nodiscard]] std::string render_fmoe_table(const FmoeTable& table);

// Writes the table to `target` (default: the file it was read from), atomically.
void write_fmoe_table(const FmoeTable& table, const std::filesystem::path& target);
void write_fmoe_table(const FmoeTable& table);

// Adds rows to `file`, replacing rows with the same key and keeping the file's own column
// order; creates the file with AITER's newest header for `kind_if_new` if it does not exist.
// Refuses (InputError) a file of another kind. Returns the number of rows replaced.
std::size_t merge_rows_into_file(const std::filesystem::path& file, std::span<const FmoeRow> rows,
                                 FmoeFileKind kind_if_new);

struct RowFileUpdate {
  std::size_t replaced = 0;
  std::vector<FmoeRow> removed;  // as they were in the file: line and original text
};

// merge_rows_into_file, and first removes the rows whose key is in `remove` (a key that also
// gets a row in `rows` is replaced in place, not removed). Every other line keeps its bytes;
// a file whose last row goes keeps its header. Nothing is written (nor created) when nothing
// changes.
RowFileUpdate update_rows_in_file(const std::filesystem::path& file, std::span<const FmoeRow> rows,
                                  std::span<const FmoeKey> remove, FmoeFileKind kind_if_new);

}  // namespace moetune::io
