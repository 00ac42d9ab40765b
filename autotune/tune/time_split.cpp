#include "autotune/tune/time_split.hpp"

#include <array>

#include <fmt/format.h>

namespace moetune::tune {

namespace {

constexpr std::array<const char*, 6> kPhases{"setup", "check", "screen", "verify", "select", "confirm"};

}  // namespace

nlohmann::json to_json(const std::optional<CompileStep>& compile) {
  if (!compile) return nullptr;
  return {{"units", compile->units},
          {"from_cache", compile->from_cache},
          {"failed", compile->failed},
          {"seconds", compile->seconds}};
}

std::string time_split_markdown(const std::optional<CompileStep>& compile,
                                std::span<const nlohmann::json> bucket_reports) {
  std::string out = "\n## Where the time went\n\n";
  if (compile) {
    out += fmt::format("Compile (once, before any bucket): {} units, {} from the code cache, {} "
                       "failed, {:.1f} s.\n\n",
                       compile->units, compile->from_cache, compile->failed, compile->seconds);
  }
  out += "Seconds per bucket: set-up (weights and reference), check (load and one run of every "
         "pipeline), screen, verify (every gate of the baseline and each would-be finalist), "
         "select, confirm (confirmation and the row's stage times).\n\n";
  out += "| bucket | set-up | check | screen | verify | select | confirm | total |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  std::array<double, kPhases.size()> sums{};
  double total = 0;
  for (auto const& b : bucket_reports) {
    // "token T (line L)", not a bare number: the bucket table above is the one whose lines
    // start with the token.
    out += fmt::format("| token {} (line {}) |", b.value("token", std::int64_t{0}), b.value("line", std::int64_t{0}));
    auto const it = b.find("seconds");
    bool const has = it != b.end() && it->is_object();
    for (std::size_t p = 0; p < kPhases.size(); ++p) {
      if (has && it->contains(kPhases[p])) {
        double const s = it->at(kPhases[p]).get<double>();
        sums[p] += s;
        out += fmt::format(" {:.1f} |", s);
      } else {
        out += " — |";
      }
    }
    if (has && it->contains("total")) {
      total += it->at("total").get<double>();
      out += fmt::format(" {:.1f} |\n", it->at("total").get<double>());
    } else {
      out += " — |\n";
    }
  }
  out += "| **all** |";
  for (double s : sums) out += fmt::format(" {:.1f} |", s);
  out += fmt::format(" **{:.1f}** |\n", total);
  return out;
}

}  // namespace moetune::tune
