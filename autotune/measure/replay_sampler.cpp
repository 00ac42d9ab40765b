#include "autotune/measure/replay_sampler.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <numbers>
#include <thread>

#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/core/sha256.hpp"

namespace moetune::measure {

namespace {

Outcome outcome_field(const nlohmann::json& j, const char* key, Outcome fallback) {
  if (!j.contains(key)) return fallback;
  auto const text = j.at(key).get<std::string>();
  auto const o = parse_outcome(text);
  if (!o) throw Error(fmt::format("replay model: unknown outcome '{}' in '{}'", text, key));
  return *o;
}

}  // namespace

ReplayModel replay_model_from_json(const nlohmann::json& j) {
  ReplayModel m;
  m.seed = j.value("seed", m.seed);
  m.repeats = j.value("repeats", m.repeats);
  m.default_mean_us = j.value("default_mean_us", m.default_mean_us);
  m.mean_us = j.value("mean_us", m.mean_us);
  m.noise = j.value("noise", m.noise);
  m.block_sd = j.value("block_sd", m.block_sd);
  m.arm_bias = j.value("arm_bias", m.arm_bias);
  m.build_order_bias = j.value("build_order_bias", m.build_order_bias);
  m.stage1_fraction = j.value("stage1_fraction", m.stage1_fraction);
  if (j.contains("confirm_block_bias")) {
    for (auto const& [pair, blocks] : j.at("confirm_block_bias").items()) {
      for (auto const& [index, bias] : blocks.items()) {
        m.confirm_block_bias[pair][std::stoi(index)] = bias.get<double>();
      }
    }
  }
  if (j.contains("preparation")) {
    for (auto const& [pair, p] : j.at("preparation").items()) {
      m.preparation[pair] = {outcome_field(p, "status", Outcome::qualified),
                             p.value("detail", std::string())};
    }
  }
  for (auto const* field : {"verification", "full_verification"}) {
    if (!j.contains(field)) continue;
    auto& target = std::string_view(field) == "verification" ? m.verification : m.full_verification;
    for (auto const& [pair, v] : j.at(field).items()) {
      Verification out;
      out.passed = v.value("passed", true);
      out.detail = v.value("detail", std::string());
      out.max_abs = v.value("max_abs", 0.0);
      out.max_rel = v.value("max_rel", 0.0);
      out.err1 = v.value("err1", 0.0);
      out.err2 = v.value("err2", 0.0);
      out.max_abs_vs_baseline = v.value("max_abs_vs_baseline", 0.0);
      out.failure = outcome_field(v, "failure", Outcome::wrong_result);
      target[pair] = out;
    }
  }
  if (j.contains("sample_failure")) {
    for (auto const& [pair, kind] : j.at("sample_failure").items()) {
      auto const o = parse_outcome(kind.get<std::string>());
      if (!o) throw Error(fmt::format("replay model: unknown outcome in sample_failure.{}", pair));
      m.sample_failure[pair] = *o;
    }
  }
  m.recorded = j.value("recorded", m.recorded);
  m.sample_delay_ms = j.value("sample_delay_ms", m.sample_delay_ms);
  for (auto const& [field, target] : {std::pair{"crash_pairs", &m.crash_pairs},
                                      std::pair{"hang_pairs", &m.hang_pairs}}) {
    if (!j.contains(field)) continue;
    auto const& f = j.at(field);
    if (f.is_array()) {
      for (auto const& name : f) (*target)[name.get<std::string>()] = "sample";
    } else {
      *target = f.get<std::map<std::string, std::string>>();
    }
    for (auto const& [pair, where] : *target) {
      if (where != "prepare" && where != "quick_check" && where != "verify" && where != "build" &&
          where != "sample") {
        throw Error(fmt::format("replay model: {}.{}: '{}' is not prepare, quick_check, verify, "
                                "build or sample",
                                field, pair, where));
      }
    }
  }
  if (j.contains("setup_failure")) {
    for (auto const& [token, text] : j.at("setup_failure").items()) {
      std::int64_t value = 0;
      auto const [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || end != token.data() + token.size()) {
        throw Error(fmt::format("replay model: setup_failure.{}: not a bucket token", token));
      }
      m.setup_failure[value] = text.get<std::string>();
    }
  }
  return m;
}

namespace {

nlohmann::json read_replay_model_json(const std::filesystem::path& path) {
  try {
    return nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not a replay model: {}", path.string(), e.what()));
  }
}

}  // namespace

ReplayModelFile read_replay_model(const std::filesystem::path& path) {
  auto const json = read_replay_model_json(path);
  try {
    ReplayModelFile out{replay_model_from_json(json), std::nullopt};
    if (json.contains("cu_num")) out.cu_num = json.at("cu_num").get<std::int64_t>();
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not a replay model: {}", path.string(), e.what()));
  }
}

std::string replay_model_identity_digest(const std::filesystem::path& path) {
  auto json = read_replay_model_json(path);
  json.erase("setup_failure");
  return sha256_hex(json.dump());
}

ReplaySampler::ReplaySampler(ReplayModel model)
    : m_model(std::move(model)), m_state(m_model.seed) {}

void ReplaySampler::misbehave_if_asked(const std::string& pair, std::string_view where) const {
  if (auto const c = m_model.crash_pairs.find(pair); c != m_model.crash_pairs.end() && c->second == where) {
    std::fprintf(stderr, "replay model: %s crashes in %s (crash_pairs): aborting\n", pair.c_str(),
                 c->second.c_str());
    // A simulated crash leaves no core file behind.
    rlimit const none{0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    std::abort();
  }
  if (auto const h = m_model.hang_pairs.find(pair); h != m_model.hang_pairs.end() && h->second == where) {
    std::fprintf(stderr, "replay model: %s hangs in %s (hang_pairs)\n", pair.c_str(),
                 h->second.c_str());
    for (;;) ::pause();
  }
}

double ReplaySampler::normal() {
  // SplitMix64 for uniforms, Box-Muller for the normal: std::normal_distribution differs
  // between standard libraries, and tests assert on concrete outcomes of a seed.
  auto next = [this] {
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);  // (0, 1)
  };
  double const u1 = next();
  double const u2 = next();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

void ReplaySampler::begin_bucket(const BucketPlan& bucket) {
  m_log.push_back(fmt::format("begin_bucket token={}", bucket.key.token));
  // Each bucket's samples come from its own stream (the model's seed and the bucket's list
  // line), so a bucket replays alike whichever buckets ran before it: a shard of a run
  // (`tune --shard`) decides its buckets as the whole run does.
  m_state = m_model.seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(bucket.line + 1));
  m_in_block = false;
  for (auto const& [label, pair] : m_alive) m_log.push_back("release " + label + "=" + pair);
  m_alive.clear();
  m_kept = false;
  if (auto const f = m_model.setup_failure.find(bucket.key.token); f != m_model.setup_failure.end()) {
    throw Error(fmt::format("bucket token={} (line {}): {} (replay model setup_failure)",
                            bucket.key.token, bucket.line, f->second));
  }
}

Preparation ReplaySampler::prepare(const TunePair& pair) {
  auto const name = pair.name();
  m_log.push_back("prepare " + name);
  misbehave_if_asked(name, "prepare");
  auto const it = m_model.preparation.find(name);
  return it == m_model.preparation.end() ? Preparation{} : it->second;
}

// The model's verification entry decides both depths: a pair the model marks wrong fails its
// quick check already (as a real wrong kernel fails at its own M), so it is never timed.
Verification ReplaySampler::quick_check(const TunePair& pair) {
  auto const name = pair.name();
  m_log.push_back("quick_check " + name);
  misbehave_if_asked(name, "quick_check");
  auto const it = m_model.verification.find(name);
  if (it != m_model.verification.end()) return it->second;
  Verification v;
  v.passed = true;
  v.detail = "quick check passed (replay model)";
  v.checks = 1;
  return v;
}

Verification ReplaySampler::verify(const TunePair& pair, const TunePair& /*baseline*/) {
  auto const name = pair.name();
  m_log.push_back("verify " + name);
  misbehave_if_asked(name, "verify");
  if (auto const full = m_model.full_verification.find(name); full != m_model.full_verification.end()) {
    return full->second;
  }
  auto const it = m_model.verification.find(name);
  if (it != m_model.verification.end()) return it->second;
  Verification v;
  v.passed = true;
  v.detail = "all checks passed (replay model)";
  v.checks = 1;
  return v;
}

void ReplaySampler::begin_block(const BlockSpec& block) {
  std::string line = fmt::format("begin_block {} {} {}", to_string(block.phase), block.attempt,
                                 block.index);
  for (auto const& arm : block.arms) line += " " + arm.label + "=" + arm.pair.name();
  // A model's times do not depend on the block's tokens (BlockSpec::M); the log records them.
  if (block.M) line += fmt::format(" M={}", *block.M);
  m_log.push_back(std::move(line));
  // Which arms a GpuSampler would build and which it would keep (BlockSpec::keep_arms): the
  // kept ones keep their placement offset too (same buffers, same graph).
  auto identity = [](const Arm& a) {
    return a.delay_ns ? fmt::format("{}@{}ns", a.pair.name(), *a.delay_ns) : a.pair.name();
  };
  bool const reuse = block.keep_arms && m_kept && m_in_block &&
                     block.M.value_or(0) == m_block.M.value_or(0) && block.units == m_block.units &&
                     block.repeats == m_block.repeats;
  std::map<std::string, std::string> alive;
  std::vector<bool> kept(block.arms.size(), false);
  for (std::size_t i = 0; i < block.arms.size(); ++i) {
    auto const& a = block.arms[i];
    auto const it = m_alive.find(a.label);
    kept[i] = reuse && it != m_alive.end() && it->second == identity(a);
  }
  for (auto const& [label, pair] : m_alive) {
    bool const named = std::any_of(block.arms.begin(), block.arms.end(), [&](const Arm& a) {
      return a.label == label && identity(a) == pair;
    });
    if (!reuse || !named) m_log.push_back("release " + label + "=" + pair);
  }
  for (std::size_t i = 0; i < block.arms.size(); ++i) {
    if (kept[i]) continue;  // not built again: nothing to observe, nothing to crash
    if (m_build_observer) m_build_observer(block.arms[i].label);
    misbehave_if_asked(block.arms[i].pair.name(), "build");
  }
  for (std::size_t i = 0; i < block.arms.size(); ++i) {
    auto const& a = block.arms[i];
    alive[a.label] = identity(a);
    if (kept[i]) {
      m_log.push_back(fmt::format("reuse {} {}={}", to_string(block.phase), a.label, identity(a)));
    } else {
      auto const warmup =
          block.warmup_replays ? std::to_string(*block.warmup_replays) : std::string("default");
      m_log.push_back(fmt::format("build {} {}={} warmup={} repeats={}", to_string(block.phase),
                                  a.label, identity(a), warmup,
                                  block.repeats.value_or(m_model.repeats)));
    }
  }
  m_alive = std::move(alive);
  m_kept = block.keep_arms;
  m_block = block;
  m_in_block = true;
  // Fresh placement for every arm built anew; a kept arm keeps its offset. Every arm draws
  // from the stream alike, so a kept block leaves the later samples' stream unchanged.
  auto const previous = std::move(m_block_offset);
  m_block_offset.clear();
  for (std::size_t i = 0; i < block.arms.size(); ++i) {
    double offset = m_model.block_sd * normal();
    if (i < m_model.build_order_bias.size()) offset += m_model.build_order_bias[i];
    if (kept[i]) offset = previous.at(block.arms[i].label);
    m_block_offset[block.arms[i].label] = offset;
  }
}

void ReplaySampler::release_arm(std::string_view arm) {
  auto const it = m_alive.find(std::string(arm));
  if (it == m_alive.end()) return;
  m_log.push_back("release " + it->first + "=" + it->second);
  m_alive.erase(it);
  std::erase_if(m_block.arms, [&](const Arm& a) { return a.label == arm; });
}

double ReplaySampler::sample_us(std::string_view arm_label, TimedUnit unit) {
  std::string const label(arm_label);
  m_log.push_back(fmt::format("sample {} {} {}", to_string(m_block.phase), label, to_string(unit)));
  if (!m_in_block) throw Error("ReplaySampler: sample_us before begin_block");
  if (m_model.sample_delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_model.sample_delay_ms));
  }
  const Arm* arm = nullptr;
  for (auto const& a : m_block.arms) {
    if (a.label == label) arm = &a;
  }
  if (!arm) throw Error(fmt::format("ReplaySampler: no arm '{}' in this block", label));
  auto const name = arm->pair.name();
  misbehave_if_asked(name, "sample");
  if (auto const f = m_model.sample_failure.find(name); f != m_model.sample_failure.end()) {
    throw SamplerError(f->second, label, fmt::format("{}: {} (replay model)", name,
                                                     to_string(f->second)));
  }
  auto const key = fmt::format("{}:{}", to_string(m_block.phase), label);
  if (auto const r = m_model.recorded.find(key); r != m_model.recorded.end()) {
    auto& pos = m_recorded_pos[key];
    if (pos >= r->second.size()) {
      throw Error(fmt::format("ReplaySampler: recorded samples for '{}' ran out", key));
    }
    return r->second[pos++];
  }
  auto const mean_it = m_model.mean_us.find(name);
  double mean = mean_it == m_model.mean_us.end() ? m_model.default_mean_us : mean_it->second;
  if (unit == TimedUnit::stage1) mean *= m_model.stage1_fraction;
  if (unit == TimedUnit::stage2) mean *= 0.95 - m_model.stage1_fraction;
  double rel = m_block_offset[label];
  if (auto const b = m_model.arm_bias.find(label); b != m_model.arm_bias.end()) rel += b->second;
  if (m_block.phase == Phase::confirm) {
    if (auto const p = m_model.confirm_block_bias.find(name); p != m_model.confirm_block_bias.end()) {
      if (auto const b = p->second.find(m_block.index); b != p->second.end()) rel += b->second;
    }
  }
  rel += m_model.noise * normal();
  // calibrate's known slowdown: a fixed spin after stage two, untouched by placement or noise
  // (the spin waits on a clock, not on memory). The stage-one unit does not contain it.
  double const delay_us = arm->delay_ns && unit != TimedUnit::stage1
                              ? static_cast<double>(*arm->delay_ns) / 1000.0
                              : 0.0;
  return mean * (1.0 + rel) + delay_us;
}

}  // namespace moetune::measure
