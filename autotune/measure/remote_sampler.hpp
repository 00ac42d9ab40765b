#pragma once
// A Sampler that runs every call in a worker process (`moe-tune worker`), under a watchdog
// (DESIGN.md §7): a candidate that faults (an illegal address loses the GPU context) or hangs
// costs that candidate — launch_error or timeout, with the reason — and the run continues on
// a fresh worker. This process never touches the GPU, so no fault can reach it.
//
// How a failure maps onto the protocol (bucket_tuner.cpp):
//   prepare, quick_check,     a Preparation / Verification with status launch_error or
//   verify                    timeout
//   begin_block, sample_us    SamplerError(kind, arm): the arm being built ("building" events
//                             of the worker say which), or the arm sampled
// Recovery: the next call after a worker died starts a fresh one and replays what it needs:
// begin_bucket(last bucket) and, when a block was in progress, begin_block(last spec) without
// the arms that failed in it (the tuner has closed those candidates and will not sample them
// again). The replacement block is a fresh placement — new buffers, new graph captures — for
// the remaining arms: its samples come from a different placement than the samples taken
// before the failure, exactly the variation between blocks the paired statistics already
// allow for; the pairs sampled before and after stay paired within the same block index.
// A failure of the baseline (or of its control copy) propagates as today: the bucket's
// baseline failure.
//
// begin_bucket sets the bucket up in the worker at once: a worker that cannot start or dies
// while setting a bucket up (weights, the verifier) throws moetune::Error from begin_bucket,
// which the tuner records as the bucket's set-up failure (setup_failed: not journaled, the run
// goes on, --resume retries it). A worker replaced later gets the bucket again with the next
// call.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/core/worker_process.hpp"
#include "autotune/measure/sampler.hpp"

namespace moetune::measure {

// Seconds each call may take before the worker is killed. Generous where a call may compile
// or generate seeded weights; samples are bounded by what the arm took before.
struct WatchdogOptions {
  double setup_s = 300;        // starting a worker, begin_bucket, prepare (may compile)
  double verify_s = 120;        // quick_check and verify
  double block_s = 120;        // begin_block: build and capture every arm
  double sample_floor_s = 10;  // sample_us: max(floor, factor x the arm's last sample)
  double sample_factor = 50;
  double cap_s = 0;            // > 0: no call may take longer than this (`--watchdog`)

  [[nodiscard]] double limit(double seconds) const {
    return cap_s > 0 && cap_s < seconds ? cap_s : seconds;
  }
};

class RemoteSampler final : public Sampler {
 public:
  // `worker_argv`: the command that serves the protocol of sampler_server.hpp on its
  // stdin/stdout (argv[0] a path), e.g. {"/proc/self/exe", "worker", "--backend", "gpu"}.
  RemoteSampler(std::vector<std::string> worker_argv, WatchdogOptions watchdog = {});
  ~RemoteSampler() override;

  void begin_bucket(const BucketPlan& bucket) override;
  [[nodiscard]] Preparation prepare(const TunePair& pair) override;
  [[nodiscard]] Verification quick_check(const TunePair& pair) override;
  [[nodiscard]] Verification verify(const TunePair& pair, const TunePair& baseline) override;
  void begin_block(const BlockSpec& block) override;
  [[nodiscard]] double sample_us(std::string_view arm, TimedUnit unit) override;
  // Tells a running worker; a worker started later rebuilds the block without the arm.
  void release_arm(std::string_view arm) override;
  // From the first worker's greeting: starts one if none has run yet.
  [[nodiscard]] int repeats() const override;

  // The running worker's pid, if one runs; how many were started in all.
  [[nodiscard]] std::optional<long> worker_pid() const;
  [[nodiscard]] int workers_started() const { return m_started; }

 private:
  using Seconds = double;
  void start_worker(const std::string& blame);
  void ensure_worker(const std::string& blame);
  nlohmann::json call(const std::string& method, nlohmann::json params, Seconds limit,
                      const std::string& blame);
  nlohmann::json exchange(const std::string& method, const nlohmann::json& params,
                          Seconds limit, const std::string& blame);
  [[noreturn]] void worker_lost(const std::string& method, Seconds limit,
                                const std::string& blame, bool timed_out);
  [[nodiscard]] BlockSpec remaining_block() const;
  // quick_check and verify: a lost worker is the pair's failed verification.
  [[nodiscard]] Verification checked(const std::string& method, nlohmann::json params,
                                     const std::string& pair);

  std::vector<std::string> m_argv;
  WatchdogOptions m_watchdog;
  std::unique_ptr<WorkerProcess> m_worker;
  int m_started = 0;
  int m_repeats = 0;
  long m_next_id = 1;
  std::string m_building;  // the arm the worker said it is building, within begin_block
  // What a fresh worker must be told before it can serve the next call.
  std::optional<nlohmann::json> m_bucket;  // wire form of the current bucket
  bool m_bucket_sent = false;
  std::optional<BlockSpec> m_block;  // the current block, as the tuner asked for it
  bool m_block_sent = false;
  std::map<std::string, SamplerError> m_failed_arms;  // in the current block, by label
  std::map<std::string, double> m_last_us;  // "arm/unit": last good sample, this block
};

}  // namespace moetune::measure
