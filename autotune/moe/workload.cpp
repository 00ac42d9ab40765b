#include "autotune/moe/workload.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/core/thread_pool.hpp"
#include "autotune/moe/random.hpp"

namespace moetune::moe {

namespace {

std::size_t idx(std::int64_t v) { return static_cast<std::size_t>(v); }

bool is_mx(const MoeShape& s) { return s.dtype != DtypePath::bf16; }

// Sizes of every buffer, from the contract's table.
struct Sizes {
  std::int64_t w1_rows, w2_rows;  // per expert
  std::int64_t w1_row_codes, w2_row_codes, w1_row_scales, w2_row_scales;
  explicit Sizes(const MoeShape& s)
      : w1_rows(2 * s.inter),
        w2_rows(s.hidden),
        w1_row_codes(s.hidden / 2),
        w2_row_codes(s.inter / 2),
        w1_row_scales(s.hidden / mx_block),
        w2_row_scales(s.inter / mx_block) {}
};

// One row of approximately N(0, std^2) values, zero past `live` columns.
void fill_row(std::span<double> row, std::int64_t live, double stddev, std::uint64_t key) {
  Rng rng(key);
  for (std::size_t i = 0; i < row.size(); ++i) {
    row[i] = static_cast<std::int64_t>(i) < live ? rng.approx_normal() * stddev : 0.0;
  }
}

void store_bf16(std::span<const double> row, std::uint16_t* out) {
  for (std::size_t i = 0; i < row.size(); ++i) out[i] = double_to_bf16(row[i]);
}

}  // namespace

std::vector<double> raw_x_row(const MoeShape& shape, std::uint64_t seed, std::int64_t token) {
  std::vector<double> row(idx(shape.hidden));
  fill_row(row, shape.hidden, 1.0,
           stream_key({seed, static_cast<std::uint64_t>(StreamTag::x),
                       static_cast<std::uint64_t>(token)}));
  return row;
}

Activations make_activations(const MoeShape& shape, std::uint64_t seed) {
  validate(shape);
  Activations a;
  auto const h = shape.hidden;
  if (shape.dtype == DtypePath::a8w4) {
    a.x_codes.resize(idx(shape.tokens * h));
    a.x_scales.resize(idx(shape.tokens * (h / mx_block)));
  } else {
    a.x_bf16.resize(idx(shape.tokens * h));
  }
  for (std::int64_t t = 0; t < shape.tokens; ++t) {
    auto const row = raw_x_row(shape, seed, t);
    if (shape.dtype == DtypePath::a8w4) {
      quantize_mxfp8_row(row, shape.fp8_flavor, std::span(a.x_codes).subspan(idx(t * h), idx(h)),
                         std::span(a.x_scales).subspan(idx(t * (h / mx_block)), idx(h / mx_block)));
    } else {
      store_bf16(row, &a.x_bf16[idx(t * h)]);
    }
  }
  return a;
}

Weights make_weights(const MoeShape& shape, std::uint64_t seed, unsigned threads) {
  validate(shape);
  Sizes const z(shape);
  auto const experts = static_cast<std::int64_t>(shape.experts);
  auto const logical = shape.effective_logical_inter();
  Weights w;
  if (is_mx(shape)) {
    w.w1_codes.resize(idx(experts * z.w1_rows * z.w1_row_codes));
    w.w1_scales.resize(idx(experts * z.w1_rows * z.w1_row_scales));
    w.w2_codes.resize(idx(experts * z.w2_rows * z.w2_row_codes));
    w.w2_scales.resize(idx(experts * z.w2_rows * z.w2_row_scales));
  } else {
    w.w1_bf16.resize(idx(experts * z.w1_rows * shape.hidden));
    w.w2_bf16.resize(idx(experts * z.w2_rows * shape.inter));
  }
  double const w1_std = 1.0 / std::sqrt(static_cast<double>(shape.hidden));
  double const w2_std = 1.0 / std::sqrt(static_cast<double>(logical));

  // Stores one physical row of w1 (matrix 0) or w2 (matrix 1) of expert e.
  auto const store = [&](int matrix, std::int64_t e, std::int64_t row, std::span<const double> v) {
    if (matrix == 0) {
      std::int64_t const r = e * z.w1_rows + row;
      if (is_mx(shape)) {
        quantize_mxfp4_row(v, std::span(w.w1_codes).subspan(idx(r * z.w1_row_codes), idx(z.w1_row_codes)),
                           std::span(w.w1_scales).subspan(idx(r * z.w1_row_scales), idx(z.w1_row_scales)));
      } else {
        store_bf16(v, &w.w1_bf16[idx(r * shape.hidden)]);
      }
    } else {
      std::int64_t const r = e * z.w2_rows + row;
      if (is_mx(shape)) {
        quantize_mxfp4_row(v, std::span(w.w2_codes).subspan(idx(r * z.w2_row_codes), idx(z.w2_row_codes)),
                           std::span(w.w2_scales).subspan(idx(r * z.w2_row_scales), idx(z.w2_row_scales)));
      } else {
        store_bf16(v, &w.w2_bf16[idx(r * shape.inter)]);
      }
    }
  };

  parallel_for(experts, threads, [&](std::int64_t e) {
    std::vector<double> row1(idx(shape.hidden));
    for (std::int64_t j = 0; j < shape.inter; ++j) {
      for (std::uint64_t part = 0; part < 2; ++part) {  // 0 = gate, 1 = up
        std::int64_t const live = j < logical ? shape.hidden : 0;
        fill_row(row1, live, w1_std,
                 stream_key({seed, static_cast<std::uint64_t>(StreamTag::w1),
                             static_cast<std::uint64_t>(e), part, static_cast<std::uint64_t>(j)}));
        store(0, e, part == 0 ? gate_row(shape, j) : up_row(shape, j), row1);
      }
    }
    std::vector<double> row2(idx(shape.inter));
    for (std::int64_t r = 0; r < shape.hidden; ++r) {
      fill_row(row2, logical, w2_std,
               stream_key({seed, static_cast<std::uint64_t>(StreamTag::w2),
                           static_cast<std::uint64_t>(e), static_cast<std::uint64_t>(r)}));
      store(1, e, r, row2);
    }
  });
  return w;
}

Workload make_workload(const MoeShape& shape, const WorkloadOptions& options) {
  validate(shape);
  Workload wl;
  wl.shape = shape;
  wl.seed = options.seed;
  wl.routing = make_routing(options.routing, shape.tokens, shape.experts, shape.topk, options.seed);
  wl.x = make_activations(shape, options.seed);
  wl.w = make_weights(shape, options.seed, options.threads);
  return wl;
}

void decode_x_row(const MoeShape& shape, const Activations& x, std::int64_t token,
                  std::span<double> out) {
  auto const h = shape.hidden;
  if (shape.dtype == DtypePath::a8w4) {
    dequantize_mxfp8_row(std::span(x.x_codes).subspan(idx(token * h), idx(h)),
                         std::span(x.x_scales).subspan(idx(token * (h / mx_block)), idx(h / mx_block)),
                         shape.fp8_flavor, out);
  } else {
    for (std::int64_t i = 0; i < h; ++i) out[idx(i)] = bf16_to_float(x.x_bf16[idx(token * h + i)]);
  }
}

void decode_w1_row(const MoeShape& shape, const Weights& w, int expert, std::int64_t row,
                   std::span<double> out) {
  Sizes const z(shape);
  std::int64_t const r = expert * z.w1_rows + row;
  if (is_mx(shape)) {
    dequantize_mxfp4_row(std::span(w.w1_codes).subspan(idx(r * z.w1_row_codes), idx(z.w1_row_codes)),
                         std::span(w.w1_scales).subspan(idx(r * z.w1_row_scales), idx(z.w1_row_scales)),
                         out);
  } else {
    for (std::int64_t i = 0; i < shape.hidden; ++i) {
      out[idx(i)] = bf16_to_float(w.w1_bf16[idx(r * shape.hidden + i)]);
    }
  }
}

void decode_w2_row(const MoeShape& shape, const Weights& w, int expert, std::int64_t row,
                   std::span<double> out) {
  Sizes const z(shape);
  std::int64_t const r = expert * z.w2_rows + row;
  if (is_mx(shape)) {
    dequantize_mxfp4_row(std::span(w.w2_codes).subspan(idx(r * z.w2_row_codes), idx(z.w2_row_codes)),
                         std::span(w.w2_scales).subspan(idx(r * z.w2_row_scales), idx(z.w2_row_scales)),
                         out);
  } else {
    for (std::int64_t i = 0; i < shape.inter; ++i) {
      out[idx(i)] = bf16_to_float(w.w2_bf16[idx(r * shape.inter + i)]);
    }
  }
}

void check_workload(const Workload& wl) {
  auto const& s = wl.shape;
  validate(s);
  Sizes const z(s);
  auto const e = static_cast<std::int64_t>(s.experts);
  auto const expect = [&](const char* name, std::size_t have, std::int64_t want) {
    if (have != idx(want)) {
      throw Error(fmt::format("workload for {}: {} has {} elements, expected {}", to_string(s),
                              name, have, want));
    }
  };
  if (s.dtype == DtypePath::a8w4) {
    expect("x_codes", wl.x.x_codes.size(), s.tokens * s.hidden);
    expect("x_scales", wl.x.x_scales.size(), s.tokens * (s.hidden / mx_block));
  } else {
    expect("x_bf16", wl.x.x_bf16.size(), s.tokens * s.hidden);
  }
  if (is_mx(s)) {
    expect("w1_codes", wl.w.w1_codes.size(), e * z.w1_rows * z.w1_row_codes);
    expect("w1_scales", wl.w.w1_scales.size(), e * z.w1_rows * z.w1_row_scales);
    expect("w2_codes", wl.w.w2_codes.size(), e * z.w2_rows * z.w2_row_codes);
    expect("w2_scales", wl.w.w2_scales.size(), e * z.w2_rows * z.w2_row_scales);
  } else {
    expect("w1_bf16", wl.w.w1_bf16.size(), e * z.w1_rows * s.hidden);
    expect("w2_bf16", wl.w.w2_bf16.size(), e * z.w2_rows * s.inter);
  }
  auto const& r = wl.routing;
  if (r.tokens != s.tokens || r.experts != s.experts || r.topk != s.topk) {
    throw Error(fmt::format("workload for {}: routing is for M={} E={} topk={}", to_string(s),
                            r.tokens, r.experts, r.topk));
  }
  expect("topk_ids", r.ids.size(), s.tokens * s.topk);
  expect("topk_weights", r.weights.size(), s.tokens * s.topk);
  for (std::size_t i = 0; i < r.ids.size(); ++i) {
    if (r.ids[i] < 0 || r.ids[i] >= s.experts) {
      throw Error(fmt::format("workload for {}: topk_ids[{}][{}] = {} is outside [0, {})",
                              to_string(s), i / idx(s.topk), i % idx(s.topk), r.ids[i], s.experts));
    }
  }
}

}  // namespace moetune::moe
