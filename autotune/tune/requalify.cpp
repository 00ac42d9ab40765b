#include "autotune/tune/requalify.hpp"

#include <map>
#include <variant>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/kernel_config.hpp"
#include "autotune/search/validity.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "autotune/tune/shape_from_key.hpp"
#include "autotune/tune/tune_report.hpp"

namespace moetune::tune {

std::string_view to_string(RequalifyVerdict v) {
  switch (v) {
    case RequalifyVerdict::still_qualifies: return "still_qualifies";
    case RequalifyVerdict::no_longer_qualifies: return "no_longer_qualifies";
    case RequalifyVerdict::does_not_compile: return "does_not_compile";
    case RequalifyVerdict::wrong_result: return "wrong_result";
    case RequalifyVerdict::control_failed: return "control_failed";
    case RequalifyVerdict::failed_to_run: return "failed_to_run";
    case RequalifyVerdict::not_valid: return "not_valid";
    case RequalifyVerdict::skipped: return "skipped";
  }
  return "?";
}

namespace {

// A kernel name of ours for `stage`, or why not (another backend's kernel, a typo).
std::variant<search::KernelConfig, std::string> our_kernel(const std::string& name, int stage) {
  try {
    auto cfg = search::parse_kernel_name(name);
    if (cfg.stage != stage) {
      return fmt::format("{} is a stage-{} kernel in the stage-{} column", name, cfg.stage, stage);
    }
    return cfg;
  } catch (const Error& e) {
    return fmt::format("not a moe-tune kernel, skipped ({}: {})", name.empty() ? "(empty)" : name,
                       e.what());
  }
}

// The figures a verdict rests on: the confirmation when there was one, else how far the pair
// got (select, screen).
std::string figures(const BucketResult& b) {
  if (auto const* a = b.final_attempt()) {
    auto const& s = a->comparison_summary;
    return fmt::format("{:.2f} → {:.2f} µs, median paired reduction {:.2f}%, wins {}/{} (need {}), "
                       "control {}",
                       s.baseline_median_us, s.candidate_median_us, 100 * s.median_reduction,
                       s.wins, s.pairs, a->gate.required_wins,
                       a->control_verdict.passed ? "pass" : "FAIL");
  }
  if (!b.pairs.empty() && b.pairs[0].select_median_us && b.baseline_select_median_us) {
    return fmt::format("select: default {:.2f} µs, row's pair {:.2f} µs",
                       *b.baseline_select_median_us, *b.pairs[0].select_median_us);
  }
  if (!b.pairs.empty() && b.pairs[0].screen_score) {
    return fmt::format("screen: {:.3f} x the default's time", *b.pairs[0].screen_score);
  }
  return "";
}

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "; " + b;
}

}  // namespace

RequalifyCase requalify_case(const io::FmoeRow& row, search::Arch arch,
                             std::string_view arch_name, std::int64_t cu_num) {
  RequalifyCase c;
  c.line = row.line;
  c.key = row.key;
  if (!row.tuned) {
    c.skip_reason = "not a tuned row";
    return c;
  }
  c.kernel1 = row.tuned->kernel_name1;
  c.kernel2 = row.tuned->kernel_name2;
  c.table_us = row.tuned->us;
  // AITER matches gfx and cu_num exactly: a row for another machine is not ours to judge here.
  if (!row.key.gfx.empty() && row.key.gfx != arch_name) {
    c.skip_reason = fmt::format("a row for {}, this device is {}", row.key.gfx, arch_name);
    return c;
  }
  if (row.key.cu_num && *row.key.cu_num != cu_num) {
    c.skip_reason = fmt::format("a row for {} CUs, this device has {}", *row.key.cu_num, cu_num);
    return c;
  }
  auto const k1 = our_kernel(c.kernel1, 1);
  auto const k2 = our_kernel(c.kernel2, 2);
  if (auto const* why = std::get_if<std::string>(&k1)) {
    c.skip_reason = *why;
    return c;
  }
  if (auto const* why = std::get_if<std::string>(&k2)) {
    c.skip_reason = *why;
    return c;
  }
  auto planned = plan_bucket(row, arch);
  if (auto const* why = std::get_if<std::string>(&planned)) {
    c.skip_reason = "no moe-tune kernel for this key: " + *why;
    return c;
  }
  auto& b = std::get<measure::BucketPlan>(planned);
  auto const s1 = std::get<search::KernelConfig>(k1);
  auto const s2 = std::get<search::KernelConfig>(k2);
  for (auto const& cfg : {s1, s2}) {
    b.candidates.push_back({cfg, search::check_config(cfg, arch, b.shape)});
  }
  if (auto const why = search::pair_violation(s1, s2); why && !b.candidates[1].pruned_reason) {
    b.candidates[1].pruned_reason = *why;
  }
  b.fixed_pair = measure::BucketPlan::FixedPair{s1, s2};
  c.plan = std::move(b);
  return c;
}

RequalifyResult requalify_verdict(BucketResult b) {
  RequalifyResult r;
  for (auto const& slot : b.slots) {
    if (slot.pruned) {
      r.verdict = RequalifyVerdict::not_valid;
      r.detail = fmt::format("{}: {}", slot.config, *slot.pruned);
    }
  }
  if (r.verdict != RequalifyVerdict::not_valid) {
    if (b.pairs.empty()) {
      r.verdict = RequalifyVerdict::no_longer_qualifies;
      r.detail = "the row's pair is now the default configuration: the row changes nothing";
    } else {
      auto const& rec = b.pairs[0];
      switch (rec.outcome) {
        case measure::Outcome::qualified: r.verdict = RequalifyVerdict::still_qualifies; break;
        case measure::Outcome::slower:
        case measure::Outcome::not_significant: r.verdict = RequalifyVerdict::no_longer_qualifies; break;
        case measure::Outcome::compile_error: r.verdict = RequalifyVerdict::does_not_compile; break;
        case measure::Outcome::wrong_result: r.verdict = RequalifyVerdict::wrong_result; break;
        case measure::Outcome::control_failed: r.verdict = RequalifyVerdict::control_failed; break;
        case measure::Outcome::launch_error:
        case measure::Outcome::timeout:
        // The default failed or the bucket could not be set up: the row's pair never ran
        // against it, which is no verdict on the row.
        case measure::Outcome::baseline_failed:
        case measure::Outcome::setup_failed: r.verdict = RequalifyVerdict::failed_to_run; break;
        case measure::Outcome::pruned: r.verdict = RequalifyVerdict::not_valid; break;
      }
      r.detail = rec.outcome == measure::Outcome::qualified ? figures(b) : join(figures(b), rec.reason);
    }
  }
  r.bucket = std::move(b);
  return r;
}

RequalifyResult compile_failure(std::string_view unit, std::string_view log_head) {
  RequalifyResult r;
  r.verdict = RequalifyVerdict::does_not_compile;
  std::string head(log_head);
  if (auto const nl = head.find('\n'); nl != std::string::npos) head.resize(nl);
  r.detail = fmt::format("{}: {}", unit, head.empty() ? "compile error" : head);
  return r;
}

nlohmann::json requalify_json(std::span<const RequalifyRow> rows) {
  nlohmann::json list = nlohmann::json::array();
  for (auto const& r : rows) {
    list.push_back({{"line", r.row.line},
                    {"key", r.row.key.describe()},
                    {"kernelName1", r.row.kernel1},
                    {"kernelName2", r.row.kernel2},
                    {"table_us", r.row.table_us ? nlohmann::json(*r.row.table_us) : nlohmann::json()},
                    {"M", r.row.plan ? nlohmann::json(r.row.plan->M) : nlohmann::json()},
                    {"verdict", std::string(to_string(r.result.verdict))},
                    {"detail", r.row.plan ? r.result.detail : r.row.skip_reason},
                    {"bucket", r.result.bucket ? to_json(*r.result.bucket) : nlohmann::json()}});
    if (!r.result.device.empty()) list.back()["device"] = r.result.device;
  }
  return list;
}

std::string requalify_markdown(std::span<const RequalifyRow> rows, std::string_view title) {
  std::string out = fmt::format("# {}\n\n", title);
  std::map<std::string_view, int> counts;
  for (auto const& r : rows) ++counts[to_string(r.result.verdict)];
  for (auto const& [verdict, n] : counts) out += fmt::format("- {}: {}\n", verdict, n);
  out += "\n| line | token | M | table us | verdict | detail |\n|---:|---:|---:|---:|---|---|\n";
  for (auto const& r : rows) {
    auto detail = r.row.plan ? r.result.detail : r.row.skip_reason;
    for (auto& ch : detail) {
      if (ch == '|' || ch == '\n') ch = ' ';  // one table cell
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r.row.line, r.row.key.token,
                       r.row.plan ? fmt::to_string(r.row.plan->M) : "—",
                       r.row.table_us ? fmt::format("{:.4f}", *r.row.table_us) : "—",
                       to_string(r.result.verdict), detail);
  }
  return out;
}

}  // namespace moetune::tune
