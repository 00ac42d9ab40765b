#include "autotune/io/fmoe_schema.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "autotune/core/error.hpp"
#include "autotune/io/csv_table.hpp"

namespace moetune::io {
namespace {

using C = Column;
using K = ColumnKind;
using E = EnumKind;
using R = ValueRule;

// One row per column; the order matches the Column enumerators (checked below).
constexpr std::array<ColumnSpec, column_count> specs{{
    {C::gfx, "gfx", K::text, E::none, R::non_empty_text, false,
     "GPU architecture the row was tuned on (gfx942, gfx950, gfx90a, sm_90, ...)"},
    {C::cu_num, "cu_num", K::integer, E::none, R::positive, true,
     "compute units (AMD) or SMs (NVIDIA) of that GPU (an untuned list may leave it empty: "
     "the tuning device's)"},
    {C::token, "token", K::integer, E::none, R::positive, false,
     "token-count bucket M; AITER rounds the runtime M up to a power of two to look it up"},
    {C::model_dim, "model_dim", K::integer, E::none, R::positive, false, "hidden size H"},
    {C::inter_dim, "inter_dim", K::integer, E::none, R::positive, false,
     "(padded) intermediate size I per expert"},
    {C::expert, "expert", K::integer, E::none, R::positive, false, "number of experts E"},
    {C::topk, "topk", K::integer, E::none, R::positive, false, "experts per token"},
    {C::act_type, "act_type", K::enumeration, E::activation, R::any, false, "activation"},
    {C::dtype, "dtype", K::enumeration, E::dtype, R::any, false, "activation/output dtype"},
    {C::q_dtype_a, "q_dtype_a", K::enumeration, E::dtype, R::any, false,
     "quantized activation dtype"},
    {C::q_dtype_w, "q_dtype_w", K::enumeration, E::dtype, R::any, false, "quantized weight dtype"},
    {C::q_type, "q_type", K::enumeration, E::quant, R::any, false, "quantization granularity"},
    {C::use_g1u1, "use_g1u1", K::boolean, E::none, R::any, false,
     "1 = gated (gate and up projections)"},
    {C::doweight_stage1, "doweight_stage1", K::boolean, E::none, R::any, false,
     "1 = routing weight applied in stage one"},
    {C::block_m, "block_m", K::integer, E::none, R::positive, false,
     "stage-one tile M = sorting granularity"},
    {C::ksplit, "ksplit", K::integer, E::none, R::at_least_minus_one, false,
     "split-K factor (0 = none; -1 = chosen by the kernel)"},
    {C::us1, "us1", K::real, E::none, R::non_negative, true, "stage-one time, microseconds"},
    {C::kernel_name1, "kernelName1", K::text, E::none, R::any, true, "stage-one kernel"},
    {C::err1, "err1", K::percent, E::none, R::non_negative, true,
     "stage-one mismatch rate, like 0.0%"},
    {C::us2, "us2", K::real, E::none, R::non_negative, true,
     "stage-two time, microseconds (0 for a one-stage kernel)"},
    {C::kernel_name2, "kernelName2", K::text, E::none, R::any, true,
     "stage-two kernel (empty for a one-stage kernel)"},
    {C::err2, "err2", K::percent, E::none, R::non_negative, true,
     "stage-two mismatch rate, like 0.0%"},
    {C::us, "us", K::real, E::none, R::non_negative, true,
     "total time us1 + us2 rounded to 4 decimals"},
    {C::run_1stage, "run_1stage", K::boolean, E::none, R::any, false,
     "1 = a fused one-stage kernel"},
    {C::xbf16, "xbf16", K::boolean, E::none, R::any, true, "1 = bf16 activations kept"},
    {C::flat, "flat", K::integer, E::none, R::non_negative, true, "flat-kernel mode"},
    {C::tflops, "tflops", K::real, E::none, R::non_negative, true, "achieved TFLOP/s"},
    {C::bw, "bw", K::real, E::none, R::non_negative, true, "achieved bandwidth, GB/s"},
    {C::tag, "_tag", K::text, E::none, R::any, true, "free tag, part of the key (usually empty)"},
    {C::shared_expert_id, "shared_expert_id", K::integer, E::none, R::non_negative, false,
     "index of the shared expert fused into the routed ones"},
    {C::hidden_pad, "hidden_pad", K::integer, E::none, R::non_negative, false,
     "padding added to the hidden size"},
    {C::intermediate_pad, "intermediate_pad", K::integer, E::none, R::non_negative, false,
     "padding added to the intermediate size"},
    {C::gate_mode, "gate_mode", K::enumeration, E::gate_mode, R::any, false,
     "gate/up row order of w1"},
    {C::actual_m, "actual_m", K::integer, E::none, R::positive, true,
     "moe-tune extension (untuned lists only): M to time the bucket at, <= token"},
    {C::max_m, "max_m", K::integer, E::none, R::positive, true, "grouped: largest M served"},
    {C::tile_m, "tile_m", K::integer, E::none, R::positive, true, "grouped: stage-one tile M"},
    {C::tile_n, "tile_n", K::integer, E::none, R::positive, true, "grouped: stage-one tile N"},
    {C::tile_k, "tile_k", K::integer, E::none, R::positive, true, "grouped: stage-one tile K"},
    {C::tile_m2, "tile_m2", K::integer, E::none, R::positive, true, "grouped: stage-two tile M"},
    {C::tile_n2, "tile_n2", K::integer, E::none, R::positive, true, "grouped: stage-two tile N"},
    {C::tile_k2, "tile_k2", K::integer, E::none, R::positive, true, "grouped: stage-two tile K"},
    {C::m_warp, "m_warp", K::integer, E::none, R::positive, true, "grouped: stage-one warps on M"},
    {C::n_warp, "n_warp", K::integer, E::none, R::positive, true, "grouped: stage-one warps on N"},
    {C::m_warp2, "m_warp2", K::integer, E::none, R::positive, true,
     "grouped: stage-two warps on M"},
    {C::n_warp2, "n_warp2", K::integer, E::none, R::positive, true,
     "grouped: stage-two warps on N"},
    {C::num_buffers, "num_buffers", K::integer, E::none, R::positive, true,
     "grouped: stage-one pipeline buffers"},
    {C::num_buffer_stage2, "num_buffer_stage2", K::integer, E::none, R::positive, true,
     "grouped: stage-two pipeline buffers"},
    {C::split_k1, "split_k1", K::integer, E::none, R::positive, true, "grouped: stage-one split-K"},
    {C::split_k2, "split_k2", K::integer, E::none, R::positive, true, "grouped: stage-two split-K"},
    {C::grouped_persistent_m, "grouped_persistent_m", K::integer, E::none, R::non_negative, true,
     "grouped: persistent-M mode"},
    {C::persistent_workers, "persistent_workers", K::integer, E::none, R::non_negative, true,
     "grouped: persistent workers (empty = default)"},
    {C::wave_specialized_tdm, "wave_specialized_tdm", K::integer, E::none, R::non_negative, true,
     "grouped: wave-specialized TDM"},
    {C::tdm_as_in_prologue, "tdm_as_in_prologue", K::integer, E::none, R::non_negative, true,
     "grouped: TDM A-scale load in the prologue"},
    {C::cluster_n, "cluster_n", K::integer, E::none, R::at_least_minus_one, true,
     "grouped: cluster size on N (-1 = default)"},
    {C::waves_per_tensor_tdm, "waves_per_tensor_tdm", K::integer, E::none, R::at_least_minus_one,
     true, "grouped: waves per TDM tensor (-1 = default)"},
    {C::next_stage_prefetch, "next_stage_prefetch", K::integer, E::none, R::non_negative, true,
     "grouped: next-stage prefetch"},
}};

constexpr bool specs_in_enum_order() {
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (static_cast<std::size_t>(specs[i].column) != i) return false;
  }
  return true;
}
static_assert(specs_in_enum_order(), "specs[] must list columns in Column order");

#define MOETUNE_SHAPE_COLUMNS                                                                    \
  C::token, C::model_dim, C::inter_dim, C::expert, C::topk, C::act_type, C::dtype, C::q_dtype_a, \
      C::q_dtype_w, C::q_type, C::use_g1u1, C::doweight_stage1
#define MOETUNE_FHMOE_COLUMNS C::shared_expert_id, C::hidden_pad, C::intermediate_pad, C::gate_mode

constexpr std::array untuned_required{MOETUNE_SHAPE_COLUMNS};
constexpr std::array fhmoe_untuned_required{MOETUNE_SHAPE_COLUMNS, MOETUNE_FHMOE_COLUMNS};
constexpr std::array tuned_required{
    C::cu_num, MOETUNE_SHAPE_COLUMNS, C::block_m, C::ksplit, C::us1,       C::kernel_name1, C::err1,
    C::us2,    C::kernel_name2,       C::err2,    C::us,     C::run_1stage};
constexpr std::array fhmoe_tuned_required{
    C::cu_num, MOETUNE_SHAPE_COLUMNS, MOETUNE_FHMOE_COLUMNS, C::block_m,
    C::ksplit, C::kernel_name1,       C::kernel_name2};

constexpr std::array untuned_optional{C::gfx, C::cu_num, C::actual_m, C::tag};
// AITER's untuned_grouped_fmoe.csv adds the gate/up order of w1 to the shape key.
constexpr std::array grouped_untuned_optional{C::gfx, C::cu_num, C::actual_m, C::tag,
                                              C::gate_mode};
constexpr std::array grouped_tuned_required{C::cu_num, MOETUNE_SHAPE_COLUMNS, C::kernel_name1,
                                            C::kernel_name2};
constexpr std::array grouped_tuned_optional{
    C::gfx,          C::us,       C::tflops,   C::bw,      C::tag,        C::max_m,
    C::tile_m,       C::tile_n,   C::tile_k,   C::tile_m2, C::tile_n2,    C::tile_k2,
    C::m_warp,       C::n_warp,   C::m_warp2,  C::n_warp2, C::num_buffers, C::num_buffer_stage2,
    C::split_k1,     C::split_k2, C::grouped_persistent_m, C::persistent_workers,
    C::wave_specialized_tdm,      C::tdm_as_in_prologue,   C::cluster_n,
    C::waves_per_tensor_tdm,      C::next_stage_prefetch, C::gate_mode};
// The order of AITER's tuned_grouped_fmoe.csv.
constexpr std::array newest_grouped_tuned{
    C::gfx,          C::cu_num,    MOETUNE_SHAPE_COLUMNS, C::max_m,     C::tile_m,
    C::tile_n,       C::tile_k,    C::tile_m2,            C::tile_n2,   C::tile_k2,
    C::m_warp,       C::n_warp,    C::m_warp2,            C::n_warp2,   C::num_buffers,
    C::num_buffer_stage2,          C::split_k1,           C::split_k2,  C::grouped_persistent_m,
    C::persistent_workers,         C::wave_specialized_tdm, C::tdm_as_in_prologue,
    C::cluster_n,    C::waves_per_tensor_tdm, C::next_stage_prefetch, C::kernel_name1,
    C::kernel_name2, C::us,        C::tflops,             C::bw};
constexpr std::array newest_grouped_untuned{C::cu_num, MOETUNE_SHAPE_COLUMNS, C::gate_mode};
constexpr std::array tuned_optional{C::gfx, C::xbf16, C::flat, C::tflops, C::bw, C::tag};
constexpr std::array fhmoe_tuned_optional{C::gfx,  C::us1,    C::err1,       C::us2,
                                          C::err2, C::us,     C::run_1stage, C::xbf16,
                                          C::flat, C::tflops, C::bw,         C::tag};

constexpr std::array newest_tuned{C::gfx,          C::cu_num, MOETUNE_SHAPE_COLUMNS,
                                  C::block_m,      C::ksplit, C::us1,
                                  C::kernel_name1, C::err1,   C::us2,
                                  C::kernel_name2, C::err2,   C::us,
                                  C::run_1stage,   C::xbf16,  C::flat,
                                  C::tflops,       C::bw,     C::tag};
// The order of AITER's tuned_fhmoe.csv.
constexpr std::array newest_fhmoe_tuned{C::gfx,         C::cu_num,           C::token,
                                        C::model_dim,   C::inter_dim,        C::expert,
                                        C::topk,        C::shared_expert_id, C::act_type,
                                        C::dtype,       C::q_dtype_a,        C::q_dtype_w,
                                        C::q_type,      C::use_g1u1,         C::doweight_stage1,
                                        C::hidden_pad,  C::intermediate_pad, C::gate_mode,
                                        C::block_m,     C::ksplit,           C::kernel_name1,
                                        C::kernel_name2};
constexpr std::array newest_fhmoe_untuned{C::token,           C::model_dim,  C::inter_dim,
                                          C::expert,          C::topk,       C::shared_expert_id,
                                          C::act_type,        C::dtype,      C::q_dtype_a,
                                          C::q_dtype_w,       C::q_type,     C::use_g1u1,
                                          C::doweight_stage1, C::hidden_pad, C::intermediate_pad,
                                          C::gate_mode};

#undef MOETUNE_SHAPE_COLUMNS
#undef MOETUNE_FHMOE_COLUMNS

// A header is a tuned table's if it carries any result column, an fhmoe table's if it carries
// any fused-hybrid key column.
constexpr std::array tuned_markers{C::block_m, C::ksplit, C::kernel_name1, C::kernel_name2, C::us1,
                                   C::us2,     C::us};
constexpr std::array fhmoe_markers{C::shared_expert_id, C::hidden_pad, C::intermediate_pad};

}  // namespace

const ColumnSpec& column_spec(Column column) { return specs[static_cast<std::size_t>(column)]; }

std::span<const ColumnSpec> known_columns() { return specs; }

const ColumnSpec* find_column(std::string_view name) {
  for (auto const& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string_view expected_form(const ColumnSpec& spec) {
  switch (spec.kind) {
    case ColumnKind::boolean:
      return "0 or 1";
    case ColumnKind::percent:
      return "a non-negative percentage like 0.0% (or a bare fraction like 0.0)";
    case ColumnKind::real:
      return spec.rule == ValueRule::non_negative ? "a non-negative number" : "a number";
    case ColumnKind::integer:
      switch (spec.rule) {
        case ValueRule::positive:
          return "a positive integer";
        case ValueRule::non_negative:
          return "a non-negative integer";
        case ValueRule::at_least_minus_one:
          return "an integer >= -1";
        default:
          return "an integer";
      }
    case ColumnKind::text:
      return spec.rule == ValueRule::non_empty_text ? "a non-empty name" : "text";
    case ColumnKind::enumeration:
      return "one of the listed spellings";
  }
  return "a value";
}

std::string_view to_string(FmoeFileKind kind) {
  switch (kind) {
    case FmoeFileKind::untuned:
      return "untuned fMoE list";
    case FmoeFileKind::tuned:
      return "tuned fMoE table";
    case FmoeFileKind::fhmoe_untuned:
      return "untuned fused-hybrid (fhmoe) list";
    case FmoeFileKind::fhmoe_tuned:
      return "tuned fused-hybrid (fhmoe) table";
    case FmoeFileKind::grouped_untuned:
      return "untuned grouped-MoE list";
    case FmoeFileKind::grouped_tuned:
      return "tuned grouped-MoE table";
  }
  return "fMoE file";
}

bool is_tuned(FmoeFileKind kind) {
  return kind == FmoeFileKind::tuned || kind == FmoeFileKind::fhmoe_tuned ||
         kind == FmoeFileKind::grouped_tuned;
}

bool is_grouped(FmoeFileKind kind) {
  return kind == FmoeFileKind::grouped_untuned || kind == FmoeFileKind::grouped_tuned;
}

FmoeFamily family(FmoeFileKind kind) {
  if (is_fhmoe(kind)) return FmoeFamily::fhmoe;
  if (is_grouped(kind)) return FmoeFamily::grouped;
  return FmoeFamily::fmoe;
}

bool is_fhmoe(FmoeFileKind kind) {
  return kind == FmoeFileKind::fhmoe_untuned || kind == FmoeFileKind::fhmoe_tuned;
}

std::span<const Column> required_columns(FmoeFileKind kind) {
  switch (kind) {
    case FmoeFileKind::untuned:
      return untuned_required;
    case FmoeFileKind::tuned:
      return tuned_required;
    case FmoeFileKind::fhmoe_untuned:
      return fhmoe_untuned_required;
    case FmoeFileKind::fhmoe_tuned:
      return fhmoe_tuned_required;
    case FmoeFileKind::grouped_untuned:
      return untuned_required;
    case FmoeFileKind::grouped_tuned:
      return grouped_tuned_required;
  }
  return {};
}

std::span<const Column> optional_columns(FmoeFileKind kind) {
  switch (kind) {
    case FmoeFileKind::untuned:
    case FmoeFileKind::fhmoe_untuned:
      return untuned_optional;
    case FmoeFileKind::tuned:
      return tuned_optional;
    case FmoeFileKind::fhmoe_tuned:
      return fhmoe_tuned_optional;
    case FmoeFileKind::grouped_untuned:
      return grouped_untuned_optional;
    case FmoeFileKind::grouped_tuned:
      return grouped_tuned_optional;
  }
  return {};
}

std::vector<std::string_view> newest_header(FmoeFileKind kind) {
  std::span<const Column> columns;
  switch (kind) {
    case FmoeFileKind::untuned:
      columns = untuned_required;
      break;
    case FmoeFileKind::tuned:
      columns = newest_tuned;
      break;
    case FmoeFileKind::fhmoe_untuned:
      columns = newest_fhmoe_untuned;
      break;
    case FmoeFileKind::fhmoe_tuned:
      columns = newest_fhmoe_tuned;
      break;
    case FmoeFileKind::grouped_untuned:
      columns = newest_grouped_untuned;
      break;
    case FmoeFileKind::grouped_tuned:
      columns = newest_grouped_tuned;
      break;
  }
  std::vector<std::string_view> names;
  for (Column c : columns) names.push_back(column_spec(c).name);
  return names;
}

FmoeLayout detect_layout(const CsvTable& csv, std::vector<Diagnostic>& warnings) {
  auto const& header = csv.header();
  FmoeLayout layout;
  layout.index.fill(-1);
  for (std::size_t i = 0; i < header.cells.size(); ++i) {
    if (auto const* spec = find_column(header.cells[i])) {
      layout.index[static_cast<std::size_t>(spec->column)] = static_cast<int>(i);
    } else {
      layout.unknown.push_back(static_cast<int>(i));
    }
  }

  if (!layout.has(Column::token) && !layout.has(Column::model_dim) &&
      !layout.has(Column::inter_dim)) {
    throw InputError(csv.file(), header.line, 1,
                     fmt::format("not an fMoE table: expected a header naming columns such as "
                                 "token,model_dim,inter_dim,expert,topk,..., found '{}'",
                                 header.raw.substr(0, 80)));
  }

  bool const tuned = std::any_of(tuned_markers.begin(), tuned_markers.end(),
                                 [&](Column c) { return layout.has(c); });
  bool const fhmoe = std::any_of(fhmoe_markers.begin(), fhmoe_markers.end(),
                                 [&](Column c) { return layout.has(c); });
  // Grouped tables carry the grouped result columns and no block_m/ksplit; their untuned lists
  // add gate_mode alone to the shape (an fhmoe list adds it with the padding columns).
  bool const grouped_results = std::any_of(
      layout.index.begin() + static_cast<std::ptrdiff_t>(Column::max_m), layout.index.end(),
      [](int at) { return at >= 0; });
  bool const grouped = !fhmoe && (grouped_results || (!tuned && layout.has(Column::gate_mode)));
  if (grouped) {
    layout.kind = grouped_results || layout.has(Column::kernel_name1) || layout.has(Column::us)
                      ? FmoeFileKind::grouped_tuned
                      : FmoeFileKind::grouped_untuned;
  } else {
    layout.kind = tuned ? (fhmoe ? FmoeFileKind::fhmoe_tuned : FmoeFileKind::tuned)
                        : (fhmoe ? FmoeFileKind::fhmoe_untuned : FmoeFileKind::untuned);
  }

  std::vector<std::string_view> missing;
  for (Column c : required_columns(layout.kind)) {
    if (!layout.has(c)) missing.push_back(column_spec(c).name);
  }
  if (!missing.empty()) {
    throw InputError(csv.file(), header.line, 0,
                     fmt::format("bad header: missing column{} '{}', required by the {} "
                                 "layout",
                                 missing.size() == 1 ? "" : "s", fmt::join(missing, "', '"),
                                 to_string(layout.kind)));
  }

  // A known column that this kind of file must not have (e.g. actual_m in a tuned table:
  // AITER's tables have no such column and moe-tune never writes it there).
  auto const required = required_columns(layout.kind);
  auto const optional = optional_columns(layout.kind);
  for (auto const& spec : specs) {
    int const at = layout.at(spec.column);
    if (at < 0) continue;
    bool const allowed =
        std::find(required.begin(), required.end(), spec.column) != required.end() ||
        std::find(optional.begin(), optional.end(), spec.column) != optional.end();
    if (!allowed) {
      throw InputError(
          csv.file(), header.line, header.columns[static_cast<std::size_t>(at)],
          fmt::format(
              "column '{}' does not belong in the {} layout{}", spec.name, to_string(layout.kind),
              spec.column == Column::actual_m ? " (actual_m is for untuned lists only)" : ""));
    }
  }

  for (int at : layout.unknown) {
    auto const i = static_cast<std::size_t>(at);
    warnings.push_back({Severity::warning, csv.file(), header.line, header.columns[i],
                        fmt::format("unknown column '{}': kept as text and written back "
                                    "unchanged, but moe-tune does not check it",
                                    header.cells[i])});
  }
  return layout;
}

}  // namespace moetune::io
