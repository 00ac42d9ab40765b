#pragma once
// Which experts each token goes to (topk_ids) and with what weight (topk_weights).
//
// Routing decides which weights a kernel reads and how unevenly the work is spread, so the
// tuner times and verifies under several patterns (DESIGN.md §4): uniform (the default),
// round_robin, concentrated (every token to the same topk experts: one hot expert group),
// zipf:S (skewed popularity, as in real traffic) and file:PATH (recorded topk_ids).
// Everything is deterministic for a seed and portable (see random.hpp).
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace moetune::moe {

enum class RoutingKind { uniform, round_robin, concentrated, zipf, file };

struct RoutingSpec {
  RoutingKind kind = RoutingKind::uniform;
  double zipf_exponent = 1.0;  // zipf: popularity of the rank-r expert is 1/r^s
  std::filesystem::path file;  // file: recorded topk_ids
  friend bool operator==(const RoutingSpec&, const RoutingSpec&) = default;
};

// Parses "uniform", "round_robin", "concentrated", "zipf:S" (S >= 0, e.g. zipf:1.2) or
// "file:PATH". Throws moetune::Error naming the spec, the offending part and the accepted forms.
[[nodiscard]] RoutingSpec parse_routing_spec(std::string_view text);
// The spec's text form; parse_routing_spec(to_string(s)) == s.
[[nodiscard]] std::string to_string(const RoutingSpec& spec);

// topk_ids [M][topk] (int32, distinct per token) and topk_weights [M][topk] (fp32, positive,
// summing to 1 per token), row-major and ready to upload.
struct Routing {
  std::int64_t tokens = 0;
  int experts = 0;
  int topk = 0;
  std::vector<std::int32_t> ids;
  std::vector<float> weights;

  [[nodiscard]] std::int32_t id(std::int64_t token, int k) const {
    return ids[static_cast<std::size_t>(token * topk + k)];
  }
  [[nodiscard]] float weight(std::int64_t token, int k) const {
    return weights[static_cast<std::size_t>(token * topk + k)];
  }
};

// Generates the routing for M tokens. Ids and weights come from separate streams, so the
// weights of a seed are the same whatever the routing kind; the ids for M tokens are a prefix
// of those for more tokens (same seed and kind). Throws moetune::Error for topk > E and the
// like, moetune::InputError / FileError for a bad routing file.
[[nodiscard]] Routing make_routing(const RoutingSpec& spec, std::int64_t tokens, int experts,
                                   int topk, std::uint64_t seed);

// Seeded routing weights only: softmax over topk of approximately normal logits, per token.
[[nodiscard]] std::vector<float> make_routing_weights(std::int64_t tokens, int topk,
                                                      std::uint64_t seed);

// Recorded routing files. Text, one row per token: its topk expert ids (decimal integers in
// [0, E), distinct) separated by commas and/or blanks. '#' starts a comment to the end of the
// line; blank lines are skipped. When the file has fewer rows than M, rows are reused from the
// top (a recording of N tokens serves any M). Errors name file:line:column.
struct RecordedRouting {
  int topk = 0;
  std::vector<std::int32_t> ids;  // [rows][topk]
  [[nodiscard]] std::int64_t rows() const {
    return topk == 0 ? 0 : static_cast<std::int64_t>(ids.size()) / topk;
  }
};
[[nodiscard]] RecordedRouting parse_routing_file(std::string_view contents,
                                                 const std::filesystem::path& name, int experts,
                                                 int topk);
[[nodiscard]] RecordedRouting read_routing_file(const std::filesystem::path& path, int experts,
                                                int topk);
// Writes topk_ids in the format above (atomically), with a header comment.
void write_routing_file(const std::filesystem::path& path, const Routing& routing);

// Distinct experts with at least one token: the exact D for a concrete routing.
[[nodiscard]] int count_experts_touched(const Routing& routing);
// Tokens per expert, [E].
[[nodiscard]] std::vector<std::int64_t> expert_loads(const Routing& routing);

}  // namespace moetune::moe
