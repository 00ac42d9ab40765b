#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/jit/embedded_kernels.hpp"
#include "autotune/moe/sorting.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {
Routing hand_routing(std::int64_t tokens, int experts, int topk, std::vector<std::int32_t> ids) {
  Routing r;
  r.tokens = tokens;
  r.experts = experts;
  r.topk = topk;
  r.ids = std::move(ids);
  r.weights.assign(r.ids.size(), 1.0f / static_cast<float>(topk));
  return r;
}
}  // namespace

TEST_CASE("host sort on a hand-worked case (M=3, topk=2, E=4, block_m=4)", "[moe]") {
  // Slots: s0 t0->2, s1 t0->0, s2 t1->0, s3 t1->3, s4 t2->2, s5 t2->1.
  auto const r = hand_routing(3, 4, 2, {2, 0, 0, 3, 2, 1});
  auto const s = sort_tokens(r, 4);
  // capacity = 2*3 + 4*3 = 18, rounded up to 20; padding id = M*topk = 6.
  CHECK(s.capacity == 20);
  CHECK(s.padding_id == 6);
  CHECK(s.num_blocks == 4);
  CHECK(s.sorted_slots == std::vector<std::int32_t>{1, 2, 6, 6,   // expert 0
                                                    5, 6, 6, 6,   // expert 1
                                                    0, 4, 6, 6,   // expert 2
                                                    3, 6, 6, 6,   // expert 3
                                                    6, 6, 6, 6}); // unused
  CHECK(s.block_expert == std::vector<std::int32_t>{0, 1, 2, 3, unused_block_expert});
}

TEST_CASE("host sort skips experts without tokens and spans several blocks", "[moe]") {
  // E=3; expert 1 gets nothing, expert 2 gets 3 slots (two blocks of 2).
  auto const r = hand_routing(3, 3, 2, {2, 0, 2, 0, 2, 0});
  auto const s = sort_tokens(r, 2);
  CHECK(s.capacity == sort_capacity(3, 2, 3, 2));
  CHECK(s.capacity == 10);  // 6 + 3 = 9 -> 10
  CHECK(s.num_blocks == 4);
  CHECK(s.sorted_slots == std::vector<std::int32_t>{1, 3, 5, 6, 0, 2, 4, 6, 6, 6});
  CHECK(s.block_expert == std::vector<std::int32_t>{0, 0, 2, 2, unused_block_expert});
  // block_m = 1: no padding inside runs.
  auto const one = sort_tokens(r, 1);
  CHECK(one.capacity == 6);
  CHECK(one.num_blocks == 6);
  CHECK(one.sorted_slots == std::vector<std::int32_t>{1, 3, 5, 0, 2, 4});
}

TEST_CASE("first_sort_mismatch names the first differing entry", "[moe]") {
  auto const r = hand_routing(3, 4, 2, {2, 0, 0, 3, 2, 1});
  auto const s = sort_tokens(r, 4);
  CHECK_FALSE(first_sort_mismatch(s, s.sorted_slots, s.block_expert, s.num_blocks));
  // Entries of block_expert past num_blocks are not compared (the contract leaves them open).
  auto block_expert = s.block_expert;
  block_expert.back() = 99;
  CHECK_FALSE(first_sort_mismatch(s, s.sorted_slots, block_expert, s.num_blocks));
  block_expert[1] = 3;
  CHECK(*first_sort_mismatch(s, s.sorted_slots, block_expert, s.num_blocks) ==
        "block_expert[1] is 3, expected 1");
  auto slots = s.sorted_slots;
  slots[2] = 4;
  CHECK(*first_sort_mismatch(s, slots, s.block_expert, s.num_blocks) ==
        "sorted_slots[2] (block 0) is 4, expected 6 (padding)");
  CHECK(first_sort_mismatch(s, s.sorted_slots, s.block_expert, 5)->starts_with("num_blocks is 5"));
}

TEST_CASE("sort rejects a bad block_m and bad expert ids", "[moe]") {
  auto const r = hand_routing(1, 2, 1, {0});
  CHECK_THROWS_AS(sort_tokens(r, 0), Error);
  auto const bad = hand_routing(1, 2, 1, {2});
  CHECK_THROWS_WITH(sort_tokens(bad, 4), Catch::Contains("expert 2, outside [0, 2)"));
}

TEST_CASE("the host's sort CTA rule is the kernel's (kernels/moe_sort.cuh, embedded)", "[moe]") {
  // The kernel derives its CTA count from M*topk itself; the host sizes the grid with
  // moe::sort_ctas. A grid of fewer CTAs would leave chunks unsorted, so both must agree.
  std::string text;
  for (auto const& f : jit::embedded_kernel_files())
    if (f.name == "moe_sort.cuh") text = f.text;
  REQUIRE_FALSE(text.empty());
  auto constant = [&](const std::string& name) {
    std::smatch m;
    std::regex const re("constexpr int " + name + " = ([0-9]+);");
    REQUIRE(std::regex_search(text, m, re));
    return std::stoll(m[1].str());
  };
  CHECK(constant("sort_one_cta_slots") == moe::sort_one_cta_slots);
  CHECK(constant("sort_chunk_slots") == moe::sort_chunk_slots);
  CHECK(constant("sort_max_ctas") == moe::sort_max_ctas);
  CHECK_THAT(text, Catch::Contains("if (n_slots <= sort_one_cta_slots) return 1;"));
  CHECK_THAT(text, Catch::Contains("int const c = (n_slots + sort_chunk_slots - 1) / sort_chunk_slots;"));
  CHECK(moe::sort_ctas(0) == 1);
  CHECK(moe::sort_ctas(1) == 1);
  CHECK(moe::sort_ctas(4096) == 1);
  CHECK(moe::sort_ctas(4097) == 3);
  CHECK(moe::sort_ctas(16384 * 6) == 48);
  CHECK(moe::sort_ctas(std::int64_t{1} << 30) == 128);
}
