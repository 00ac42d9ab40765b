#pragma once
// CPU reference of the fused MoE (DESIGN.md §2), in double precision on the dequantised
// inputs — exactly the values the GPU sees — with the kernel's own rounding point: the
// intermediate h is rounded to bf16 (a16w4, bf16) or quantised per 1x32 to MXFP8 of the
// shape's flavour (a8w4) before stage two. y itself is left unrounded (the comparison's
// tolerance covers the output's bf16 rounding).
//
// A DeepSeek layer has ~4e9 weights, so the reference works on a sample of tokens: only the
// experts those tokens use are decoded, each once, row by row, and shared by all the sampled
// slots routed to it.
#include <cstdint>
#include <span>
#include <vector>

#include "autotune/moe/workload.hpp"

namespace moetune::moe {

struct ReferenceOptions {
  unsigned threads = 0;  // 0 = all hardware threads; results do not depend on it
};

struct ReferenceRows {
  std::int64_t total_tokens = 0;    // M of the workload
  std::int64_t hidden = 0;          // H
  std::int64_t inter = 0;           // I
  int topk = 0;
  std::vector<std::int64_t> tokens; // the requested tokens, in the order requested
  std::vector<double> y;            // [tokens.size()][H]
  std::vector<double> h;            // [tokens.size()][topk][I], after the rounding point

  [[nodiscard]] std::span<const double> y_row(std::size_t i) const {
    return std::span(y).subspan(i * static_cast<std::size_t>(hidden),
                                static_cast<std::size_t>(hidden));
  }
  // Stage one's output for the i-th requested token's k-th slot (GPU row t*topk + k of h).
  [[nodiscard]] std::span<const double> h_row(std::size_t i, int k) const {
    return std::span(h).subspan((i * static_cast<std::size_t>(topk) + static_cast<std::size_t>(k)) *
                                    static_cast<std::size_t>(inter),
                                static_cast<std::size_t>(inter));
  }
};

// The reference for the given tokens (each in [0, M); repeats allowed). Throws moetune::Error
// for a malformed workload or an out-of-range token.
[[nodiscard]] ReferenceRows reference_rows(const Workload& workload,
                                           std::span<const std::int64_t> tokens,
                                           const ReferenceOptions& options = {});

// DESIGN.md §2's sample: every token when M <= 64 (more precisely, when M <= random_count + 2);
// otherwise `random_count` distinct seeded tokens from the interior plus the first and the
// last. Sorted ascending.
[[nodiscard]] std::vector<std::int64_t> sample_tokens(std::int64_t tokens, std::uint64_t seed,
                                                      std::int64_t random_count = 64);

// The rounding point: what stage two reads for one slot's h row computed in double.
void round_intermediate(const MoeShape& shape, std::span<double> h_row);

}  // namespace moetune::moe
