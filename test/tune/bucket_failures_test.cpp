// Buckets that cannot be tuned through no candidate's fault: a baseline that fails (its
// candidates end baseline_failed, never the baseline's own kind) and a bucket whose set-up
// throws (setup_failed, nothing measured, the sampler usable for the next bucket).
#include <fstream>
#include <new>

#include <catch2/catch.hpp>

#include "autotune/core/error.hpp"
#include "autotune/tune/failed_buckets.hpp"
#include "autotune/tune/tune_report.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::baseline_name;
using moetune::test::count_prefix;
using moetune::test::make_bucket;
using moetune::test::quiet_model;

namespace {

// Every pipeline of the result has `outcome` and a reason containing `text`.
void check_all_pairs(const BucketResult& r, Outcome outcome, const std::string& text) {
  REQUIRE_FALSE(r.pairs.empty());
  for (auto const& p : r.pairs) {
    INFO(p.pair.name());
    CHECK(p.outcome == outcome);
    CHECK_THAT(p.reason, Catch::Contains(text));
  }
}

// A sampler whose set-up fails the way a GPU's can (out of host memory) for one token.
class BadAllocOnce final : public Sampler {
 public:
  BadAllocOnce(ReplayModel model, std::int64_t token) : m_inner(std::move(model)), m_token(token) {}
  void begin_bucket(const BucketPlan& b) override {
    if (b.key.token == m_token) throw std::bad_alloc();
    m_inner.begin_bucket(b);
  }
  Preparation prepare(const TunePair& p) override { return m_inner.prepare(p); }
  Verification quick_check(const TunePair& p) override { return m_inner.quick_check(p); }
  Verification verify(const TunePair& p, const TunePair& b) override { return m_inner.verify(p, b); }
  void begin_block(const BlockSpec& s) override { m_inner.begin_block(s); }
  double sample_us(std::string_view arm, TimedUnit unit) override { return m_inner.sample_us(arm, unit); }
  void release_arm(std::string_view arm) override { m_inner.release_arm(arm); }
  int repeats() const override { return m_inner.repeats(); }

 private:
  ReplaySampler m_inner;
  std::int64_t m_token;
};

}  // namespace

TEST_CASE("a baseline that fails verification: its candidates are baseline_failed, not "
          "wrong_result", "[tune]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = quiet_model();
  Verification bad;
  bad.passed = false;
  bad.detail = "y differs from the reference at row 3";
  bad.failure = Outcome::wrong_result;
  model.verification[baseline_name(b)] = bad;
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});

  CHECK(r.status() == BucketStatus::baseline_failed);
  REQUIRE(r.baseline_failure.has_value());
  CHECK(r.baseline_failure->kind == Outcome::wrong_result);
  check_all_pairs(r, Outcome::baseline_failed,
                  "the baseline " + baseline_name(b) + " failed (wrong_result): verification: y "
                  "differs from the reference at row 3");
  CHECK_THAT(r.summary, Catch::StartsWith("baseline failed: wrong_result: verification"));
  CHECK_FALSE(r.qualified);
  // Nothing was timed against a baseline that is wrong.
  CHECK(count_prefix(sampler.log(), "begin_block") == 0);
  // The pruned candidate keeps its rule.
  CHECK(r.outcome_of(r.slots.back()) == Outcome::pruned);

  // The report says so, and summary.md's failure section names the bucket.
  auto const json = to_json(r);
  CHECK(json.at("status") == "baseline_failed");
  CHECK(json.at("baseline_failure").at("kind") == "wrong_result");
  auto const failed = failed_bucket(json);
  REQUIRE(failed.has_value());
  CHECK(failed->candidates_not_measured == 3);
  auto const md = failed_buckets_markdown(std::span<const FailedBucket>(&*failed, 1));
  CHECK_THAT(md, Catch::Contains("**baseline failed** in bucket token=8 (line 2): wrong_result: "
                                 "verification: y differs"));
  CHECK_THAT(md, Catch::Contains("3 candidate(s) were not measured"));
}

TEST_CASE("a baseline that faults while screened: open candidates are baseline_failed", "[tune]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = quiet_model();
  model.sample_failure[baseline_name(b)] = Outcome::launch_error;
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  CHECK(r.status() == BucketStatus::baseline_failed);
  CHECK(r.baseline_failure->kind == Outcome::launch_error);
  check_all_pairs(r, Outcome::baseline_failed, "failed (launch_error)");
}

TEST_CASE("a decided bucket has no failure section", "[tune]") {
  auto const b = make_bucket(8, 6, 2);
  ReplaySampler sampler(quiet_model());
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  CHECK(r.status() == BucketStatus::not_qualified);
  CHECK(to_json(r).at("status") == "not_qualified");
  CHECK_FALSE(failed_bucket(to_json(r)).has_value());
  CHECK(failed_buckets_markdown({}).empty());
}

TEST_CASE("a bucket whose set-up throws ends setup_failed, and the next bucket is measured",
          "[tune]") {
  auto const b8 = make_bucket(8, 6, 3);
  auto const b16 = make_bucket(16, 16, 3);
  auto model = quiet_model();
  model.setup_failure[8] = "cannot allocate 4 GiB of weights";
  ReplaySampler sampler(model);

  auto const r8 = tune_bucket(b8, sampler, ProtocolOptions{});
  CHECK(r8.status() == BucketStatus::setup_failed);
  REQUIRE(r8.setup_failure.has_value());
  CHECK_THAT(*r8.setup_failure, Catch::Contains("bucket token=8") &&
                                    Catch::Contains("cannot allocate 4 GiB of weights"));
  check_all_pairs(r8, Outcome::setup_failed, "the bucket's set-up failed");
  CHECK_THAT(r8.summary, Catch::StartsWith("set-up failed: "));
  CHECK(sampler.log().size() == 1);  // begin_bucket only: nothing prepared, nothing timed

  auto const r16 = tune_bucket(b16, sampler, ProtocolOptions{});
  CHECK(r16.status() == BucketStatus::not_qualified);
  CHECK_FALSE(r16.setup_failure.has_value());

  auto const failed = failed_bucket(to_json(r8));
  REQUIRE(failed.has_value());
  CHECK(failed->status == BucketStatus::setup_failed);
  CHECK_THAT(failed_buckets_markdown(std::span<const FailedBucket>(&*failed, 1)),
             Catch::Contains("**set-up failed** in bucket token=8") &&
                 Catch::Contains("`tune --resume` measures it again"));
}

TEST_CASE("std::bad_alloc while setting a bucket up is that bucket's setup_failed", "[tune]") {
  auto const b = make_bucket(8, 6, 2);
  BadAllocOnce sampler(quiet_model(), 8);
  auto const r = tune_bucket(b, sampler, ProtocolOptions{});
  CHECK(r.status() == BucketStatus::setup_failed);
  check_all_pairs(r, Outcome::setup_failed, "bad_alloc");
}

TEST_CASE("replay model: setup_failure is read by token and left out of the journal identity",
          "[tune]") {
  auto const dir = std::filesystem::temp_directory_path() / "moetune_setup_failure_test";
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  auto const plain = write("plain.json", R"({"seed": 3, "noise": 0.01})");
  auto const faulty =
      write("faulty.json", R"({"setup_failure": {"128": "no worker"}, "seed": 3, "noise": 0.01})");
  auto const other = write("other.json", R"({"seed": 4, "noise": 0.01})");
  auto const bad = write("bad.json", R"({"setup_failure": {"x16": "no worker"}})");

  CHECK(read_replay_model(faulty).model.setup_failure.at(128) == "no worker");
  CHECK(replay_model_identity_digest(plain) == replay_model_identity_digest(faulty));
  CHECK(replay_model_identity_digest(plain) != replay_model_identity_digest(other));
  CHECK_THROWS_WITH(read_replay_model(bad), Catch::Contains("setup_failure.x16"));
  std::filesystem::remove_all(dir);
}
