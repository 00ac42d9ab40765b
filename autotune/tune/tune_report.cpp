#include "autotune/tune/tune_report.hpp"

#include "autotune/core/atomic_file.hpp"
#include "autotune/io/number_format.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/tune/tuned_rows.hpp"

namespace moetune::tune {

namespace {

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json to_json(const measure::Verification& v) {
  return {{"passed", v.passed},   {"detail", v.detail},   {"checks", v.checks},
          {"max_abs", v.max_abs}, {"max_rel", v.max_rel}, {"err1", v.err1},
          {"err2", v.err2},       {"max_abs_vs_baseline", v.max_abs_vs_baseline},
          {"failure", v.passed ? "" : std::string(to_string(v.failure))}};
}

nlohmann::json to_json(const RowFigures& f, const char* m_name) {
  return {{m_name, f.M}, {"us", f.us}, {"tflops", f.tflops}, {"bw_gbps", f.bw}};
}

// The tuned row's us/tflops/bw as AITER defines them (us1 + us2, timed at token) beside
// moe-tune's own figures at the bucket's M (actual_m): the confirmed full-MoE median of the
// tuned pair, with its FLOPs and traffic model. Null for a bucket without a row.
nlohmann::json row_figures(const BucketResult& b) {
  if (!b.qualified || !b.stage1_us || !b.stage2_us) return nullptr;
  double const us = io::total_us(io::python_round(*b.stage1_us, 4),
                                 io::python_round(*b.stage2_us, 4));
  nlohmann::json out{{"aiter_row", to_json(aiter_row_figures(b.key, us), "token")},
                     {"moetune", nullptr}};
  if (auto const* a = b.final_attempt()) {
    out["moetune"] = to_json(moetune_row_figures(b, a->comparison_summary.candidate_median_us), "actual_m");
  }
  return out;
}

nlohmann::json to_json(const stats::PairedSample& s) {
  return {{"block", s.block},
          {"baseline_first", s.baseline_first},
          {"baseline_us", s.baseline_us},
          {"candidate_us", s.candidate_us},
          {"reduction", (s.baseline_us - s.candidate_us) / s.baseline_us}};
}

nlohmann::json to_json(const stats::PairedSummary& s) {
  return {{"pairs", s.pairs},
          {"wins", s.wins},
          {"losses", s.losses},
          {"median_reduction", s.median_reduction},
          {"sign_test_p", s.sign_test_p},
          {"baseline_median_us", s.baseline_median_us},
          {"candidate_median_us", s.candidate_median_us},
          {"block_median_reductions", s.block_median_reductions}};
}

nlohmann::json to_json(const ConfirmAttempt& a) {
  nlohmann::json cmp = nlohmann::json::array(), ctl = nlohmann::json::array(),
                 vsc = nlohmann::json::array();
  for (auto const& s : a.comparison) cmp.push_back(to_json(s));
  for (auto const& s : a.control) ctl.push_back(to_json(s));
  for (auto const& s : a.versus_control) vsc.push_back(to_json(s));
  // null: every declared block was measured.
  nlohmann::json stopped = a.stopped_after_blocks ? nlohmann::json(*a.stopped_after_blocks)
                                                  : nlohmann::json();
  return {{"attempt", a.attempt},
          {"stopped_after_blocks", stopped},
          {"stop_reason", a.stop_reason},
          {"layout", to_json(a.layout)},
          {"comparison", {{"samples", cmp}, {"summary", to_json(a.comparison_summary)}}},
          {"versus_control", {{"samples", vsc}, {"summary", to_json(a.versus_control_summary)}}},
          {"gate", {{"passed", a.gate.passed},
                    {"required_wins", a.gate.required_wins},
                    {"reasons", a.gate.reasons},
                    {"vs_baseline_passed", a.gate_vs_baseline.passed},
                    {"vs_control_passed", a.gate_vs_control.passed}}},
          {"control", {{"samples", ctl},
                       {"summary", to_json(a.control_summary)},
                       {"passed", a.control_verdict.passed},
                       {"reasons", a.control_verdict.reasons}}}};
}

}  // namespace

nlohmann::json to_json(const ProtocolOptions& o) {
  return {{"screen_samples", o.screen_samples},
          {"screen_margin", o.screen_margin},
          {"screen_race_margin", o.screen_race_margin},
          {"screen_race_after", o.screen_race_after},
          {"screen_first_cut_margin", o.screen_first_cut_margin},
          {"screen_block_size", o.screen_block_size},
          {"screen_warmup_replays", o.screen_warmup_replays},
          {"screen_repeats", o.screen_repeats},
          {"finalists", o.finalists},
          {"select_rounds", o.select_rounds},
          {"confirm_blocks", o.confirm_blocks},
          {"pairs_per_block", o.pairs_per_block},
          {"control_remeasures", o.control_remeasures},
          {"futility_stop", o.futility_stop},
          {"order_design", kConfirmationOrderDesign},
          {"stage_time_samples", o.stage_time_samples},
          {"gate", to_json(o.gate)},
          {"seed", o.seed},
          {"false_qualification_rate", opt_json(o.false_qualification_rate)},
          {"calibration", o.calibration},
          {"calibrated_bucket", o.calibration_scope ? nlohmann::json(o.calibration_scope->describe())
                                                    : nlohmann::json()}};
}

nlohmann::json to_json(const BucketResult& b) {
  nlohmann::json candidates = nlohmann::json::array();
  for (auto const& slot : b.slots) {
    candidates.push_back({{"stage", slot.stage},
                          {"config", slot.config},
                          {"pipeline", slot.pair ? nlohmann::json(b.pairs[*slot.pair].pair.name())
                                                 : nlohmann::json()},
                          {"outcome", std::string(to_string(b.outcome_of(slot)))},
                          {"reason", b.reason_of(slot)}});
  }
  nlohmann::json pipelines = nlohmann::json::array();
  for (auto const& p : b.pairs) {
    pipelines.push_back({{"name", p.pair.name()},
                         {"stage1", p.pair.stage1.name()},
                         {"stage2", p.pair.stage2.name()},
                         {"outcome", std::string(to_string(p.outcome))},
                         {"reason", p.reason},
                         {"verification", p.verification ? to_json(*p.verification)
                                                         : nlohmann::json()},
                         {"screen_us", p.screen_us},
                         {"screen_score", opt_json(p.screen_score)},
                         {"screen_stopped", p.screen_stopped},
                         {"screen_stop_margin", p.screen_stop_margin},
                         {"screen_stop_baseline_us", p.screen_stop_baseline_us},
                         {"select_us", p.select_us},
                         {"select_median_us", opt_json(p.select_median_us)}});
  }
  nlohmann::json attempts = nlohmann::json::array();
  for (auto const& a : b.attempts) attempts.push_back(to_json(a));
  auto shape = b.shape;
  shape.tokens = b.M;
  // What a tuned row claims, in one place: faster than this baseline pair, by this much, in
  // the confirmation that qualified it (null for a bucket without a row).
  nlohmann::json claim;
  if (auto const* a = b.final_attempt(); a && b.qualified && b.winner) {
    claim = {{"tuned_pair", b.pairs[*b.winner].pair.name()},
             {"baseline_pair", b.baseline.name()},
             {"baseline_median_us", a->comparison_summary.baseline_median_us},
             {"tuned_median_us", a->comparison_summary.candidate_median_us},
             {"median_reduction", a->comparison_summary.median_reduction},
             {"wins", a->comparison_summary.wins},
             {"pairs", a->comparison_summary.pairs}};
  }
  return {{"key", b.key.describe()},
          {"claim", claim},
          {"token", b.key.token},
          {"line", b.line},
          {"M", b.M},
          {"shape", moe::to_string(shape)},
          {"baseline", b.baseline.name()},
          {"baseline_verification", b.baseline_verification ? to_json(*b.baseline_verification)
                                                            : nlohmann::json()},
          {"baseline_screen_us", b.baseline_screen_us},
          {"baseline_select_us", b.baseline_select_us},
          {"winner", b.winner ? nlohmann::json(b.pairs[*b.winner].pair.name()) : nlohmann::json()},
          {"manifest", b.manifest ? to_json(*b.manifest) : nlohmann::json()},
          {"confirmation", attempts},
          {"qualified", b.qualified},
          {"figures", row_figures(b)},
          {"seconds", {{"setup", b.seconds.setup},
                       {"check", b.seconds.check},
                       {"screen", b.seconds.screen},
                       {"verify", b.seconds.verify},
                       {"select", b.seconds.select},
                       {"confirm", b.seconds.confirm},
                       {"total", b.seconds.total()}}},
          {"stage_times_m", b.stage_times_M},
          {"stage1_us", opt_json(b.stage1_us)},
          {"stage2_us", opt_json(b.stage2_us)},
          {"stage1_samples_us", b.stage1_samples_us},
          {"stage2_samples_us", b.stage2_samples_us},
          {"summary", b.summary},
          // How the bucket ended as a whole; the failures say what stopped it.
          {"status", std::string(to_string(b.status()))},
          {"baseline_failure",
           b.baseline_failure
               ? nlohmann::json{{"kind", std::string(to_string(b.baseline_failure->kind))},
                                {"message", b.baseline_failure->message}}
               : nlohmann::json()},
          {"setup_failure", b.setup_failure ? nlohmann::json(*b.setup_failure) : nlohmann::json()},
          {"candidates", candidates},
          {"pipelines", pipelines}};
}

nlohmann::json tune_report_json(std::span<const BucketResult> buckets,
                                const ProtocolOptions& options, const Provenance& p) {
  nlohmann::json list = nlohmann::json::array();
  for (auto const& b : buckets) list.push_back(to_json(b));
  return {{"provenance", {{"device", p.device},
                          {"arch", p.arch},
                          {"cu_num", p.cu_num},
                          {"driver", p.driver},
                          {"launches", p.launches},
                          {"runtime_compiler", p.runtime_compiler},
                          {"git_revision", p.git_revision},
                          {"decision_code_sha256", p.decision_code_sha256},
                          {"command", p.command},
                          {"search_space", p.search_space},
                          {"search_space_sha256", p.search_space_sha256},
                          {"kernel_source_sha256", p.kernel_source_sha256},
                          {"sampler", p.sampler}}},
          {"protocol", to_json(options)},
          {"buckets", list}};
}

void write_tune_report(const std::filesystem::path& file, std::span<const BucketResult> buckets,
                       const ProtocolOptions& options, const Provenance& provenance) {
  write_file_atomically(file, tune_report_json(buckets, options, provenance).dump(2) + "\n");
}

}  // namespace moetune::tune
