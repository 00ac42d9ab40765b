#pragma once
// One row of an fMoE table, typed: the key AITER looks a shape up by, the tuned result (when
// the file is a tuned table) and, for rows read from a file, where they came from and their
// original text, so an untouched row is written back byte for byte.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autotune/io/fmoe_enums.hpp"

namespace moetune::io {

// Extra key columns of fused-hybrid (fhmoe) tables.
struct FhmoeKeyFields {
  std::int64_t shared_expert_id = 0;
  std::int64_t hidden_pad = 0;
  std::int64_t intermediate_pad = 0;
  GateMode gate_mode = GateMode::interleave;

  auto operator<=>(const FhmoeKeyFields&) const = default;
};

// What AITER matches exactly: (gfx, cu_num, the 12 untuned columns, _tag) — plus the fhmoe
// columns in fused-hybrid tables and gate_mode in grouped-MoE untuned lists. A row of a file
// without a gfx column gets the gfx AITER fills in from its cu_num (gfx_from_cu_num), so it
// equals the same shape written with that gfx; with an unknown cu_num (AITER would take the
// running GPU's arch) its gfx stays empty and it equals only other such rows.
struct FmoeKey {
  std::string gfx;
  std::optional<std::int64_t> cu_num;
  std::int64_t token = 0;
  std::int64_t model_dim = 0;
  std::int64_t inter_dim = 0;
  std::int64_t expert = 0;
  std::int64_t topk = 0;
  ActivationType act_type = ActivationType::silu;
  TorchDtype dtype = TorchDtype::bf16;
  TorchDtype q_dtype_a = TorchDtype::bf16;
  TorchDtype q_dtype_w = TorchDtype::bf16;
  QuantType q_type = QuantType::no;
  bool use_g1u1 = true;
  bool doweight_stage1 = false;
  std::string tag;
  std::optional<FhmoeKeyFields> fhmoe;
  std::optional<GateMode> gate_mode;  // grouped-MoE untuned lists only

  auto operator<=>(const FmoeKey&) const = default;

  // "gfx950 cu_num=256 token=1 model_dim=7168 ... _tag=''": for messages.
  [[nodiscard]] std::string describe() const;
};

// The arch AITER fills into the gfx of a legacy row (a table without a gfx column) from its
// cu_num: 256 -> gfx950, 80 and 304 -> gfx942 (chip_info's legacy map); "" for any other
// count, for which AITER would use the running GPU's arch.
[[nodiscard]] std::string_view gfx_from_cu_num(std::int64_t cu_num);

// The tuned columns. Times and rates are optional because AITER allows them blank (a row
// pinning kernels whose times were not measured in isolation).
struct TunedResult {
  std::int64_t block_m = 0;
  std::int64_t ksplit = 0;
  std::optional<double> us1;  // microseconds
  std::string kernel_name1;
  std::optional<double> err1;  // fraction: 0.003 is written "0.3%"
  std::optional<double> us2;
  std::string kernel_name2;
  std::optional<double> err2;
  std::optional<double> us;  // AITER: round(us1 + us2, 4)
  std::optional<bool> run_1stage;
  std::optional<bool> xbf16;
  std::optional<std::int64_t> flat;
  std::optional<double> tflops;
  std::optional<double> bw;  // GB/s

  bool operator==(const TunedResult&) const = default;
};

struct FmoeRow {
  FmoeKey key;
  std::optional<std::int64_t> actual_m;  // untuned lists only: time the bucket at this M
  std::optional<TunedResult> tuned;

  // For rows read from a file: the cells in the file's column order (short rows padded),
  // the 1-based line, the original text and how many trailing fields the line lacked.
  // A row built in code has line 0 and is formatted from its typed fields when written.
  std::vector<std::string> cells;
  std::vector<std::int64_t> columns;
  std::int64_t line = 0;
  std::string raw;
  int missing_fields = 0;
  int blank_lines_before = 0;  // empty lines above it in the file, written back unchanged
  bool gfx_from_cu_num = false;  // key.gfx was filled from cu_num (the file has no gfx column)

  [[nodiscard]] bool from_file() const { return line > 0; }
};

}  // namespace moetune::io
