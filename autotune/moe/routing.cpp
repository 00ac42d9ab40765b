#include "autotune/moe/routing.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/moe/random.hpp"

namespace moetune::moe {

namespace {

constexpr std::string_view accepted_specs =
    "expected uniform, round_robin, concentrated, zipf:S (S a number >= 0, e.g. zipf:1.2) or "
    "file:PATH";

[[noreturn]] void bad_spec(std::string_view text, std::string_view why) {
  throw Error(fmt::format("bad routing spec '{}': {}; {}", text, why, accepted_specs));
}

void check_sizes(std::int64_t tokens, int experts, int topk) {
  if (tokens < 0 || experts < 1 || topk < 1 || topk > experts) {
    throw Error(fmt::format("routing needs M >= 0, E >= 1 and 1 <= topk <= E (distinct experts "
                            "per token); got M={} E={} topk={}",
                            tokens, experts, topk));
  }
}

// k distinct experts drawn uniformly by a partial Fisher-Yates shuffle of `perm`. The shuffle
// is uniform whatever permutation `perm` starts as, so it is kept between tokens (O(topk) per
// token instead of O(E)).
void draw_distinct(Rng& rng, std::vector<std::int32_t>& perm, int topk, std::int32_t* out) {
  auto const e = static_cast<std::uint64_t>(perm.size());
  for (int k = 0; k < topk; ++k) {
    auto const j = static_cast<std::size_t>(k + rng.below(e - static_cast<std::uint64_t>(k)));
    std::swap(perm[static_cast<std::size_t>(k)], perm[j]);
    out[k] = perm[static_cast<std::size_t>(k)];
  }
}

std::vector<std::int32_t> identity(int n) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

void fill_zipf(Routing& r, double exponent, Rng& rng) {
  // Popularity by rank; which expert holds which rank is itself seeded, so the hot experts are
  // not always 0, 1, 2 (kernels must not win by luck of expert-0 placement).
  auto ranked = identity(r.experts);
  for (std::size_t i = ranked.size(); i > 1; --i) {
    std::swap(ranked[i - 1], ranked[static_cast<std::size_t>(rng.below(i))]);
  }
  std::vector<double> popularity(static_cast<std::size_t>(r.experts));
  for (int rank = 0; rank < r.experts; ++rank) {
    popularity[static_cast<std::size_t>(ranked[static_cast<std::size_t>(rank)])] =
        1.0 / std::pow(static_cast<double>(rank + 1), exponent);
  }
  std::vector<double> remaining(popularity.size());
  for (std::int64_t t = 0; t < r.tokens; ++t) {
    // Sequential weighted draws without replacement: a chosen expert's weight drops to zero.
    remaining = popularity;
    for (int k = 0; k < r.topk; ++k) {
      double const total = std::accumulate(remaining.begin(), remaining.end(), 0.0);
      double target = rng.uniform() * total;
      std::size_t chosen = remaining.size();
      for (std::size_t e = 0; e < remaining.size(); ++e) {
        if (remaining[e] == 0.0) continue;
        chosen = e;  // the last candidate absorbs rounding at the top end
        if (target < remaining[e]) break;
        target -= remaining[e];
      }
      r.ids[static_cast<std::size_t>(t * r.topk + k)] = static_cast<std::int32_t>(chosen);
      remaining[chosen] = 0.0;
    }
  }
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

RoutingSpec parse_routing_spec(std::string_view text) {
  RoutingSpec spec;
  if (text == "uniform") return spec;
  if (text == "round_robin") {
    spec.kind = RoutingKind::round_robin;
    return spec;
  }
  if (text == "concentrated") {
    spec.kind = RoutingKind::concentrated;
    return spec;
  }
  if (text.starts_with("zipf")) {
    if (!text.starts_with("zipf:")) bad_spec(text, "zipf needs an exponent after ':'");
    auto const number = text.substr(5);
    double s = 0.0;
    auto const [end, ec] = std::from_chars(number.data(), number.data() + number.size(), s);
    if (number.empty() || ec != std::errc{} || end != number.data() + number.size() ||
        !std::isfinite(s) || s < 0.0) {
      bad_spec(text, fmt::format("zipf exponent '{}' is not a finite number >= 0", number));
    }
    spec.kind = RoutingKind::zipf;
    spec.zipf_exponent = s;
    return spec;
  }
  if (text.starts_with("file:")) {
    if (text.size() == 5) bad_spec(text, "file: needs a path");
    spec.kind = RoutingKind::file;
    spec.file = std::filesystem::path(std::string(text.substr(5)));
    return spec;
  }
  bad_spec(text, "unknown routing mode");
}

std::string to_string(const RoutingSpec& spec) {
  switch (spec.kind) {
    case RoutingKind::uniform: return "uniform";
    case RoutingKind::round_robin: return "round_robin";
    case RoutingKind::concentrated: return "concentrated";
    case RoutingKind::zipf: return fmt::format("zipf:{}", spec.zipf_exponent);  // shortest round trip
    case RoutingKind::file: return "file:" + spec.file.string();
  }
  return "?";
}

std::vector<float> make_routing_weights(std::int64_t tokens, int topk, std::uint64_t seed) {
  std::vector<float> weights(static_cast<std::size_t>(tokens * topk));
  std::vector<double> logits(static_cast<std::size_t>(topk));
  for (std::int64_t t = 0; t < tokens; ++t) {
    Rng rng(stream_key({seed, static_cast<std::uint64_t>(StreamTag::routing_weights),
                        static_cast<std::uint64_t>(t)}));
    for (auto& l : logits) l = rng.approx_normal();
    double const top = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (auto& l : logits) sum += (l = std::exp(l - top));
    for (int k = 0; k < topk; ++k) {
      weights[static_cast<std::size_t>(t * topk + k)] =
          static_cast<float>(logits[static_cast<std::size_t>(k)] / sum);
    }
  }
  return weights;
}

Routing make_routing(const RoutingSpec& spec, std::int64_t tokens, int experts, int topk,
                     std::uint64_t seed) {
  check_sizes(tokens, experts, topk);
  Routing r;
  r.tokens = tokens;
  r.experts = experts;
  r.topk = topk;
  r.ids.resize(static_cast<std::size_t>(tokens * topk));
  Rng rng(stream_key({seed, static_cast<std::uint64_t>(StreamTag::routing_ids),
                      static_cast<std::uint64_t>(spec.kind)}));
  switch (spec.kind) {
    case RoutingKind::uniform: {
      auto perm = identity(experts);
      for (std::int64_t t = 0; t < tokens; ++t) {
        draw_distinct(rng, perm, topk, &r.ids[static_cast<std::size_t>(t * topk)]);
      }
      break;
    }
    case RoutingKind::round_robin:
      for (std::int64_t t = 0; t < tokens; ++t) {
        for (int k = 0; k < topk; ++k) {
          r.ids[static_cast<std::size_t>(t * topk + k)] =
              static_cast<std::int32_t>((t * topk + k) % experts);
        }
      }
      break;
    case RoutingKind::concentrated: {
      // One seeded set of topk experts, identical (same order) for every token.
      auto perm = identity(experts);
      std::vector<std::int32_t> chosen(static_cast<std::size_t>(topk));
      draw_distinct(rng, perm, topk, chosen.data());
      for (std::int64_t t = 0; t < tokens; ++t) {
        std::copy(chosen.begin(), chosen.end(), r.ids.begin() + t * topk);
      }
      break;
    }
    case RoutingKind::zipf: fill_zipf(r, spec.zipf_exponent, rng); break;
    case RoutingKind::file: {
      auto const recorded = read_routing_file(spec.file, experts, topk);
      for (std::int64_t t = 0; t < tokens; ++t) {
        auto const row = t % recorded.rows();
        std::copy_n(recorded.ids.begin() + row * topk, topk, r.ids.begin() + t * topk);
      }
      break;
    }
  }
  r.weights = make_routing_weights(tokens, topk, seed);
  return r;
}

RecordedRouting parse_routing_file(std::string_view contents, const std::filesystem::path& name,
                                   int experts, int topk) {
  check_sizes(0, experts, topk);
  RecordedRouting out;
  out.topk = topk;
  std::vector<std::int64_t> columns;  // column of each id in the current row, for duplicates
  std::int64_t line_number = 0;
  std::size_t line_start = 0;
  while (line_start < contents.size()) {
    std::size_t line_end = contents.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = contents.size();
    auto const line = contents.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    ++line_number;

    auto const fail = [&](std::size_t pos, std::string message) {
      throw InputError(name, line_number, static_cast<std::int64_t>(pos) + 1, std::move(message));
    };
    std::size_t const row_begin = out.ids.size();
    columns.clear();
    bool pending_comma = false;
    std::size_t pos = 0;
    while (true) {
      while (pos < line.size() && is_blank(line[pos])) ++pos;
      if (pos == line.size() || line[pos] == '#') {
        if (pending_comma) fail(pos, "expected an expert id after ','");
        break;
      }
      if (line[pos] == ',') {
        if (columns.empty() || pending_comma) fail(pos, "empty field: expected an expert id");
        pending_comma = true;
        ++pos;
        continue;
      }
      std::size_t end = pos;
      while (end < line.size() && !is_blank(line[end]) && line[end] != ',' && line[end] != '#') {
        ++end;
      }
      auto const field = line.substr(pos, end - pos);
      std::int64_t id = -1;
      auto const [stop, ec] = std::from_chars(field.data(), field.data() + field.size(), id);
      if (ec != std::errc{} || stop != field.data() + field.size()) {
        fail(pos, fmt::format("expected an expert id (an integer in [0, {}]), found '{}'",
                              experts - 1, field));
      }
      if (id < 0 || id >= experts) {
        fail(pos, fmt::format("expert id {} is out of range [0, {}]", id, experts - 1));
      }
      if (static_cast<int>(columns.size()) == topk) {
        fail(pos, fmt::format("more than topk={} expert ids in this row", topk));
      }
      for (std::size_t k = 0; k < columns.size(); ++k) {
        if (out.ids[row_begin + k] == id) {
          fail(pos, fmt::format("expert {} appears twice in this row (first at column {}); a "
                                "token's experts must be distinct",
                                id, columns[k] + 1));
        }
      }
      out.ids.push_back(static_cast<std::int32_t>(id));
      columns.push_back(static_cast<std::int64_t>(pos));
      pending_comma = false;
      pos = end;
    }
    if (!columns.empty() && static_cast<int>(columns.size()) != topk) {
      fail(line.size() - (!line.empty() && line.back() == '\r' ? 1 : 0),
           fmt::format("expected {} expert ids (topk), found {}", topk, columns.size()));
    }
  }
  if (out.ids.empty()) {
    throw InputError(name, 0, 0,
                     fmt::format("no token rows: expected one row of {} comma-separated expert "
                                 "ids per token",
                                 topk));
  }
  return out;
}

RecordedRouting read_routing_file(const std::filesystem::path& path, int experts, int topk) {
  return parse_routing_file(read_file(path), path, experts, topk);
}

void write_routing_file(const std::filesystem::path& path, const Routing& routing) {
  std::string text = fmt::format(
      "# moe-tune routing: topk_ids, one row per token (M={} E={} topk={})\n", routing.tokens,
      routing.experts, routing.topk);
  for (std::int64_t t = 0; t < routing.tokens; ++t) {
    for (int k = 0; k < routing.topk; ++k) {
      if (k > 0) text += ',';
      text += fmt::format("{}", routing.id(t, k));
    }
    text += '\n';
  }
  write_file_atomically(path, text);
}

std::vector<std::int64_t> expert_loads(const Routing& routing) {
  std::vector<std::int64_t> loads(static_cast<std::size_t>(routing.experts), 0);
  for (auto id : routing.ids) ++loads[static_cast<std::size_t>(id)];
  return loads;
}

int count_experts_touched(const Routing& routing) {
  auto const loads = expert_loads(routing);
  return static_cast<int>(std::count_if(loads.begin(), loads.end(), [](auto n) { return n > 0; }));
}

}  // namespace moetune::moe
