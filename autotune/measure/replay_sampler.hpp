#pragma once
// A Sampler without a GPU: samples come from a seeded model of the timing (per-pipeline true
// means, per-sample noise, per-block placement offsets, constant per-arm biases such as a
// placement-biased control, per-block biases of one pipeline) or from recorded sequences.
// CI runs the whole qualification protocol on it; every call is logged so tests can assert
// on the order of events (e.g. the manifest precedes the first confirmation sample).
#include <cstdint>
#include <optional>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/measure/sampler.hpp"

namespace moetune::measure {

struct ReplayModel {
  std::uint64_t seed = 1;
  int repeats = 16;
  double default_mean_us = 100;          // pipelines not listed in mean_us
  std::map<std::string, double> mean_us;  // by pair name: the true full-MoE time
  double noise = 0.002;     // relative standard deviation of one sample
  double block_sd = 0.0;    // relative sd of each arm's placement offset, fresh per block
  // By arm label: a constant relative offset in every block (+0.02 = 2 % slower) — what a
  // control built unlike the comparison would show.
  std::map<std::string, double> arm_bias;
  // By build position within a block (0 = built first): a relative offset of whichever arm
  // was built there — an allocation-order placement effect, which a design that always builds
  // the arms in the same order turns into a bias of one arm.
  std::vector<double> build_order_bias;
  // By pair name, then confirmation block index: a relative offset in that block only
  // (a pipeline faster on average but slower in one block).
  std::map<std::string, std::map<int, double>> confirm_block_bias;
  double stage1_fraction = 0.6;  // stage one's share of the full time (stage two: the rest
                                 // minus 5 % for the sort, which neither isolated stage holds)
  std::map<std::string, Preparation> preparation;    // by pair name; default: ready
  std::map<std::string, Verification> verification;  // by pair name; default: passes
  // By pair name: the result of the full gates only (a pair right at its own M that fails a
  // boundary M, say); default: `verification`'s entry.
  std::map<std::string, Verification> full_verification;
  std::map<std::string, Outcome> sample_failure;     // by pair name: sample_us throws this
  // By "PHASE:ARM" (e.g. "confirm:candidate"): recorded samples, served in order before the
  // model is asked; running out is an error.
  std::map<std::string, std::vector<double>> recorded;
  // Wall time each sample_us call sleeps: makes a replayed run slow enough to be killed
  // mid-run (the --resume test). It changes no sample value.
  double sample_delay_ms = 0;
  // By pair name, then where: "prepare", "quick_check", "verify", "build" (begin_block) or
  // "sample". The process really dies there (abort(), no core file) or really hangs (sleeps
  // until killed), so that the isolation of `moe-tune worker` is exercised for real: in a
  // worker the parent sees a dead or silent child; in-process the run ends or hangs, as an
  // unisolated GPU run would. In JSON, an array of names means "sample".
  std::map<std::string, std::string> crash_pairs;
  std::map<std::string, std::string> hang_pairs;
  // By bucket token: begin_bucket throws moetune::Error with this text, as a GPU run does when
  // it cannot allocate the bucket's weights or start its worker (the bucket ends setup_failed
  // and the run goes on). In JSON: {"16": "cannot allocate weights"}.
  std::map<std::int64_t, std::string> setup_failure;
};

// Reads a model from JSON: every field of ReplayModel under its own name; preparation and
// verification entries as {"status": "compile_error", "detail": "..."} and
// {"passed": false, "detail": "...", "max_abs": 0.5, "failure": "wrong_result"}.
[[nodiscard]] ReplayModel replay_model_from_json(const nlohmann::json& json);

// A replay model file as every command reads it (--replay MODEL.json): the model, and the
// machine it simulates if it names one (`cu_num`, for the rows). A malformed file is the
// user's input, not an internal error: moetune::Error naming the file.
struct ReplayModelFile {
  ReplayModel model;
  std::optional<std::int64_t> cu_num;
};
[[nodiscard]] ReplayModelFile read_replay_model(const std::filesystem::path& path);

// The SHA-256 a resumed replay must match (the journal identity): of the model's JSON with
// `setup_failure` removed, so that a run whose bucket failed its set-up can be resumed with
// the fault gone. A set-up fault decides no bucket, so no journaled verdict depends on it.
[[nodiscard]] std::string replay_model_identity_digest(const std::filesystem::path& path);

class ReplaySampler final : public Sampler {
 public:
  explicit ReplaySampler(ReplayModel model);

  void begin_bucket(const BucketPlan& bucket) override;
  [[nodiscard]] Preparation prepare(const TunePair& pair) override;
  [[nodiscard]] Verification quick_check(const TunePair& pair) override;
  [[nodiscard]] Verification verify(const TunePair& pair, const TunePair& baseline) override;
  void begin_block(const BlockSpec& block) override;
  [[nodiscard]] double sample_us(std::string_view arm, TimedUnit unit) override;
  void release_arm(std::string_view arm) override;
  [[nodiscard]] int repeats() const override { return m_model.repeats; }

  // "begin_bucket token=8", "prepare P", "verify P", "begin_block confirm 0 2 baseline=P ...",
  // "sample confirm candidate full": one line per call, in call order. After each
  // begin_block line, one line per arm as a GPU sampler would treat it: "build PHASE LABEL=P
  // warmup=W repeats=R" (built, captured, warmed) or "reuse PHASE LABEL=P" (kept from the
  // previous kept block, BlockSpec::keep_arms); "release LABEL=P" when an arm is dropped by
  // release_arm or by a kept block that does not name it again.
  [[nodiscard]] const std::vector<std::string>& log() const { return m_log; }
  [[nodiscard]] ReplayModel& model() { return m_model; }
  // Called with each arm's label as begin_block builds it (the worker reports it, so a crash
  // or hang while building is blamed on the right arm).
  void set_build_observer(std::function<void(const std::string&)> observer) {
    m_build_observer = std::move(observer);
  }

 private:
  double normal();  // standard normal, deterministic for a seed on every platform
  // crash_pairs / hang_pairs: dies or hangs here if the model says so for this pair.
  void misbehave_if_asked(const std::string& pair, std::string_view where) const;
  std::function<void(const std::string&)> m_build_observer;

  ReplayModel m_model;
  std::uint64_t m_state;
  std::vector<std::string> m_log;
  BlockSpec m_block;
  bool m_in_block = false;
  std::map<std::string, double> m_block_offset;  // by arm label, for the current block
  // Arms alive as a GpuSampler would hold them: label -> pair name (with delay), for the log
  // and for keep_arms; m_kept: the current block was kept.
  std::map<std::string, std::string> m_alive;
  bool m_kept = false;
  std::map<std::string, std::size_t> m_recorded_pos;
};

}  // namespace moetune::measure
