#include "autotune/tune/confirmation_layout.hpp"

#include <stdexcept>

#include "autotune/moe/random.hpp"
#include "autotune/tune/protocol_options.hpp"

namespace moetune::tune {

std::string_view to_string(ConfirmRole role) {
  switch (role) {
    case ConfirmRole::baseline: return "baseline";
    case ConfirmRole::candidate: return "candidate";
    case ConfirmRole::control: return "control";
  }
  return "?";
}

const std::array<RoleOrder, 6>& all_role_orders() {
  using R = ConfirmRole;
  static const std::array<RoleOrder, 6> orders{{
      {R::baseline, R::candidate, R::control},
      {R::baseline, R::control, R::candidate},
      {R::candidate, R::baseline, R::control},
      {R::candidate, R::control, R::baseline},
      {R::control, R::baseline, R::candidate},
      {R::control, R::candidate, R::baseline},
  }};
  return orders;
}

std::string describe(const RoleOrder& order) {
  std::string out;
  for (auto r : order) out += (out.empty() ? "" : ",") + std::string(to_string(r));
  return out;
}

namespace {

// Draws orders from shuffled decks of all six: any six consecutive draws from the start of a
// deck hold each order exactly once.
class OrderDeck {
 public:
  explicit OrderDeck(std::uint64_t seed) : m_rng(seed) {}
  RoleOrder draw() {
    if (m_next == m_deck.size()) {
      m_deck = all_role_orders();
      // Fisher-Yates with the portable generator: the same layout on every platform.
      for (std::size_t i = m_deck.size() - 1; i > 0; --i) {
        std::swap(m_deck[i], m_deck[m_rng.below(i + 1)]);
      }
      m_next = 0;
    }
    return m_deck[m_next++];
  }

 private:
  moe::Rng m_rng;
  std::array<RoleOrder, 6> m_deck{};
  std::size_t m_next = 6;
};

// Tags of the layout's random streams, so that no two of them (nor the inputs' seed) coincide.
enum class LayoutStream : std::uint64_t { build_order = 0x4255494c44, rounds = 0x524f554e44, pad = 0x504144 };

std::uint64_t stream(std::uint64_t run_seed, int attempt, int block, LayoutStream tag) {
  return moe::stream_key({run_seed, static_cast<std::uint64_t>(tag),
                          static_cast<std::uint64_t>(attempt), static_cast<std::uint64_t>(block)});
}

}  // namespace

AttemptLayout plan_attempt(std::uint64_t run_seed, int attempt, int blocks, int rounds_per_block) {
  if (blocks < 1 || rounds_per_block < 1) {
    throw std::invalid_argument("plan_attempt: needs at least one block and one round");
  }
  AttemptLayout layout;
  layout.attempt = attempt;
  layout.build_order_balanced = blocks % 6 == 0;
  layout.sample_order_balanced = rounds_per_block % 6 == 0;
  OrderDeck build_orders(stream(run_seed, attempt, -1, LayoutStream::build_order));
  for (int b = 0; b < blocks; ++b) {
    BlockLayout block;
    block.index = b;
    block.seed = block_seed(run_seed, measure::Phase::confirm, attempt, b);
    block.build_order = build_orders.draw();
    moe::Rng pad(stream(run_seed, attempt, b, LayoutStream::pad));
    block.placement_pad_bytes = kPlacementPadStep * pad.below(kMaxPlacementPadSteps);
    OrderDeck rounds(stream(run_seed, attempt, b, LayoutStream::rounds));
    for (int r = 0; r < rounds_per_block; ++r) block.rounds.push_back(rounds.draw());
    layout.blocks.push_back(std::move(block));
  }
  return layout;
}

nlohmann::json to_json(const AttemptLayout& layout) {
  nlohmann::json blocks = nlohmann::json::array();
  for (auto const& b : layout.blocks) {
    nlohmann::json rounds = nlohmann::json::array();
    for (auto const& r : b.rounds) rounds.push_back(describe(r));
    blocks.push_back({{"index", b.index},
                      {"seed", b.seed},
                      {"build_order", describe(b.build_order)},
                      {"placement_pad_bytes", b.placement_pad_bytes},
                      {"sample_order", std::move(rounds)}});
  }
  return {{"attempt", layout.attempt},
          {"build_order_balanced", layout.build_order_balanced},
          {"sample_order_balanced", layout.sample_order_balanced},
          {"blocks", std::move(blocks)}};
}

}  // namespace moetune::tune
