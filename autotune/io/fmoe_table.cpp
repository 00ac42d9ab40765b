#include "autotune/io/fmoe_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "autotune/core/error.hpp"
#include "autotune/io/cell_values.hpp"

namespace moetune::io {
namespace {

bool is_result_column(Column c) {
  return (c >= Column::block_m && c <= Column::bw) || is_grouped_column(c);
}

// Converts the cells of one row, recording a diagnostic for each bad one. A row that was
// padded (one field short) is `lenient` about result columns: its values after the gap sit
// one column off, and AITER reads it that way too, so we neither trust nor reject them.
class RowConverter {
 public:
  RowConverter(const FmoeLayout& layout, const CsvRow& row, const std::filesystem::path& file,
               std::vector<Diagnostic>& out)
      : m_layout(layout),
        m_row(row),
        m_file(file),
        m_out(out),
        m_lenient(row.missing_fields > 0),
        m_wildcard_keys(is_grouped(layout.kind)) {}

  [[nodiscard]] bool failed() const { return m_failed; }

  std::optional<std::int64_t> integer(Column c) {
    auto const cell = get(c);
    if (!cell) return std::nullopt;
    auto const value = parse_integer(*cell);
    if (!value) return reject(c, *cell);
    // AITER's grouped lookup compares shape cells as text, a blank cell matching any value: a
    // value no runtime shape has (topk -1) is a row that never matches, not a broken table.
    bool const free = m_wildcard_keys && is_shape_column(c);
    if (!free && !satisfies(column_spec(c).rule, static_cast<double>(*value))) {
      return reject(c, *cell);
    }
    return value;
  }

  std::optional<double> real(Column c) {
    auto const cell = get(c);
    if (!cell) return std::nullopt;
    auto const value = parse_real(*cell);
    if (!value || !satisfies(column_spec(c).rule, *value)) return reject(c, *cell);
    return value;
  }

  std::optional<double> percent(Column c) {
    auto const cell = get(c);
    if (!cell) return std::nullopt;
    auto const value = parse_percent(*cell);
    if (!value || *value < 0) return reject(c, *cell);
    return value;
  }

  std::optional<bool> boolean(Column c) {
    auto const cell = get(c);
    if (!cell) return std::nullopt;
    auto const value = parse_bool01(*cell);
    if (!value) return reject(c, *cell);
    return value;
  }

  std::optional<std::string> text(Column c) {
    auto const cell = get(c);
    if (!cell) return std::nullopt;
    return std::string(*cell);
  }

  template <class E, class Parse>
  std::optional<E> enumeration(Column c, Parse parse) {
    auto const cell = get(c);
    if (!cell) return std::nullopt;
    auto parsed = parse(*cell);
    if (!parsed) {
      error(c, fmt::format("column '{}': {}", column_spec(c).name, parsed.error));
      return std::nullopt;
    }
    return parsed.value;
  }

  // A rule that spans columns, reported at column `c`.
  void error(Column c, std::string message) {
    if (m_lenient && is_result_column(c)) return;
    m_failed = true;
    m_out.push_back({Severity::error, m_file, m_row.line, column_of(c), std::move(message)});
  }

  [[nodiscard]] std::string_view cell(Column c) const {
    return m_row.cells[static_cast<std::size_t>(m_layout.at(c))];
  }

 private:
  static bool satisfies(ValueRule rule, double value) {
    switch (rule) {
      case ValueRule::positive:
        return value > 0;
      case ValueRule::non_negative:
        return value >= 0;
      case ValueRule::at_least_minus_one:
        return value >= -1;
      default:
        return true;
    }
  }

  static bool is_shape_column(Column c) { return c >= Column::token && c <= Column::doweight_stage1; }

  [[nodiscard]] std::int64_t column_of(Column c) const {
    int const at = m_layout.at(c);
    return at < 0 ? 0 : m_row.columns[static_cast<std::size_t>(at)];
  }

  // The cell of column c; nullopt if the file has no such column or the cell is empty where
  // empty is allowed. An empty cell where a value is required is reported here.
  std::optional<std::string_view> get(Column c) {
    if (!m_layout.has(c)) return std::nullopt;
    std::string_view const value = cell(c);
    if (value.empty()) {
      auto const& spec = column_spec(c);
      if (!spec.may_be_empty && !(m_wildcard_keys && is_shape_column(c))) {
        error(c, fmt::format("column '{}': expected {}, found an empty field", spec.name,
                             expected_form(spec)));
      }
      return std::nullopt;
    }
    return value;
  }

  std::nullopt_t reject(Column c, std::string_view value) {
    auto const& spec = column_spec(c);
    error(c, fmt::format("column '{}': expected {}, found '{}'", spec.name, expected_form(spec),
                         value));
    return std::nullopt;
  }

  const FmoeLayout& m_layout;
  const CsvRow& m_row;
  const std::filesystem::path& m_file;
  std::vector<Diagnostic>& m_out;
  bool m_lenient;
  bool m_wildcard_keys;  // grouped-MoE tables: shape cells are matched as text, blank = any
  bool m_failed = false;
};

// Rules between columns of one key: the reasons are physical, so say them.
void check_key_rules(RowConverter& in, const FmoeKey& key,
                     const std::optional<std::int64_t>& actual_m) {
  if (key.topk > 0 && key.expert > 0 && key.topk > key.expert) {
    in.error(Column::topk,
             fmt::format("column 'topk': {} exceeds expert ({}): a token cannot be routed to "
                         "more experts than exist",
                         key.topk, key.expert));
  }
  if (int const g = k_granularity(key.q_type); g > 1) {
    for (Column c : {Column::model_dim, Column::inter_dim}) {
      auto const value = c == Column::model_dim ? key.model_dim : key.inter_dim;
      if (value > 0 && value % g != 0) {
        in.error(c, fmt::format("column '{}': expected a multiple of {} under {} (one scale "
                                "per {} elements along K), found {}",
                                column_spec(c).name, g, to_string(key.q_type), g, value));
      }
    }
  }
  if (actual_m && key.token > 0 && *actual_m > key.token) {
    in.error(Column::actual_m,
             fmt::format("column 'actual_m': expected at most token ({}): a bucket is timed "
                         "at an M it covers, found {}",
                         key.token, *actual_m));
  }
  if (key.fhmoe && key.expert > 0 && key.fhmoe->shared_expert_id >= key.expert) {
    in.error(Column::shared_expert_id,
             fmt::format("column 'shared_expert_id': expected an expert index below expert "
                         "({}), found {}",
                         key.expert, key.fhmoe->shared_expert_id));
  }
}

std::optional<FmoeRow> convert_row(const FmoeLayout& layout, const CsvRow& csv_row,
                                   const std::filesystem::path& file,
                                   std::vector<Diagnostic>& out) {
  using C = Column;
  RowConverter in(layout, csv_row, file, out);
  FmoeRow row;
  FmoeKey& key = row.key;
  key.gfx = in.text(C::gfx).value_or("");  // an empty gfx cell is reported by text()
  key.cu_num = in.integer(C::cu_num);
  if (is_tuned(layout.kind) && layout.has(C::cu_num) && in.cell(C::cu_num).empty()) {
    in.error(C::cu_num, "column 'cu_num': expected a positive integer, found an empty field (a "
                        "tuned row is looked up by the CU count of the GPU it was tuned on)");
  }
  if (!layout.has(C::gfx) && key.cu_num) {
    key.gfx = std::string(gfx_from_cu_num(*key.cu_num));  // what AITER fills in
    row.gfx_from_cu_num = !key.gfx.empty();
  }
  key.token = in.integer(C::token).value_or(0);
  key.model_dim = in.integer(C::model_dim).value_or(0);
  key.inter_dim = in.integer(C::inter_dim).value_or(0);
  key.expert = in.integer(C::expert).value_or(0);
  key.topk = in.integer(C::topk).value_or(0);
  key.act_type = in.enumeration<ActivationType>(C::act_type, parse_activation_type)
                     .value_or(ActivationType::silu);
  key.dtype = in.enumeration<TorchDtype>(C::dtype, parse_torch_dtype).value_or(TorchDtype::bf16);
  key.q_dtype_a =
      in.enumeration<TorchDtype>(C::q_dtype_a, parse_torch_dtype).value_or(TorchDtype::bf16);
  key.q_dtype_w =
      in.enumeration<TorchDtype>(C::q_dtype_w, parse_torch_dtype).value_or(TorchDtype::bf16);
  key.q_type = in.enumeration<QuantType>(C::q_type, parse_quant_type).value_or(QuantType::no);
  key.use_g1u1 = in.boolean(C::use_g1u1).value_or(false);
  key.doweight_stage1 = in.boolean(C::doweight_stage1).value_or(false);
  key.tag = in.text(C::tag).value_or("");
  if (is_fhmoe(layout.kind)) {
    FhmoeKeyFields f;
    f.shared_expert_id = in.integer(C::shared_expert_id).value_or(0);
    f.hidden_pad = in.integer(C::hidden_pad).value_or(0);
    f.intermediate_pad = in.integer(C::intermediate_pad).value_or(0);
    f.gate_mode =
        in.enumeration<GateMode>(C::gate_mode, parse_gate_mode).value_or(GateMode::interleave);
    key.fhmoe = f;
  } else if (layout.has(C::gate_mode)) {
    key.gate_mode = in.enumeration<GateMode>(C::gate_mode, parse_gate_mode);
  }
  for (auto const& spec : known_columns()) {
    if (is_grouped_column(spec.column)) (void)in.integer(spec.column);
  }
  row.actual_m = in.integer(C::actual_m);
  if (!in.failed() && !is_grouped(layout.kind)) check_key_rules(in, key, row.actual_m);

  if (is_tuned(layout.kind)) {
    TunedResult t;
    t.block_m = in.integer(C::block_m).value_or(0);
    t.ksplit = in.integer(C::ksplit).value_or(0);
    t.us1 = in.real(C::us1);
    t.kernel_name1 = in.text(C::kernel_name1).value_or("");
    t.err1 = in.percent(C::err1);
    t.us2 = in.real(C::us2);
    t.kernel_name2 = in.text(C::kernel_name2).value_or("");
    t.err2 = in.percent(C::err2);
    t.us = in.real(C::us);
    t.run_1stage = in.boolean(C::run_1stage);
    t.xbf16 = in.boolean(C::xbf16);
    t.flat = in.integer(C::flat);
    t.tflops = in.real(C::tflops);
    t.bw = in.real(C::bw);
    row.tuned = std::move(t);
  }
  if (in.failed()) return std::nullopt;

  row.cells = csv_row.cells;
  row.columns = csv_row.columns;
  row.line = csv_row.line;
  row.raw = csv_row.raw;
  row.missing_fields = csv_row.missing_fields;
  row.blank_lines_before = csv_row.blank_lines_before;
  return row;
}

Diagnostic short_row_warning(const CsvTable& csv, const CsvRow& row) {
  auto const width = csv.column_names().size();
  auto const found = width - static_cast<std::size_t>(row.missing_fields);
  return {Severity::warning, csv.file(), row.line, static_cast<std::int64_t>(row.raw.size()) + 1,
          fmt::format("row has {} fields, the header {}: padded with an empty '{}' field as "
                      "pandas does when AITER loads it; the row's result columns may sit one "
                      "column off, so they are not checked",
                      found, width, csv.column_names().back())};
}

}  // namespace

FmoeTable::FmoeTable(std::filesystem::path file, FmoeLayout layout, CsvRow header,
                     std::vector<FmoeRow> rows, bool ends_with_newline,
                     std::vector<Diagnostic> warnings)
    : m_file(std::move(file)),
      m_layout(std::move(layout)),
      m_header(std::move(header)),
      m_rows(std::move(rows)),
      m_ends_with_newline(ends_with_newline),
      m_warnings(std::move(warnings)) {}

const FmoeRow* FmoeTable::find(const FmoeKey& key) const {
  auto const it = std::find_if(m_rows.begin(), m_rows.end(),
                               [&](const FmoeRow& row) { return row.key == key; });
  return it == m_rows.end() ? nullptr : &*it;
}

bool FmoeTable::upsert(FmoeRow row) {
  for (auto& existing : m_rows) {
    if (existing.key == row.key) {
      int const blank = existing.blank_lines_before;  // the file's layout around the line stays
      existing = std::move(row);
      existing.blank_lines_before = blank;
      existing.line = 0;  // replaced: written from its typed fields, not the old text
      existing.raw.clear();
      existing.cells.clear();
      existing.columns.clear();
      existing.missing_fields = 0;
      return true;
    }
  }
  row.line = 0;
  row.raw.clear();
  row.cells.clear();
  row.columns.clear();
  row.missing_fields = 0;
  row.blank_lines_before = 0;
  m_rows.push_back(std::move(row));
  return false;
}

std::optional<FmoeRow> FmoeTable::erase(const FmoeKey& key) {
  auto const it = std::find_if(m_rows.begin(), m_rows.end(),
                               [&](const FmoeRow& row) { return row.key == key; });
  if (it == m_rows.end()) return std::nullopt;
  FmoeRow removed = std::move(*it);
  m_rows.erase(it);
  return removed;
}

std::size_t FmoeParseResult::error_count() const {
  return static_cast<std::size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::error; }));
}

std::size_t FmoeParseResult::warning_count() const { return diagnostics.size() - error_count(); }

CsvReadOptions fmoe_csv_options() {
  CsvReadOptions options;
  options.max_missing_fields = 1;
  return options;
}

FmoeParseResult parse_fmoe_csv(const CsvTable& csv) {
  std::vector<Diagnostic> diagnostics;
  FmoeLayout layout = detect_layout(csv, diagnostics);
  std::vector<Diagnostic> warnings = diagnostics;  // header warnings

  std::vector<FmoeRow> rows;
  rows.reserve(csv.rows().size());
  auto blank_warning = [&](std::int64_t line, int count) {
    auto warning = Diagnostic{Severity::warning, csv.file(), line, 1,
                              fmt::format("{} empty line{}: skipped, as pandas (and so AITER) "
                                          "skips blank lines; kept when the file is rewritten",
                                          count, count == 1 ? "" : "s")};
    diagnostics.push_back(warning);
    warnings.push_back(std::move(warning));
  };
  for (auto const& csv_row : csv.rows()) {
    if (csv_row.blank_lines_before > 0) {
      blank_warning(csv_row.line - csv_row.blank_lines_before, csv_row.blank_lines_before);
    }
    if (csv_row.missing_fields > 0) {
      auto warning = short_row_warning(csv, csv_row);
      diagnostics.push_back(warning);
      warnings.push_back(std::move(warning));
    }
    if (auto row = convert_row(layout, csv_row, csv.file(), diagnostics)) {
      rows.push_back(std::move(*row));
    }
  }
  if (int const trailing = csv.trailing_blank_lines(); trailing > 0) {
    std::int64_t const last = csv.rows().empty() ? csv.header().line : csv.rows().back().line;
    blank_warning(last + 1, trailing);
  }
  FmoeTable table(csv.file(), std::move(layout), csv.header(), std::move(rows),
                  csv.ends_with_newline(), std::move(warnings));
  table.set_trailing_blank_lines(csv.trailing_blank_lines());
  return {std::move(table), std::move(diagnostics), csv.rows().size()};
}

FmoeParseResult parse_fmoe_file(const std::filesystem::path& file) {
  return parse_fmoe_csv(read_csv(file, fmoe_csv_options()));
}

FmoeTable read_fmoe_table(const std::filesystem::path& file) {
  auto result = parse_fmoe_file(file);
  for (auto const& d : result.diagnostics) {
    if (d.severity == Severity::error) throw InputError(d.file, d.line, d.column, d.message);
  }
  return std::move(result.table);
}

FmoeTable make_fmoe_table(std::filesystem::path file, FmoeFileKind kind) {
  auto const names = newest_header(kind);
  std::string raw;
  for (auto const& name : names) {
    if (!raw.empty()) raw += ',';
    raw += name;
  }
  CsvTable csv = parse_csv(raw + "\n", file);
  std::vector<Diagnostic> ignored;
  FmoeLayout layout = detect_layout(csv, ignored);
  return FmoeTable(std::move(file), std::move(layout), csv.header(), {}, true, {});
}

}  // namespace moetune::io
