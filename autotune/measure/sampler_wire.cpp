#include "autotune/measure/sampler_wire.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::measure::wire {

using nlohmann::json;

namespace {

template <class E>
int as_int(E e) {
  return static_cast<int>(e);
}
template <class E>
E as_enum(const json& j) {
  return static_cast<E>(j.get<int>());
}

Phase parse_phase(std::string_view text) {
  for (auto p : {Phase::screen, Phase::select, Phase::confirm, Phase::stage_times}) {
    if (to_string(p) == text) return p;
  }
  throw Error(fmt::format("sampler wire: unknown phase '{}'", text));
}

json key_to_json(const io::FmoeKey& k) {
  json j{{"gfx", k.gfx},
         {"token", k.token},
         {"model_dim", k.model_dim},
         {"inter_dim", k.inter_dim},
         {"expert", k.expert},
         {"topk", k.topk},
         {"act_type", as_int(k.act_type)},
         {"dtype", as_int(k.dtype)},
         {"q_dtype_a", as_int(k.q_dtype_a)},
         {"q_dtype_w", as_int(k.q_dtype_w)},
         {"q_type", as_int(k.q_type)},
         {"use_g1u1", k.use_g1u1},
         {"doweight_stage1", k.doweight_stage1},
         {"tag", k.tag}};
  if (k.cu_num) j["cu_num"] = *k.cu_num;
  if (k.fhmoe) {
    j["fhmoe"] = {{"shared_expert_id", k.fhmoe->shared_expert_id},
                  {"hidden_pad", k.fhmoe->hidden_pad},
                  {"intermediate_pad", k.fhmoe->intermediate_pad},
                  {"gate_mode", as_int(k.fhmoe->gate_mode)}};
  }
  return j;
}

io::FmoeKey key_from_json(const json& j) {
  io::FmoeKey k;
  k.gfx = j.at("gfx").get<std::string>();
  if (j.contains("cu_num")) k.cu_num = j.at("cu_num").get<std::int64_t>();
  k.token = j.at("token").get<std::int64_t>();
  k.model_dim = j.at("model_dim").get<std::int64_t>();
  k.inter_dim = j.at("inter_dim").get<std::int64_t>();
  k.expert = j.at("expert").get<std::int64_t>();
  k.topk = j.at("topk").get<std::int64_t>();
  k.act_type = as_enum<io::ActivationType>(j.at("act_type"));
  k.dtype = as_enum<io::TorchDtype>(j.at("dtype"));
  k.q_dtype_a = as_enum<io::TorchDtype>(j.at("q_dtype_a"));
  k.q_dtype_w = as_enum<io::TorchDtype>(j.at("q_dtype_w"));
  k.q_type = as_enum<io::QuantType>(j.at("q_type"));
  k.use_g1u1 = j.at("use_g1u1").get<bool>();
  k.doweight_stage1 = j.at("doweight_stage1").get<bool>();
  k.tag = j.at("tag").get<std::string>();
  if (j.contains("fhmoe")) {
    auto const& f = j.at("fhmoe");
    k.fhmoe = io::FhmoeKeyFields{f.at("shared_expert_id").get<std::int64_t>(),
                                 f.at("hidden_pad").get<std::int64_t>(),
                                 f.at("intermediate_pad").get<std::int64_t>(),
                                 as_enum<io::GateMode>(f.at("gate_mode"))};
  }
  return k;
}

json shape_to_json(const moe::MoeShape& s) {
  return {{"tokens", s.tokens},
          {"hidden", s.hidden},
          {"inter", s.inter},
          {"logical_inter", s.logical_inter},
          {"experts", s.experts},
          {"topk", s.topk},
          {"dtype", as_int(s.dtype)},
          {"gate_up", as_int(s.gate_up)},
          {"doweight_stage1", s.doweight_stage1},
          {"fp8_flavor", as_int(s.fp8_flavor)}};
}

moe::MoeShape shape_from_json(const json& j) {
  moe::MoeShape s;
  s.tokens = j.at("tokens").get<std::int64_t>();
  s.hidden = j.at("hidden").get<std::int64_t>();
  s.inter = j.at("inter").get<std::int64_t>();
  s.logical_inter = j.at("logical_inter").get<std::int64_t>();
  s.experts = j.at("experts").get<int>();
  s.topk = j.at("topk").get<int>();
  s.dtype = as_enum<moe::DtypePath>(j.at("dtype"));
  s.gate_up = as_enum<moe::GateUpLayout>(j.at("gate_up"));
  s.doweight_stage1 = j.at("doweight_stage1").get<bool>();
  s.fp8_flavor = as_enum<moe::Fp8Flavor>(j.at("fp8_flavor"));
  return s;
}

}  // namespace

json number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

double number_from_json(const json& j) {
  if (j.is_string()) {
    auto const s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw Error(fmt::format("sampler wire: '{}' is not a number", s));
  }
  return j.get<double>();
}

TimedUnit parse_unit(std::string_view text) {
  for (auto u : {TimedUnit::full, TimedUnit::stage1, TimedUnit::stage2}) {
    if (to_string(u) == text) return u;
  }
  throw Error(fmt::format("sampler wire: unknown timed unit '{}'", text));
}

Outcome outcome_from_json(const json& j) {
  auto const text = j.get<std::string>();
  auto const o = parse_outcome(text);
  if (!o) throw Error(fmt::format("sampler wire: unknown outcome '{}'", text));
  return *o;
}

json to_json(const BucketPlan& b) {
  json candidates = json::array();
  for (auto const& c : b.candidates) {
    json e{{"config", c.config.name()}};
    if (c.pruned_reason) e["pruned"] = *c.pruned_reason;
    candidates.push_back(std::move(e));
  }
  json j{{"key", key_to_json(b.key)},
         {"line", b.line},
         {"M", b.M},
         {"shape", shape_to_json(b.shape)},
         {"baseline", {{"stage1", b.baseline.stage1.name()}, {"stage2", b.baseline.stage2.name()}}},
         {"candidates", std::move(candidates)}};
  if (b.fixed_pair) {
    j["fixed_pair"] = {{"stage1", b.fixed_pair->stage1.name()},
                       {"stage2", b.fixed_pair->stage2.name()}};
  }
  return j;
}

BucketPlan bucket_from_json(const json& j) {
  BucketPlan b;
  b.key = key_from_json(j.at("key"));
  b.line = j.at("line").get<std::int64_t>();
  b.M = j.at("M").get<std::int64_t>();
  b.shape = shape_from_json(j.at("shape"));
  b.baseline.stage1 = search::parse_kernel_name(j.at("baseline").at("stage1").get<std::string>());
  b.baseline.stage2 = search::parse_kernel_name(j.at("baseline").at("stage2").get<std::string>());
  for (auto const& c : j.at("candidates")) {
    search::Candidate cand{search::parse_kernel_name(c.at("config").get<std::string>()),
                           std::nullopt};
    if (c.contains("pruned")) cand.pruned_reason = c.at("pruned").get<std::string>();
    b.candidates.push_back(std::move(cand));
  }
  if (j.contains("fixed_pair")) {
    b.fixed_pair = BucketPlan::FixedPair{
        search::parse_kernel_name(j.at("fixed_pair").at("stage1").get<std::string>()),
        search::parse_kernel_name(j.at("fixed_pair").at("stage2").get<std::string>())};
  }
  return b;
}

json to_json(const TunePair& pair) {
  return {{"stage1", pair.stage1.name()}, {"stage2", pair.stage2.name()}};
}

TunePair pair_from_json(const json& j) {
  return {search::parse_kernel_name(j.at("stage1").get<std::string>()),
          search::parse_kernel_name(j.at("stage2").get<std::string>())};
}

json to_json(const BlockSpec& block) {
  json arms = json::array();
  for (auto const& a : block.arms) {
    json arm{{"label", a.label}, {"pair", to_json(a.pair)}};
    if (a.delay_ns) arm["delay_ns"] = *a.delay_ns;
    arms.push_back(std::move(arm));
  }
  json units = json::array();
  for (auto u : block.units) units.push_back(std::string(to_string(u)));
  json out{{"phase", std::string(to_string(block.phase))},
           {"attempt", block.attempt},
           {"index", block.index},
           {"seed", block.seed},
           {"placement_pad_bytes", block.placement_pad_bytes},
           {"arms", std::move(arms)},
           {"units", std::move(units)}};
  if (block.M) out["M"] = *block.M;
  if (block.keep_arms) out["keep_arms"] = true;
  if (block.warmup_replays) out["warmup_replays"] = *block.warmup_replays;
  if (block.repeats) out["repeats"] = *block.repeats;
  return out;
}

BlockSpec block_from_json(const json& j) {
  BlockSpec b;
  b.phase = parse_phase(j.at("phase").get<std::string>());
  b.attempt = j.at("attempt").get<int>();
  b.index = j.at("index").get<int>();
  b.seed = j.at("seed").get<std::uint64_t>();
  b.placement_pad_bytes = j.at("placement_pad_bytes").get<std::uint64_t>();
  for (auto const& a : j.at("arms")) {
    Arm arm{a.at("label").get<std::string>(), pair_from_json(a.at("pair")), std::nullopt};
    if (a.contains("delay_ns")) arm.delay_ns = a.at("delay_ns").get<std::uint64_t>();
    b.arms.push_back(std::move(arm));
  }
  b.units.clear();
  for (auto const& u : j.at("units")) b.units.push_back(parse_unit(u.get<std::string>()));
  if (j.contains("M")) b.M = j.at("M").get<std::int64_t>();
  b.keep_arms = j.value("keep_arms", false);
  if (j.contains("warmup_replays")) b.warmup_replays = j.at("warmup_replays").get<int>();
  if (j.contains("repeats")) b.repeats = j.at("repeats").get<int>();
  return b;
}

json to_json(const Preparation& p) {
  return {{"status", std::string(to_string(p.status))}, {"detail", p.detail}};
}

Preparation preparation_from_json(const json& j) {
  return {outcome_from_json(j.at("status")), j.at("detail").get<std::string>()};
}

json to_json(const Verification& v) {
  return {{"passed", v.passed},
          {"detail", v.detail},
          {"checks", v.checks},
          {"max_abs", number(v.max_abs)},
          {"max_rel", number(v.max_rel)},
          {"err1", number(v.err1)},
          {"err2", number(v.err2)},
          {"max_abs_vs_baseline", number(v.max_abs_vs_baseline)},
          {"failure", std::string(to_string(v.failure))}};
}

Verification verification_from_json(const json& j) {
  Verification v;
  v.passed = j.at("passed").get<bool>();
  v.detail = j.at("detail").get<std::string>();
  v.checks = j.at("checks").get<int>();
  v.max_abs = number_from_json(j.at("max_abs"));
  v.max_rel = number_from_json(j.at("max_rel"));
  v.err1 = number_from_json(j.at("err1"));
  v.err2 = number_from_json(j.at("err2"));
  v.max_abs_vs_baseline = number_from_json(j.at("max_abs_vs_baseline"));
  v.failure = outcome_from_json(j.at("failure"));
  return v;
}

json to_json(const SamplerError& e) {
  return {{"kind", std::string(to_string(e.kind()))}, {"arm", e.arm()}, {"message", e.what()}};
}

SamplerError sampler_error_from_json(const json& j) {
  return {outcome_from_json(j.at("kind")), j.at("arm").get<std::string>(),
          j.at("message").get<std::string>()};
}

}  // namespace moetune::measure::wire
