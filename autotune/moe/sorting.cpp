#include "autotune/moe/sorting.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::moe {

std::int64_t sort_capacity(std::int64_t tokens, int topk, int experts, int block_m) {
  if (block_m < 1) throw Error(fmt::format("sort: block_m={} must be at least 1", block_m));
  std::int64_t const raw = static_cast<std::int64_t>(topk) * tokens +
                           static_cast<std::int64_t>(experts) * (block_m - 1);
  return (raw + block_m - 1) / block_m * block_m;
}

SortedTokens sort_tokens(const Routing& routing, int block_m) {
  SortedTokens out;
  out.block_m = block_m;
  out.capacity = sort_capacity(routing.tokens, routing.topk, routing.experts, block_m);
  std::int64_t const slots = routing.tokens * routing.topk;
  out.padding_id = static_cast<std::int32_t>(slots);
  out.sorted_slots.assign(static_cast<std::size_t>(out.capacity), out.padding_id);
  out.block_expert.assign(static_cast<std::size_t>(out.capacity / block_m), unused_block_expert);

  // Counting sort: one pass for the counts, one to place slots, which visits slots in
  // ascending order and so keeps them ascending within each expert.
  std::vector<std::int64_t> count(static_cast<std::size_t>(routing.experts), 0);
  for (std::int64_t s = 0; s < slots; ++s) {
    auto const e = routing.ids[static_cast<std::size_t>(s)];
    if (e < 0 || e >= routing.experts) {
      throw Error(fmt::format("sort: slot {} (token {}, k {}) routes to expert {}, outside [0, {})",
                              s, s / routing.topk, s % routing.topk, e, routing.experts));
    }
    ++count[static_cast<std::size_t>(e)];
  }
  std::vector<std::int64_t> start(count.size(), 0);
  std::int64_t cursor = 0;
  for (std::size_t e = 0; e < count.size(); ++e) {
    start[e] = cursor;
    std::int64_t const blocks = (count[e] + block_m - 1) / block_m;
    for (std::int64_t b = 0; b < blocks; ++b) {
      out.block_expert[static_cast<std::size_t>(cursor / block_m + b)] = static_cast<std::int32_t>(e);
    }
    cursor += blocks * block_m;
  }
  out.num_blocks = static_cast<std::int32_t>(cursor / block_m);
  for (std::int64_t s = 0; s < slots; ++s) {
    auto const e = static_cast<std::size_t>(routing.ids[static_cast<std::size_t>(s)]);
    out.sorted_slots[static_cast<std::size_t>(start[e]++)] = static_cast<std::int32_t>(s);
  }
  return out;
}

std::optional<std::string> first_sort_mismatch(const SortedTokens& expected,
                                               std::span<const std::int32_t> sorted_slots,
                                               std::span<const std::int32_t> block_expert,
                                               std::int32_t num_blocks) {
  if (num_blocks != expected.num_blocks) {
    return fmt::format("num_blocks is {}, expected {}", num_blocks, expected.num_blocks);
  }
  if (sorted_slots.size() != expected.sorted_slots.size()) {
    return fmt::format("sorted_slots has {} entries, expected capacity {}", sorted_slots.size(),
                       expected.sorted_slots.size());
  }
  if (block_expert.size() < static_cast<std::size_t>(num_blocks)) {
    return fmt::format("block_expert has {} entries, fewer than num_blocks {}",
                       block_expert.size(), num_blocks);
  }
  for (std::size_t i = 0; i < sorted_slots.size(); ++i) {
    if (sorted_slots[i] != expected.sorted_slots[i]) {
      return fmt::format("sorted_slots[{}] (block {}) is {}, expected {}{}", i,
                         i / static_cast<std::size_t>(expected.block_m), sorted_slots[i],
                         expected.sorted_slots[i],
                         expected.sorted_slots[i] == expected.padding_id ? " (padding)" : "");
    }
  }
  for (std::size_t b = 0; b < static_cast<std::size_t>(num_blocks); ++b) {
    if (block_expert[b] != expected.block_expert[b]) {
      return fmt::format("block_expert[{}] is {}, expected {}", b, block_expert[b],
                         expected.block_expert[b]);
    }
  }
  return std::nullopt;
}

}  // namespace moetune::moe
