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
// columns in fused-hybrid tables. A file without a gfx or cu_num column has an empty gfx /
// no cu_num here; such keys never equal keys that do name them.
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

  auto operator<=>(const FmoeKey&) const = default;

  // "gfx950 cu_num=256 token=1 model_dim=7168 ... _tag=''": for messages.
  [[nodiscard]] std::string describe() const;
};

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

  [[nodiscard]] bool from_file() const { return line > 0; }
};

}  // namespace moetune::io
