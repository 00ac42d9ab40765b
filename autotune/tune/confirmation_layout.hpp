#pragma once
// The randomized, balanced layout of one confirmation attempt (DESIGN.md §4, item 4), fixed
// before anything is measured and declared in the manifest.
//
// Why: with the arms always built baseline, candidate, control and the samples of a pair in a
// fixed rhythm, the null case on the H200 (the baseline against itself) gave a mean of 22 wins
// of 32 where a fair null gives 16 (results/sm_90/2026-11-30-h200/calibrate_null.json): what
// ran before a sample, and which arm was allocated first, was a bias the paired statistics
// could not see. So, per block:
//  - build order: the three arms are built (scratch allocated, graphs captured) in one of the
//    six orders; the blocks of an attempt take the six orders in a shuffled sequence, so with
//    a multiple of six blocks every arm is built first, second and third equally often;
//  - sample order: each round times each arm once, in one of the six orders; the rounds of a
//    block take the six orders in a shuffled sequence (a new shuffle per six rounds), so with a
//    multiple of six rounds every arm takes every position equally often and, within a round,
//    every arm directly follows every other equally often (a Williams design for three
//    treatments needs all six sequences);
//  - placement: a pad of random size is allocated before the block's inputs and weights, so
//    the fresh buffers of consecutive blocks do not fall back onto the same addresses.
// The comparison (baseline vs candidate), the control (baseline vs control) and the
// candidate against the control are all read from the same rounds.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace moetune::tune {

enum class ConfirmRole { baseline, candidate, control };
[[nodiscard]] std::string_view to_string(ConfirmRole role);

using RoleOrder = std::array<ConfirmRole, 3>;

// The six orders of the three roles, in a fixed reference sequence.
[[nodiscard]] const std::array<RoleOrder, 6>& all_role_orders();

struct BlockLayout {
  int index = 0;
  std::uint64_t seed = 0;               // the block's inputs (block_seed of the run)
  RoleOrder build_order{};              // the order begin_block builds the arms in
  std::uint64_t placement_pad_bytes = 0;  // allocated before the block's buffers
  std::vector<RoleOrder> rounds;        // sample order of each round
};

struct AttemptLayout {
  int attempt = 0;
  std::vector<BlockLayout> blocks;
  // Exact balance needs a multiple of six blocks (build order) and of six rounds per block
  // (sample order); otherwise the orders are still random, balanced as far as they go.
  bool build_order_balanced = false;
  bool sample_order_balanced = false;
};

// Pads are whole multiples of this (the allocation granularity of both drivers' large
// allocations), from 0 to kMaxPlacementPadSteps - 1 steps.
inline constexpr std::uint64_t kPlacementPadStep = std::uint64_t{2} << 20;
inline constexpr std::uint64_t kMaxPlacementPadSteps = 32;

// A pure function of its arguments: the manifest declares it before measuring, and the run
// measures exactly it. Throws std::invalid_argument for blocks < 1 or rounds_per_block < 1.
[[nodiscard]] AttemptLayout plan_attempt(std::uint64_t run_seed, int attempt, int blocks,
                                         int rounds_per_block);

[[nodiscard]] nlohmann::json to_json(const AttemptLayout& layout);

// "baseline,candidate,control"
[[nodiscard]] std::string describe(const RoleOrder& order);

}  // namespace moetune::tune
