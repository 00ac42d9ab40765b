#pragma once
// Host implementation of the token sort (docs/kernel-contract.md, "Sorting").
//
// Slots s = t*topk + k are grouped by expert, experts ascending, slots ascending inside an
// expert; each expert's run is padded with the id M*topk to a multiple of block_m; blocks get
// the expert they belong to. The GPU sort must produce the same arrays, so it is tested against
// this entry by entry (first_sort_mismatch).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "autotune/moe/routing.hpp"

namespace moetune::moe {

// Value of block_expert entries past num_blocks on the host. The contract leaves those entries
// undefined for kernels, so first_sort_mismatch does not compare them.
inline constexpr std::int32_t unused_block_expert = -1;

// topk*M + E*(block_m-1), rounded up to a multiple of block_m: room for every slot plus the
// worst-case padding of every expert.
[[nodiscard]] std::int64_t sort_capacity(std::int64_t tokens, int topk, int experts, int block_m);

// The GPU sort's CTA count for `slots` = M*topk slots: one up to 4096 slots, then one per 2048,
// at most 128 (kernels/moe_sort.cuh's sort_ctas_for, which must agree: the kernel derives its
// own CTA count from M*topk; sorting_test compares the constants with the embedded header).
inline constexpr std::int64_t sort_one_cta_slots = 4096;
inline constexpr std::int64_t sort_chunk_slots = 2048;
inline constexpr std::int64_t sort_max_ctas = 128;
[[nodiscard]] constexpr std::int64_t sort_ctas(std::int64_t slots) {
  if (slots <= sort_one_cta_slots) return 1;
  std::int64_t const c = (slots + sort_chunk_slots - 1) / sort_chunk_slots;
  return c > sort_max_ctas ? sort_max_ctas : c;
}

struct SortedTokens {
  int block_m = 0;
  std::int64_t capacity = 0;
  std::int32_t padding_id = 0;           // M*topk
  std::int32_t num_blocks = 0;           // blocks in use
  std::vector<std::int32_t> sorted_slots;  // [capacity]
  std::vector<std::int32_t> block_expert;  // [capacity / block_m]
};

// Throws moetune::Error when block_m < 1 or the routing is malformed (ids out of range).
[[nodiscard]] SortedTokens sort_tokens(const Routing& routing, int block_m);

// Compares a device sort with the host's: every sorted_slots entry (padding included, the
// contract fixes it), num_blocks, and block_expert for the blocks in use. Returns a description
// of the first difference, or nothing when they agree.
[[nodiscard]] std::optional<std::string> first_sort_mismatch(
    const SortedTokens& expected, std::span<const std::int32_t> sorted_slots,
    std::span<const std::int32_t> block_expert, std::int32_t num_blocks);

}  // namespace moetune::moe
