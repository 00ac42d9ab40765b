// Worker isolation end to end without a GPU: the protocol drives a RemoteSampler whose
// workers are real `moe-tune worker --backend replay` processes, and the replay model makes a
// chosen pipeline really abort() or really hang inside the worker. Each scenario checks the
// candidate's outcome and reason, that a fresh worker took over, that the other candidates
// were still measured, and how long it took.
#include <chrono>
#include <fstream>
#include <limits>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "autotune/measure/remote_sampler.hpp"
#include "autotune/measure/sampler_wire.hpp"
#include "test/support/test_paths.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::baseline_name;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::record;

namespace {

// The quiet model of tune_fixtures.hpp as JSON, with pipeline 0 truly 3 % faster.
nlohmann::json base_model(const BucketPlan& b) {
  return {{"seed", 7},
          {"default_mean_us", 100},
          {"noise", 0.002},
          {"block_sd", 0.001},
          {"mean_us", {{pipeline_name(b, 0), 97.0}}}};
}

std::vector<std::string> worker_argv(const char* test, const nlohmann::json& model) {
  auto const dir = moetune::test::scratch_dir(test);
  auto const file = dir / "model.json";
  std::ofstream(file) << model.dump(2);
  return {MOETUNE_TUNE_BINARY, "worker", "--backend", "replay", "--replay", file.string()};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("isolated: the protocol runs unchanged in a worker", "[tune][isolation]") {
  auto const b = make_bucket(8, 6, 3);
  RemoteSampler sampler(worker_argv("isolated_plain", base_model(b)));
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  CHECK(r.qualified);
  CHECK(record(r, pipeline_name(b, 0)).outcome == Outcome::qualified);
  CHECK(sampler.workers_started() == 1);
  CHECK(sampler.repeats() == 16);
}

TEST_CASE("isolated: kept screen arms and release_arm run in a worker, decisions as in-process",
          "[tune][isolation]") {
  auto const b = make_bucket(8, 6, 4);
  auto model = base_model(b);
  model["mean_us"][pipeline_name(b, 1)] = 130.0;  // raced out: release_arm goes to the worker
  ProtocolOptions opt;
  opt.screen_block_size = 2;  // two screen blocks: the baseline's arm is kept across them
  RemoteSampler remote(worker_argv("isolated_kept", model));
  auto const r = tune_bucket(b, remote, opt);
  ReplaySampler local(replay_model_from_json(model));
  auto const l = tune_bucket(b, local, opt);
  CHECK(remote.workers_started() == 1);
  REQUIRE(r.qualified);
  REQUIRE(l.qualified);
  CHECK(record(r, pipeline_name(b, 1)).screen_stopped);
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    CHECK(r.pairs[i].outcome == l.pairs[i].outcome);
    CHECK(r.pairs[i].screen_us == l.pairs[i].screen_us);  // the same samples, sample by sample
  }
}

TEST_CASE("isolated: a candidate whose worker aborts while sampled is a launch_error",
          "[tune][isolation]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = base_model(b);
  model["crash_pairs"] = {{pipeline_name(b, 1), "sample"}};
  RemoteSampler sampler(worker_argv("isolated_crash", model));
  auto const t0 = std::chrono::steady_clock::now();
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  CHECK(seconds_since(t0) < 30);

  auto const& crashed = record(r, pipeline_name(b, 1));
  CHECK(crashed.outcome == Outcome::launch_error);
  CHECK_THAT(crashed.reason, Catch::Contains("died during sample_us") &&
                                 Catch::Contains("killed by signal 6") &&
                                 Catch::Contains("crashes in sample"));
  // A fresh worker took over: the block was rebuilt without the crashed arm and the other
  // candidates were measured to the end; the truly faster one still qualifies.
  CHECK(sampler.workers_started() == 2);
  CHECK(record(r, pipeline_name(b, 2)).outcome == Outcome::slower);
  CHECK(record(r, pipeline_name(b, 0)).outcome == Outcome::qualified);
  CHECK_FALSE(record(r, pipeline_name(b, 0)).screen_us.empty());
  CHECK(r.qualified);
}

TEST_CASE("isolated: a candidate that hangs is a timeout and its worker is killed",
          "[tune][isolation]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = base_model(b);
  model["hang_pairs"] = {{pipeline_name(b, 2), "sample"}};
  WatchdogOptions watchdog;
  watchdog.cap_s = 1;
  RemoteSampler sampler(worker_argv("isolated_hang", model), watchdog);
  auto const t0 = std::chrono::steady_clock::now();
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  // One watchdog period, not a hang: the run went on.
  CHECK(seconds_since(t0) < 20);

  auto const& hung = record(r, pipeline_name(b, 2));
  CHECK(hung.outcome == Outcome::timeout);
  CHECK_THAT(hung.reason, Catch::Contains("no answer to sample_us within 1 s: killed worker pid"));
  CHECK(sampler.workers_started() == 2);
  CHECK(record(r, pipeline_name(b, 0)).outcome == Outcome::qualified);
}

TEST_CASE("isolated: a worker that reports a launch error and leaves is replaced",
          "[tune][isolation]") {
  // What a GPU worker does after a fault: answer with the error, then exit.
  auto const b = make_bucket(8, 6, 3);
  auto model = base_model(b);
  model["sample_failure"] = {{pipeline_name(b, 1), "launch_error"}};
  auto argv = worker_argv("isolated_exit", model);
  argv.push_back("--exit-after-launch-error");
  RemoteSampler sampler(argv);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  auto const& failed = record(r, pipeline_name(b, 1));
  CHECK(failed.outcome == Outcome::launch_error);
  CHECK_THAT(failed.reason, Catch::Contains("launch_error (replay model)") &&
                                Catch::Contains("exited with status 3 after reporting it"));
  CHECK(sampler.workers_started() == 2);
  CHECK(record(r, pipeline_name(b, 0)).outcome == Outcome::qualified);
}

TEST_CASE("isolated: the worker pid changes after a crash", "[tune][isolation]") {
  auto b = make_bucket(8, 6, 2);
  auto model = base_model(b);
  model["crash_pairs"] = {{pipeline_name(b, 1), "sample"}};
  RemoteSampler sampler(worker_argv("isolated_pid", model));
  sampler.begin_bucket(b);
  REQUIRE(sampler.prepare(TunePair{b.baseline.stage1, b.baseline.stage2}).ok());
  auto const first = sampler.worker_pid();
  REQUIRE(first.has_value());
  BlockSpec spec;
  spec.phase = Phase::screen;
  spec.arms = {{"baseline", baseline_pair(b)},
               {"a", TunePair{b.candidates[0].config, b.baseline.stage2}},
               {"b", TunePair{b.candidates[1].config, b.baseline.stage2}}};
  sampler.begin_block(spec);
  CHECK(sampler.sample_us("a", TimedUnit::full) > 0);
  try {
    (void)sampler.sample_us("b", TimedUnit::full);
    FAIL("sampling the crashing arm did not throw");
  } catch (const SamplerError& e) {
    CHECK(e.kind() == Outcome::launch_error);
    CHECK(e.arm() == "b");
  }
  CHECK_FALSE(sampler.worker_pid().has_value());  // dead and reaped
  // The next call starts a fresh worker, which rebuilds the block without "b".
  CHECK(sampler.sample_us("baseline", TimedUnit::full) > 0);
  CHECK(sampler.sample_us("a", TimedUnit::full) > 0);
  auto const second = sampler.worker_pid();
  REQUIRE(second.has_value());
  CHECK(*second != *first);
  CHECK(sampler.workers_started() == 2);
  // The failed arm stays failed in this block, without touching the worker again.
  CHECK_THROWS_AS(sampler.sample_us("b", TimedUnit::full), SamplerError);
  CHECK(sampler.workers_started() == 2);
}

TEST_CASE("isolated: a crashing baseline fails its bucket, the next bucket is measured",
          "[tune][isolation]") {
  auto const b1 = make_bucket(8, 6, 2);    // block_m 16
  auto const b2 = make_bucket(1024, 1024, 2);  // 16 tokens per expert: another baseline
  REQUIRE(baseline_name(b1) != baseline_name(b2));
  auto model = base_model(b1);
  model["crash_pairs"] = {{baseline_name(b1), "sample"}};
  RemoteSampler sampler(worker_argv("isolated_baseline", model));
  auto const r1 = tune_bucket(b1, sampler, ProtocolOptions{});
  CHECK_FALSE(r1.qualified);
  CHECK_THAT(r1.summary, Catch::StartsWith("baseline failed") && Catch::Contains("killed by signal 6"));
  // The candidates did nothing wrong: baseline_failed, naming the baseline's launch_error.
  for (auto const& p : r1.pairs) {
    CHECK(p.outcome == Outcome::baseline_failed);
    CHECK_THAT(p.reason, Catch::Contains("failed (launch_error)"));
  }

  auto const r2 = tune_bucket(b2, sampler, ProtocolOptions{});
  CHECK_THAT(r2.summary, !Catch::StartsWith("baseline failed"));
  for (auto const& p : r2.pairs) CHECK(p.outcome != Outcome::launch_error);
  CHECK(sampler.workers_started() == 2);
}

TEST_CASE("isolated: faults outside sampling map to the call's own outcome",
          "[tune][isolation]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = base_model(b);
  model["crash_pairs"] = {{pipeline_name(b, 1), "build"}};
  model["hang_pairs"] = {{pipeline_name(b, 2), "quick_check"}};
  WatchdogOptions watchdog;
  watchdog.cap_s = 1;
  RemoteSampler sampler(worker_argv("isolated_phases", model), watchdog);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  auto const& built = record(r, pipeline_name(b, 1));
  CHECK(built.outcome == Outcome::launch_error);
  CHECK_THAT(built.reason, Catch::Contains("died during begin_block"));
  auto const& checked = record(r, pipeline_name(b, 2));
  CHECK(checked.outcome == Outcome::timeout);
  CHECK_THAT(checked.reason, Catch::Contains("no answer to quick_check within 1 s"));
  CHECK(record(r, pipeline_name(b, 0)).outcome == Outcome::qualified);
  CHECK(sampler.workers_started() == 3);
}

TEST_CASE("sampler wire: blocks, buckets and verifications round-trip", "[tune]") {
  auto const b = make_bucket(8, 6, 2);
  auto const back = wire::bucket_from_json(nlohmann::json::parse(wire::to_json(b).dump()));
  CHECK(back.key == b.key);
  CHECK(back.shape == b.shape);
  CHECK(back.M == b.M);
  CHECK(back.baseline.stage1 == b.baseline.stage1);
  REQUIRE(back.candidates.size() == b.candidates.size());
  CHECK(back.candidates.back().pruned_reason == b.candidates.back().pruned_reason);

  BlockSpec spec;
  spec.phase = Phase::confirm;
  spec.attempt = 1;
  spec.index = 3;
  spec.seed = std::numeric_limits<std::uint64_t>::max();
  spec.arms = {{"baseline", baseline_pair(b), std::nullopt}, {"control", baseline_pair(b), 250}};
  spec.units = {TimedUnit::stage1, TimedUnit::stage2};
  auto const s = wire::block_from_json(nlohmann::json::parse(wire::to_json(spec).dump()));
  CHECK(s.seed == spec.seed);
  CHECK(s.phase == Phase::confirm);
  CHECK(s.attempt == 1);
  REQUIRE(s.arms.size() == 2);
  CHECK(s.arms[1].pair == spec.arms[1].pair);
  CHECK(s.arms[1].delay_ns == std::optional<std::uint64_t>(250));
  CHECK(s.units == spec.units);
  CHECK_FALSE(s.M);  // absent: the bucket's M
  CHECK_FALSE(s.keep_arms);  // absent: a fresh block
  CHECK_FALSE(s.warmup_replays);
  CHECK_FALSE(s.repeats);
  {
    auto kept = spec;  // a screen block: kept arms, its own warm-ups and launches per graph
    kept.keep_arms = true;
    kept.warmup_replays = 0;
    kept.repeats = 8;
    auto const k = wire::block_from_json(nlohmann::json::parse(wire::to_json(kept).dump()));
    CHECK(k.keep_arms);
    CHECK(k.warmup_replays == std::optional<int>(0));
    CHECK(k.repeats == std::optional<int>(8));
  }
  spec.M = 1024;     // the stage-times block at a row's token
  CHECK(wire::block_from_json(nlohmann::json::parse(wire::to_json(spec).dump())).M == std::optional<std::int64_t>(1024));

  Verification v;
  v.max_abs_vs_baseline = std::numeric_limits<double>::infinity();
  v.max_rel = std::numeric_limits<double>::quiet_NaN();
  v.failure = Outcome::timeout;
  auto const w = wire::verification_from_json(nlohmann::json::parse(wire::to_json(v).dump()));
  CHECK(std::isinf(w.max_abs_vs_baseline));
  CHECK(std::isnan(w.max_rel));
  CHECK(w.failure == Outcome::timeout);
}
