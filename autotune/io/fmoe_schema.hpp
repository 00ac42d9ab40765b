#pragma once
// The columns of AITER's fMoE tables (and moe-tune's one extension), what each holds, and
// which columns make a file an untuned list, a tuned table, a fused-hybrid (fhmoe) table or a
// grouped-MoE table (AITER's tuned_grouped_fmoe.csv family, read by its FlyDSL grouped MoE
// through AITER_CONFIG_GROUPED_FMOE: same shape key, its own tile/warp/buffer result columns).
//
// AITER reads these files with pandas by column *name*, so column order is free and differs
// between generations of files (older tuned tables lack gfx, xbf16 and flat). We therefore
// locate every column by name and never assume positions.
#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "autotune/io/diagnostic.hpp"

namespace moetune::io {

class CsvTable;

// Every column we know, in the newest tuned header's order, then the fhmoe ones, then ours.
// clang-format off
enum class Column {
  gfx, cu_num,
  token, model_dim, inter_dim, expert, topk,
  act_type, dtype, q_dtype_a, q_dtype_w, q_type, use_g1u1, doweight_stage1,
  block_m, ksplit, us1, kernel_name1, err1, us2, kernel_name2, err2, us, run_1stage,
  xbf16, flat, tflops, bw, tag,
  shared_expert_id, hidden_pad, intermediate_pad, gate_mode,
  actual_m,
  // grouped-MoE result columns (tuned_grouped_fmoe.csv)
  max_m, tile_m, tile_n, tile_k, tile_m2, tile_n2, tile_k2, m_warp, n_warp, m_warp2, n_warp2,
  num_buffers, num_buffer_stage2, split_k1, split_k2, grouped_persistent_m, persistent_workers,
  wave_specialized_tdm, tdm_as_in_prologue, cluster_n, waves_per_tensor_tdm,
  next_stage_prefetch,
};
// clang-format on
inline constexpr std::size_t column_count =
    static_cast<std::size_t>(Column::next_stage_prefetch) + 1;
[[nodiscard]] constexpr bool is_grouped_column(Column c) {
  return c >= Column::max_m && c <= Column::next_stage_prefetch;
}

enum class ColumnKind { integer, boolean, real, enumeration, text, percent };
enum class EnumKind { none, activation, dtype, quant, gate_mode };

// What a value must satisfy beyond its kind.
enum class ValueRule { any, positive, non_negative, at_least_minus_one, non_empty_text };

struct ColumnSpec {
  Column column;
  std::string_view name;  // AITER's spelling
  ColumnKind kind;
  EnumKind enum_kind;
  ValueRule rule;
  bool may_be_empty;  // an empty cell means "not recorded"
  std::string_view meaning;
};

[[nodiscard]] const ColumnSpec& column_spec(Column column);
[[nodiscard]] std::span<const ColumnSpec> known_columns();
// nullptr for a column we do not know.
[[nodiscard]] const ColumnSpec* find_column(std::string_view name);
// "a positive integer", "0 or 1", "a percentage like 0.0%", ...
[[nodiscard]] std::string_view expected_form(const ColumnSpec& spec);

enum class FmoeFileKind {
  untuned,
  tuned,
  fhmoe_untuned,
  fhmoe_tuned,
  grouped_untuned,
  grouped_tuned,
};
[[nodiscard]] std::string_view to_string(FmoeFileKind kind);
[[nodiscard]] bool is_tuned(FmoeFileKind kind);
[[nodiscard]] bool is_fhmoe(FmoeFileKind kind);
[[nodiscard]] bool is_grouped(FmoeFileKind kind);

// The lookup a table feeds in AITER: keys of different families never meet (each family is
// read through its own AITER_CONFIG_* variable), tuned and untuned files never meet either.
enum class FmoeFamily { fmoe, fhmoe, grouped };
[[nodiscard]] FmoeFamily family(FmoeFileKind kind);

// Columns a file of this kind must have (any order).
[[nodiscard]] std::span<const Column> required_columns(FmoeFileKind kind);
// Columns a file of this kind may have besides the required ones.
[[nodiscard]] std::span<const Column> optional_columns(FmoeFileKind kind);
// The header moe-tune writes when it creates a file of this kind: AITER's newest layout.
[[nodiscard]] std::vector<std::string_view> newest_header(FmoeFileKind kind);

// Where each known column sits in one file.
struct FmoeLayout {
  FmoeFileKind kind = FmoeFileKind::untuned;
  std::array<int, column_count> index{};  // position in the header, -1 if absent
  std::vector<int> unknown;               // positions of columns we do not know (kept as text)

  [[nodiscard]] bool has(Column column) const { return at(column) >= 0; }
  [[nodiscard]] int at(Column column) const { return index[static_cast<std::size_t>(column)]; }
};

// Classifies a header by the columns it has. Throws InputError (naming the header line and,
// where one is at fault, the column) when required columns are missing or a column does not
// belong in this kind of file; appends a warning for every unknown column.
[[nodiscard]] FmoeLayout detect_layout(const CsvTable& csv, std::vector<Diagnostic>& warnings);

}  // namespace moetune::io
