#pragma once
// Qualified buckets as AITER tuned rows (DESIGN.md §5, docs/formats.md), every column in the
// meaning AITER reads it: the untuned key with gfx and cu_num filled in, the shared block_m,
// ksplit = stage one's split-K as AITER reads it (AITER sends a bf16 x fp4 row with ksplit > 1
// to another backend, so 0: moe-tune's split-K of either stage stays in its kernel name as
// _ksN, in kernelName1 or kernelName2), isolated stage times us1/us2 at `token` (where AITER's tuner times a row; the
// protocol itself runs at actual_m), the KernelConfig names, err1/err2, us = round(us1 + us2,
// 4), and tflops/bw by AITER's tuner formulas at `token`. moe-tune's own figures (at the timed
// M, its traffic model) go in the report (report.json: "figures").
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/withdrawn_rows.hpp"

namespace moetune::tune {

struct RowContext {
  std::string gfx;  // arch name written in the gfx column: gfx942, gfx950, sm_90
  std::int64_t cu_num = 0;
  // Written in `_tag` when not empty, in place of the untuned row's: a replayed run tags its
  // rows "replay", so they never share a key with (and never replace) a measured row.
  std::string tag = {};
};

// The key a tuned row of this untuned key carries: gfx, cu_num and the tag filled in.
[[nodiscard]] io::FmoeKey tuned_row_key(const io::FmoeKey& untuned, const RowContext& context);

// Throughput figures for one time: the M they are counted at, TFLOP/s and GB/s.
struct RowFigures {
  std::int64_t M = 0;
  double us = 0;
  double tflops = 0;
  double bw = 0;
};

// AITER's definitions (FmoeTuner.calculate, the whole-MoE estimate it writes): at M = token,
//   flop  = token*N1*model_dim*topk*2 + topk*token*model_dim*inter_dim*2  (N1 = 2*inter_dim
//           when use_g1u1, else inter_dim)
//   bytes = token*model_dim*bpe(q_dtype_a) + N1*model_dim*bpe(q_dtype_w)*expert
//           + inter_dim*model_dim*bpe(q_dtype_w)*expert + token*model_dim*bpe(dtype)
//   tflops = round(flop / us / 1e6, 2), bw = round(bytes / us / 1e3, 2) (GB/s), with AITER's
//   bytes per element (io::aiter_bytes_per_element). Every expert's weights count once.
[[nodiscard]] RowFigures aiter_row_figures(const io::FmoeKey& key, double us);

// moe-tune's own figures for a full-MoE time `us` taken at the bucket's M (actual_m): its
// moe::moe_flops and the expected traffic under uniform routing (moe::expected_moe_traffic).
// The report gives them for the confirmed median of the tuned pair.
[[nodiscard]] RowFigures moetune_row_figures(const BucketResult& bucket, double us);

// The row of a qualified bucket; nullopt for every other bucket (no row without a pass).
// tflops and bw are aiter_row_figures at the row's own `us`.
[[nodiscard]] std::optional<io::FmoeRow> tuned_row(const BucketResult& bucket,
                                                   const RowContext& context);

// Rows of every qualified bucket, in bucket order.
[[nodiscard]] std::vector<io::FmoeRow> tuned_rows(std::span<const BucketResult> buckets,
                                                  const RowContext& context);

// A key whose bucket was decided in this run without a row: an older row for it must go.
struct RowWithdrawal {
  io::FmoeKey key;
  std::string reason;
};

struct TunedRowsWritten {
  std::size_t replaced = 0;
  std::vector<WithdrawnRow> withdrawn;  // rows the file held for a withdrawal's key
};

// Adds the rows to `file` (created with AITER's newest header if absent; rows with the same
// key replaced; the file's own column order kept) and removes the rows of the withdrawals'
// keys, atomically; every other line keeps its bytes. With nothing to add or remove the file
// is left alone (not even created with a bare header).
TunedRowsWritten write_tuned_rows(const std::filesystem::path& file,
                                  std::span<const io::FmoeRow> rows,
                                  std::span<const RowWithdrawal> withdrawals = {});

}  // namespace moetune::tune
