#include "autotune/io/fmoe_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/io/number_format.hpp"

namespace moetune::io {
namespace {

using CellTexts = std::array<std::optional<std::string>, column_count>;

std::string bool_text(bool value) { return value ? "1" : "0"; }

// Every column the row has a value for, as AITER would print it.
CellTexts typed_cells(const FmoeRow& row) {
  using C = Column;
  CellTexts out;
  auto set = [&](Column c, std::string text) {
    out[static_cast<std::size_t>(c)] = std::move(text);
  };
  auto const& k = row.key;
  if (!k.gfx.empty()) set(C::gfx, k.gfx);
  if (k.cu_num) set(C::cu_num, std::to_string(*k.cu_num));
  set(C::token, std::to_string(k.token));
  set(C::model_dim, std::to_string(k.model_dim));
  set(C::inter_dim, std::to_string(k.inter_dim));
  set(C::expert, std::to_string(k.expert));
  set(C::topk, std::to_string(k.topk));
  set(C::act_type, std::string(to_string(k.act_type)));
  set(C::dtype, std::string(to_string(k.dtype)));
  set(C::q_dtype_a, std::string(to_string(k.q_dtype_a)));
  set(C::q_dtype_w, std::string(to_string(k.q_dtype_w)));
  set(C::q_type, std::string(to_string(k.q_type)));
  set(C::use_g1u1, bool_text(k.use_g1u1));
  set(C::doweight_stage1, bool_text(k.doweight_stage1));
  set(C::tag, k.tag);
  if (k.fhmoe) {
    set(C::shared_expert_id, std::to_string(k.fhmoe->shared_expert_id));
    set(C::hidden_pad, std::to_string(k.fhmoe->hidden_pad));
    set(C::intermediate_pad, std::to_string(k.fhmoe->intermediate_pad));
    set(C::gate_mode, std::string(to_string(k.fhmoe->gate_mode)));
  }
  if (k.gate_mode) set(C::gate_mode, std::string(to_string(*k.gate_mode)));
  if (row.actual_m) set(C::actual_m, std::to_string(*row.actual_m));
  if (row.tuned) {
    auto const& t = *row.tuned;
    auto opt = [&](Column c, const auto& value, auto format) {
      set(c, value ? format(*value) : std::string());
    };
    set(C::block_m, std::to_string(t.block_m));
    set(C::ksplit, std::to_string(t.ksplit));
    opt(C::us1, t.us1, format_us);
    set(C::kernel_name1, t.kernel_name1);
    opt(C::err1, t.err1, format_percent);
    opt(C::us2, t.us2, format_us);
    set(C::kernel_name2, t.kernel_name2);
    opt(C::err2, t.err2, format_percent);
    opt(C::us, t.us, format_us);
    opt(C::run_1stage, t.run_1stage, bool_text);
    if (t.xbf16) set(C::xbf16, bool_text(*t.xbf16));
    if (t.flat) set(C::flat, std::to_string(*t.flat));
    opt(C::tflops, t.tflops, format_2dp);
    opt(C::bw, t.bw, format_2dp);
  }
  return out;
}

std::string join_cells(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ',';
    line += cells[i];
  }
  return line;
}

}  // namespace

std::vector<std::string> format_row_cells(const FmoeRow& row,
                                          const std::vector<std::string>& columns,
                                          const std::filesystem::path& file) {
  CellTexts texts = typed_cells(row);
  std::vector<std::string> cells;
  cells.reserve(columns.size());
  std::array<bool, column_count> placed{};
  for (auto const& name : columns) {
    auto const* spec = find_column(name);
    if (spec == nullptr) {
      cells.emplace_back();  // a column we do not know: nothing to say in it
      continue;
    }
    auto const i = static_cast<std::size_t>(spec->column);
    placed[i] = true;
    cells.push_back(texts[i].value_or(""));
  }

  for (auto const& spec : known_columns()) {
    auto const i = static_cast<std::size_t>(spec.column);
    if (placed[i] || !texts[i] || texts[i]->empty()) continue;
    // AITER treats a missing xbf16/flat as 0, and fills a missing gfx in from cu_num, so an
    // older file loses nothing by omitting them.
    bool const aiter_default =
        ((spec.column == Column::xbf16 || spec.column == Column::flat) && *texts[i] == "0") ||
        (spec.column == Column::gfx && row.key.cu_num &&
         *texts[i] == gfx_from_cu_num(*row.key.cu_num));
    if (aiter_default) continue;
    throw InputError(file, 1, 0,
                     fmt::format("cannot write the row {}: it sets {}={} but the file has no "
                                 "'{}' column (an older AITER layout); its column order is "
                                 "kept, so write this row to a file with the newest header "
                                 "or leave the value empty",
                                 row.key.describe(), spec.name, *texts[i], spec.name));
  }

  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].find_first_of(",\"\n\r") != std::string::npos) {
      throw InputError(file, 1, 0,
                       fmt::format("cannot write the row {}: its '{}' value '{}' contains a "
                                   "comma, quote or line break, which AITER tables cannot hold",
                                   row.key.describe(), columns[i], cells[i]));
    }
  }
  return cells;
}

std::string render_fmoe_table(const FmoeTable& table) {
  std::string out = table.header().raw;
  for (auto const& row : table.rows()) {
    out.append(static_cast<std::size_t>(row.blank_lines_before), '\n');
    out += '\n';
    if (row.from_file()) {
      out += row.raw;
    } else {
      out += join_cells(format_row_cells(row, table.column_names(), table.file()));
    }
  }
  out.append(static_cast<std::size_t>(table.trailing_blank_lines()), '\n');
  if (table.ends_with_newline()) out += '\n';
  return out;
}

void write_fmoe_table(const FmoeTable& table, const std::filesystem::path& target) {
  // Render first: a row that cannot be written stops us before the file is touched.
  auto const text = render_fmoe_table(table);
  write_file_atomically(target, text);
}

void write_fmoe_table(const FmoeTable& table) { write_fmoe_table(table, table.file()); }

std::size_t merge_rows_into_file(const std::filesystem::path& file, std::span<const FmoeRow> rows,
                                 FmoeFileKind kind_if_new) {
  return update_rows_in_file(file, rows, {}, kind_if_new).replaced;
}

RowFileUpdate update_rows_in_file(const std::filesystem::path& file, std::span<const FmoeRow> rows,
                                  std::span<const FmoeKey> remove, FmoeFileKind kind_if_new) {
  RowFileUpdate update;
  std::error_code ec;
  bool const exists = std::filesystem::exists(file, ec);
  // A file that does not exist holds nothing to remove: only rows to add create it.
  if (rows.empty() && (remove.empty() || !exists)) return update;
  FmoeTable table = exists ? read_fmoe_table(file) : make_fmoe_table(file, kind_if_new);
  if (table.kind() != kind_if_new) {
    throw InputError(file, 1, 0,
                     fmt::format("the file is of kind '{}'; cannot add rows of kind '{}' to it",
                                 to_string(table.kind()), to_string(kind_if_new)));
  }
  for (auto const& key : remove) {
    bool const replaced_instead = std::any_of(rows.begin(), rows.end(),
                                              [&](const FmoeRow& row) { return row.key == key; });
    if (replaced_instead) continue;
    if (auto row = table.erase(key)) update.removed.push_back(std::move(*row));
  }
  for (auto const& row : rows) {
    if (table.upsert(row)) ++update.replaced;
  }
  if (rows.empty() && update.removed.empty()) return update;  // the file stays as it is
  write_fmoe_table(table, file);
  return update;
}

}  // namespace moetune::io
