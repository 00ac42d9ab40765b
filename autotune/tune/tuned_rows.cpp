#include "autotune/tune/tuned_rows.hpp"

#include <algorithm>

#include "autotune/io/fmoe_writer.hpp"
#include "autotune/io/number_format.hpp"
#include "autotune/moe/moe_shape.hpp"

namespace moetune::tune {

io::FmoeKey tuned_row_key(const io::FmoeKey& untuned, const RowContext& ctx) {
  io::FmoeKey key = untuned;
  key.gfx = ctx.gfx;
  key.cu_num = ctx.cu_num;
  if (!ctx.tag.empty()) key.tag = ctx.tag;
  return key;
}

std::optional<io::FmoeRow> tuned_row(const BucketResult& b, const RowContext& ctx) {
  if (!b.qualified || !b.winner || !b.stage1_us || !b.stage2_us) return std::nullopt;
  auto const& rec = b.pairs.at(*b.winner);
  auto const& pair = rec.pair;
  io::FmoeRow row;
  row.key = tuned_row_key(b.key, ctx);
  io::TunedResult t;
  t.block_m = pair.stage1.block_m;  // shared by both stages (the sort granularity)
  t.ksplit = pair.stage2.ksplit > 1 ? pair.stage2.ksplit : 0;  // AITER writes 0 for none
  // Stored as AITER stores them (rounded to 4 decimals), so the row reads back equal.
  t.us1 = io::python_round(*b.stage1_us, 4);
  t.us2 = io::python_round(*b.stage2_us, 4);
  t.kernel_name1 = pair.stage1.name();
  t.kernel_name2 = pair.stage2.name();
  double const err1 = rec.verification ? rec.verification->err1 : 0.0;
  double const err2 = rec.verification ? rec.verification->err2 : 0.0;
  t.err1 = err1;
  t.err2 = err2;
  double const us = io::total_us(*t.us1, *t.us2);
  t.us = us;
  t.run_1stage = false;
  t.xbf16 = false;
  t.flat = 0;
  if (us > 0) {
    auto shape = b.shape;
    shape.tokens = b.M;
    t.tflops = io::python_round(moe::moe_flops(shape) / (us * 1e-6) / 1e12, 2);
    t.bw = io::python_round(moe::expected_moe_traffic(shape).total() / (us * 1e-6) / 1e9, 2);
  }
  row.tuned = t;
  return row;
}

std::vector<io::FmoeRow> tuned_rows(std::span<const BucketResult> buckets,
                                    const RowContext& context) {
  std::vector<io::FmoeRow> rows;
  for (auto const& b : buckets) {
    if (auto row = tuned_row(b, context)) rows.push_back(std::move(*row));
  }
  return rows;
}

TunedRowsWritten write_tuned_rows(const std::filesystem::path& file,
                                  std::span<const io::FmoeRow> rows,
                                  std::span<const RowWithdrawal> withdrawals) {
  std::vector<io::FmoeKey> keys;
  for (auto const& w : withdrawals) keys.push_back(w.key);
  auto const update = io::update_rows_in_file(file, rows, keys, io::FmoeFileKind::tuned);
  TunedRowsWritten out;
  out.replaced = update.replaced;
  for (auto const& removed : update.removed) {
    auto const w = std::find_if(withdrawals.begin(), withdrawals.end(),
                                [&](const RowWithdrawal& x) { return x.key == removed.key; });
    out.withdrawn.push_back({file, removed.line, removed.raw, removed.key.describe(),
                             w == withdrawals.end() ? std::string() : w->reason});
  }
  return out;
}

}  // namespace moetune::tune
