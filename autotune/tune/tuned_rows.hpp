#pragma once
// Qualified buckets as AITER tuned rows (DESIGN.md §5): the untuned key with gfx and cu_num
// filled in, the shared block_m, ksplit (AITER: 0 = none), isolated stage times us1/us2,
// the KernelConfig names, err1/err2, us = round(us1 + us2, 4), TFLOP/s and bandwidth.
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

// The row of a qualified bucket; nullopt for every other bucket (no row without a pass).
// tflops = moe_flops / us; bw = our traffic model (expected bytes under uniform routing,
// moe::expected_moe_traffic) / us in GB/s. Both use the row's own `us`.
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
