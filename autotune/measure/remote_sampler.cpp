#include "autotune/measure/remote_sampler.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "autotune/core/error.hpp"
#include "autotune/measure/sampler_wire.hpp"

namespace moetune::measure {

using nlohmann::json;

namespace {

// The moment a reply is due: `limit` seconds from now on the worker's clock.
WorkerProcess::Clock::time_point deadline_after(double limit) {
  return WorkerProcess::Clock::now() +
         std::chrono::duration_cast<WorkerProcess::Clock::duration>(std::chrono::duration<double>(limit));
}

// A worker that said it will exit (after a GPU fault) or whose stdout closed gets this long
// to finish before it is killed: enough to flush its logs, never long enough to stall a run.
constexpr std::chrono::milliseconds kExitGrace{5000};

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

RemoteSampler::RemoteSampler(std::vector<std::string> worker_argv, WatchdogOptions watchdog)
    : m_argv(std::move(worker_argv)), m_watchdog(watchdog) {
  if (m_argv.empty()) throw Error("RemoteSampler: empty worker command");
}

RemoteSampler::~RemoteSampler() {
  // Closing its stdin lets an idle worker leave on its own (and release the GPU cleanly).
  if (m_worker) m_worker->wait_exit(kExitGrace);
}

std::optional<long> RemoteSampler::worker_pid() const {
  if (!m_worker || !m_worker->running()) return std::nullopt;
  return static_cast<long>(m_worker->pid());
}

void RemoteSampler::worker_lost(const std::string& method, Seconds limit,
                                const std::string& blame, bool timed_out) {
  long const pid = m_worker->pid();
  // Inside begin_block the worker's last "building" event names the arm at fault.
  std::string const who = method == "begin_block" && !m_building.empty() ? m_building : blame;
  std::string message;
  if (timed_out) {
    m_worker->kill();
    message = fmt::format("no answer to {} within {:g} s: killed worker pid {}", method, limit,
                          pid);
  } else {
    auto const how = m_worker->wait_exit(kExitGrace);
    auto const tail = m_worker->stderr_tail();
    message = fmt::format("worker pid {} died during {}: {}{}", pid, method, how,
                          tail.empty() ? "" : "; its last output: " + tail);
  }
  spdlog::warn("{}{}", who.empty() ? "" : who + ": ", message);
  m_worker.reset();
  m_bucket_sent = m_block_sent = false;
  throw SamplerError(timed_out ? Outcome::timeout : Outcome::launch_error, who, message);
}

void RemoteSampler::start_worker(const std::string& blame) {
  m_worker = std::make_unique<WorkerProcess>(m_argv);
  ++m_started;
  m_bucket_sent = m_block_sent = false;
  Seconds const limit = m_watchdog.limit(m_watchdog.setup_s);
  auto const deadline = deadline_after(limit);
  std::string line;
  for (;;) {
    auto const r = m_worker->read_line(line, deadline);
    if (r != WorkerProcess::Read::line) worker_lost("start", limit, blame, r == WorkerProcess::Read::timeout);
    auto const j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.value("event", "") == "ready") {
      m_repeats = j.at("repeats").get<int>();
      spdlog::debug("worker pid {} ready", m_worker->pid());
      return;
    }
  }
}

BlockSpec RemoteSampler::remaining_block() const {
  auto spec = *m_block;
  std::erase_if(spec.arms, [&](const Arm& a) { return m_failed_arms.contains(a.label); });
  return spec;
}

void RemoteSampler::ensure_worker(const std::string& blame) {
  for (;;) {
    if (!m_worker) start_worker(blame);
    try {
      if (m_bucket && !m_bucket_sent) {
        (void)exchange("begin_bucket", {{"bucket", *m_bucket}}, m_watchdog.limit(m_watchdog.setup_s),
                       blame);
        m_bucket_sent = true;
      }
      if (m_block && !m_block_sent) {
        auto const spec = remaining_block();
        if (!spec.arms.empty()) {
          m_building.clear();
          (void)exchange("begin_block", {{"block", wire::to_json(spec)}},
                         m_watchdog.limit(m_watchdog.block_s), spec.arms.front().label);
        }
        m_block_sent = true;
      }
      return;
    } catch (const SamplerError& e) {
      // Rebuilding the block failed on another arm than the one asked for: remember that
      // arm's failure for when it is sampled, and rebuild without it on a fresh worker.
      bool const other_arm =
          m_block && !m_block_sent && e.arm() != blame && !m_failed_arms.contains(e.arm()) &&
          std::any_of(m_block->arms.begin(), m_block->arms.end(),
                      [&](const Arm& a) { return a.label == e.arm(); });
      if (!other_arm) throw;
      m_failed_arms.emplace(e.arm(), e);
      m_worker.reset();  // kills it if it still runs: its block is half built
      m_bucket_sent = m_block_sent = false;
    }
  }
}

json RemoteSampler::exchange(const std::string& method, const json& params, Seconds limit,
                             const std::string& blame) {
  long const id = m_next_id++;
  if (!m_worker->send(dump(json{{"id", id}, {"method", method}, {"params", params}}))) {
    worker_lost(method, limit, blame, false);
  }
  auto const deadline = deadline_after(limit);
  std::string line;
  for (;;) {
    auto const r = m_worker->read_line(line, deadline);
    if (r != WorkerProcess::Read::line) worker_lost(method, limit, blame, r == WorkerProcess::Read::timeout);
    auto const answer = json::parse(line, nullptr, false);
    if (answer.is_discarded() || !answer.is_object()) {
      spdlog::warn("worker pid {}: not a protocol line: {}", m_worker->pid(), line);
      continue;
    }
    if (answer.value("event", "") == "building") {
      m_building = answer.value("arm", "");
      continue;
    }
    if (!answer.contains("id") || answer.at("id") != id) continue;
    std::string left;  // how a worker that said it leaves ended, for the reason
    if (answer.value("exit", false)) {
      // The worker answered and leaves (a GPU fault may have poisoned its context): reap it;
      // the next call starts a fresh one.
      left = fmt::format(" (worker pid {} {} after reporting it; a fresh worker continues)",
                         m_worker->pid(), m_worker->wait_exit(kExitGrace));
      spdlog::info("after a launch error{}", left);
      m_worker.reset();
      m_bucket_sent = m_block_sent = false;
    }
    if (answer.contains("error")) {
      auto const& e = answer.at("error");
      if (e.value("type", "") == "sampler") {
        auto const err = wire::sampler_error_from_json(e);
        throw SamplerError(err.kind(), err.arm(), err.what() + left);
      }
      throw Error(fmt::format("worker: {} failed: {}", method, e.value("message", "?")));
    }
    return answer.value("result", json());
  }
}

json RemoteSampler::call(const std::string& method, json params, Seconds limit,
                         const std::string& blame) {
  ensure_worker(blame);
  return exchange(method, params, limit, blame);
}

void RemoteSampler::begin_bucket(const BucketPlan& bucket) {
  m_bucket = wire::to_json(bucket);
  m_bucket_sent = false;
  m_block.reset();
  m_block_sent = false;
  m_failed_arms.clear();
  m_last_us.clear();
  // Set up now, not with the next call: a failure here (weights that do not fit, a worker
  // that cannot start or dies setting up) is the bucket's set-up failure, which the protocol
  // turns into setup_failed (not journaled, retried by --resume) — sent lazily it would be
  // blamed on whatever ran first, the baseline. After a worker is replaced later, the bucket
  // is sent again with the next call, as before.
  try {
    ensure_worker("the bucket's set-up");
  } catch (const SamplerError& e) {
    throw Error(fmt::format("setting up bucket token={} in a worker failed: {}",
                            bucket.key.token, e.what()));
  }
}

Preparation RemoteSampler::prepare(const TunePair& pair) {
  try {
    return wire::preparation_from_json(
        call("prepare", {{"pair", wire::to_json(pair)}}, m_watchdog.limit(m_watchdog.setup_s),
             pair.name()));
  } catch (const SamplerError& e) {
    return {e.kind(), e.what()};
  }
}

Verification RemoteSampler::checked(const std::string& method, json params,
                                    const std::string& pair) {
  try {
    return wire::verification_from_json(
        call(method, std::move(params), m_watchdog.limit(m_watchdog.verify_s), pair));
  } catch (const SamplerError& e) {
    Verification v;
    v.passed = false;
    v.failure = e.kind();
    v.detail = e.what();
    return v;
  }
}

Verification RemoteSampler::quick_check(const TunePair& pair) {
  return checked("quick_check", {{"pair", wire::to_json(pair)}}, pair.name());
}

Verification RemoteSampler::verify(const TunePair& pair, const TunePair& baseline) {
  return checked("verify", {{"pair", wire::to_json(pair)}, {"baseline", wire::to_json(baseline)}},
                 pair.name());
}

void RemoteSampler::begin_block(const BlockSpec& block) {
  m_block.reset();
  m_block_sent = false;
  m_failed_arms.clear();
  m_last_us.clear();
  m_building.clear();
  (void)call("begin_block", {{"block", wire::to_json(block)}},
             m_watchdog.limit(m_watchdog.block_s),
             block.arms.empty() ? std::string() : block.arms.front().label);
  m_block = block;
  m_block_sent = m_worker != nullptr;
}

double RemoteSampler::sample_us(std::string_view arm_view, TimedUnit unit) {
  std::string const arm(arm_view);
  if (auto const f = m_failed_arms.find(arm); f != m_failed_arms.end()) throw f->second;
  auto const key = arm + "/" + std::string(to_string(unit));
  Seconds limit = m_watchdog.sample_floor_s;
  if (auto const last = m_last_us.find(key); last != m_last_us.end()) {
    limit = std::max(limit, m_watchdog.sample_factor * last->second * 1e-6);
  }
  limit = m_watchdog.limit(limit);
  try {
    double const us = wire::number_from_json(
        call("sample_us", {{"arm", arm}, {"unit", std::string(to_string(unit))}}, limit, arm));
    m_last_us[key] = us;
    return us;
  } catch (const SamplerError& e) {
    m_failed_arms.emplace(arm, e);
    throw;
  }
}

void RemoteSampler::release_arm(std::string_view arm_view) {
  std::string const arm(arm_view);
  if (m_block) {
    std::erase_if(m_block->arms, [&](const Arm& a) { return a.label == arm; });
  }
  // Without a worker holding the block there is nothing to free: a fresh one builds the block
  // from m_block, which no longer names the arm.
  if (!m_worker || !m_block_sent) return;
  try {
    (void)exchange("release_arm", {{"arm", arm}}, m_watchdog.limit(m_watchdog.sample_floor_s), arm);
  } catch (const SamplerError&) {
    // Freeing an arm that is sampled no more is no measurement: a worker lost here is
    // replaced by the next call, which rebuilds the block without the arm.
  }
}

int RemoteSampler::repeats() const {
  if (m_repeats == 0) {
    // Defined behaviour: the object itself is never const; only this getter is.
    const_cast<RemoteSampler*>(this)->ensure_worker("");
  }
  return m_repeats;
}

}  // namespace moetune::measure
