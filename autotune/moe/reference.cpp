#include "autotune/moe/reference.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/core/thread_pool.hpp"
#include "autotune/moe/random.hpp"

namespace moetune::moe {

namespace {

std::size_t idx(std::int64_t v) { return static_cast<std::size_t>(v); }

// Four partial sums: shorter dependency chains (the compiler may not reassociate a double
// reduction by itself) and a fixed summation order, so the result never depends on threads.
double dot(const double* a, const double* b, std::int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

double silu(double v) { return v / (1.0 + std::exp(-v)); }

// Rows of weights per task: small enough that a concentrated routing (few experts, many slots)
// still spreads over all threads, large enough that the task overhead is nothing.
constexpr std::int64_t stage1_chunk = 64;   // intermediate columns (2 weight rows each)
constexpr std::int64_t stage2_chunk = 256;  // output columns

struct Task {
  int expert;
  std::int64_t begin;
  std::int64_t end;
};

std::vector<Task> make_tasks(const std::vector<int>& experts, std::int64_t rows,
                             std::int64_t chunk) {
  std::vector<Task> tasks;
  for (int e : experts) {
    for (std::int64_t b = 0; b < rows; b += chunk) tasks.push_back({e, b, std::min(rows, b + chunk)});
  }
  return tasks;
}

}  // namespace

void round_intermediate(const MoeShape& shape, std::span<double> h_row) {
  if (shape.dtype == DtypePath::a8w4) {
    std::vector<std::uint8_t> codes(h_row.size());
    std::vector<std::uint8_t> scales(h_row.size() / mx_block);
    quantize_mxfp8_row(h_row, shape.fp8_flavor, codes, scales);
    dequantize_mxfp8_row(codes, scales, shape.fp8_flavor, h_row);
  } else {
    for (auto& v : h_row) v = round_to_bf16(v);
  }
}

ReferenceRows reference_rows(const Workload& wl, std::span<const std::int64_t> tokens,
                             const ReferenceOptions& options) {
  check_workload(wl);
  auto const& s = wl.shape;
  auto const H = s.hidden;
  auto const I = s.inter;
  int const topk = s.topk;
  for (auto t : tokens) {
    if (t < 0 || t >= s.tokens) {
      throw Error(fmt::format("reference: token {} is outside [0, M={})", t, s.tokens));
    }
  }
  ReferenceRows out;
  out.total_tokens = s.tokens;
  out.hidden = H;
  out.inter = I;
  out.topk = topk;
  out.tokens.assign(tokens.begin(), tokens.end());
  auto const n = static_cast<std::int64_t>(tokens.size());
  out.y.assign(idx(n * H), 0.0);
  out.h.assign(idx(n * topk * I), 0.0);
  if (n == 0) return out;

  // Dequantised activations of the requested tokens.
  std::vector<double> x(idx(n * H));
  for (std::int64_t i = 0; i < n; ++i) {
    decode_x_row(s, wl.x, tokens[idx(i)], std::span(x).subspan(idx(i * H), idx(H)));
  }
  // Local slot ls = i*topk + k, grouped by expert.
  std::vector<std::vector<std::int64_t>> slots_of(idx(s.experts));
  for (std::int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < topk; ++k) {
      slots_of[idx(wl.routing.id(tokens[idx(i)], k))].push_back(i * topk + k);
    }
  }
  std::vector<int> used;
  for (int e = 0; e < s.experts; ++e) {
    if (!slots_of[idx(e)].empty()) used.push_back(e);
  }
  auto const weight_of = [&](std::int64_t ls) {
    return static_cast<double>(wl.routing.weight(tokens[idx(ls / topk)], static_cast<int>(ls % topk)));
  };

  // Stage one: h = silu(x.gate) * (x.up) [* w], then the rounding point.
  auto const tasks1 = make_tasks(used, I, stage1_chunk);
  parallel_for(static_cast<std::int64_t>(tasks1.size()), options.threads, [&](std::int64_t ti) {
    auto const& task = tasks1[idx(ti)];
    std::vector<double> gate(idx(H)), up(idx(H));
    for (std::int64_t j = task.begin; j < task.end; ++j) {
      decode_w1_row(s, wl.w, task.expert, gate_row(s, j), gate);
      decode_w1_row(s, wl.w, task.expert, up_row(s, j), up);
      for (auto ls : slots_of[idx(task.expert)]) {
        double const* xi = &x[idx((ls / topk) * H)];
        double v = silu(dot(xi, gate.data(), H)) * dot(xi, up.data(), H);
        if (s.doweight_stage1) v *= weight_of(ls);
        out.h[idx(ls * I + j)] = v;
      }
    }
  });
  parallel_for(n * topk, options.threads, [&](std::int64_t ls) {
    round_intermediate(s, std::span(out.h).subspan(idx(ls * I), idx(I)));
  });

  // Stage two: each slot's row h.w2^T, then the weighted sum over k in a fixed order.
  std::vector<double> partial(idx(n * topk * H));
  auto const tasks2 = make_tasks(used, H, stage2_chunk);
  parallel_for(static_cast<std::int64_t>(tasks2.size()), options.threads, [&](std::int64_t ti) {
    auto const& task = tasks2[idx(ti)];
    std::vector<double> row(idx(I));
    for (std::int64_t r = task.begin; r < task.end; ++r) {
      decode_w2_row(s, wl.w, task.expert, r, row);
      for (auto ls : slots_of[idx(task.expert)]) {
        partial[idx(ls * H + r)] = dot(&out.h[idx(ls * I)], row.data(), I);
      }
    }
  });
  for (std::int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < topk; ++k) {
      std::int64_t const ls = i * topk + k;
      double const w = s.doweight_stage1 ? 1.0 : weight_of(ls);
      for (std::int64_t r = 0; r < H; ++r) out.y[idx(i * H + r)] += w * partial[idx(ls * H + r)];
    }
  }
  return out;
}

std::vector<std::int64_t> sample_tokens(std::int64_t tokens, std::uint64_t seed,
                                        std::int64_t random_count) {
  std::vector<std::int64_t> out;
  if (tokens <= 0) return out;
  if (tokens <= 64 || tokens - 2 <= random_count) {
    out.resize(idx(tokens));
    for (std::int64_t t = 0; t < tokens; ++t) out[idx(t)] = t;
    return out;
  }
  // Floyd's algorithm: random_count distinct values from the interior [1, M-2] with exactly
  // random_count draws.
  Rng rng(stream_key({seed, static_cast<std::uint64_t>(StreamTag::token_sample),
                      static_cast<std::uint64_t>(tokens)}));
  std::int64_t const interior = tokens - 2;
  std::set<std::int64_t> chosen;
  for (std::int64_t j = interior - random_count; j < interior; ++j) {
    auto const v = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(j + 1)));
    chosen.insert(chosen.contains(v) ? j : v);
  }
  out.push_back(0);
  for (auto v : chosen) out.push_back(v + 1);
  out.push_back(tokens - 1);
  return out;
}

}  // namespace moetune::moe
