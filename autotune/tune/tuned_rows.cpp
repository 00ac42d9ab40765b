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

RowFigures aiter_row_figures(const io::FmoeKey& k, double us) {
  auto const token = static_cast<double>(k.token);
  auto const model_dim = static_cast<double>(k.model_dim);
  auto const inter_dim = static_cast<double>(k.inter_dim);
  auto const expert = static_cast<double>(k.expert);
  auto const topk = static_cast<double>(k.topk);
  double const n1 = k.use_g1u1 ? 2 * inter_dim : inter_dim;
  double const flop =
      token * n1 * model_dim * topk * 2 + topk * token * model_dim * inter_dim * 2;
  double const w_bpe = io::aiter_bytes_per_element(k.q_dtype_w);
  double const bytes = token * model_dim * io::aiter_bytes_per_element(k.q_dtype_a) +
                       n1 * model_dim * w_bpe * expert + inter_dim * model_dim * w_bpe * expert +
                       token * model_dim * io::aiter_bytes_per_element(k.dtype);
  RowFigures f;
  f.M = k.token;
  f.us = us;
  if (us > 0) {
    f.tflops = io::python_round(flop / (us * 1e6), 2);
    f.bw = io::python_round(bytes / (us * 1e-6) / 1e9, 2);
  }
  return f;
}

RowFigures moetune_row_figures(const BucketResult& b, double us) {
  auto shape = b.shape;
  shape.tokens = b.M;
  RowFigures f;
  f.M = b.M;
  f.us = us;
  if (us > 0) {
    f.tflops = io::python_round(moe::moe_flops(shape) / (us * 1e-6) / 1e12, 2);
    f.bw = io::python_round(moe::expected_moe_traffic(shape).total() / (us * 1e-6) / 1e9, 2);
  }
  return f;
}

std::optional<io::FmoeRow> tuned_row(const BucketResult& b, const RowContext& ctx) {
  if (!b.qualified || !b.winner || !b.stage1_us || !b.stage2_us) return std::nullopt;
  auto const& rec = b.pairs.at(*b.winner);
  auto const& pair = rec.pair;
  io::FmoeRow row;
  row.key = tuned_row_key(b.key, ctx);
  io::TunedResult t;
  t.block_m = pair.stage1.block_m;  // shared by both stages (the sort granularity)
  // AITER reads ksplit as stage one's split-K and sends a row with ksplit > 1 to another
  // backend; moe-tune's splits (either stage) are in the kernel names (_ksN), never here.
  t.ksplit = 0;
  // Stored as AITER stores them (rounded to 4 decimals), so the row reads back equal.
  t.us1 = io::python_round(*b.stage1_us, 4);
  t.us2 = io::python_round(*b.stage2_us, 4);
  t.kernel_name1 = pair.stage1.name();
  t.kernel_name2 = pair.stage2.name();
  // AITER's mismatch shares at token (GpuSampler::verify); left empty, not invented, should a
  // record lack its verification.
  if (rec.verification) {
    t.err1 = rec.verification->err1;
    t.err2 = rec.verification->err2;
  }
  double const us = io::total_us(*t.us1, *t.us2);
  t.us = us;
  t.run_1stage = false;
  t.xbf16 = false;
  t.flat = 0;
  if (us > 0) {
    auto const aiter = aiter_row_figures(b.key, us);
    t.tflops = aiter.tflops;
    t.bw = aiter.bw;
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
