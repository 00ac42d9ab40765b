// Kept screen arms (#15) on replayed samples: every arm of a bucket's screen is built once
// (the baseline's for all screen blocks), warmed with the screen's own warm-up count, released
// as soon as its candidate is raced out or its block is done; selection and confirmation build
// fresh arms and never see a screen sample. The ReplaySampler logs what a GpuSampler would
// build, reuse and release ("build PHASE LABEL=PAIR ...", "reuse ...", "release ...").
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::baseline_name;
using moetune::test::count_prefix;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::quiet_model;
using moetune::test::record;

namespace {

bool starts_with(const std::string& line, const std::string& prefix) {
  return line.rfind(prefix, 0) == 0;
}

// The index of the first log line starting with `prefix`, or the log's size.
std::size_t first_line(const std::vector<std::string>& log, const std::string& prefix) {
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (starts_with(log[i], prefix)) return i;
  }
  return log.size();
}

// The label of a "build/reuse/release ... LABEL=PAIR ..." line.
std::string arm_label(const std::string& line) {
  auto const eq = line.find('=');
  auto const space = line.rfind(' ', eq);
  return line.substr(space + 1, eq - space - 1);
}

}  // namespace

TEST_CASE("kept screen arms: each arm is built once per bucket, a raced-out arm is released at "
          "once, nothing is kept past the screen",
          "[tune]") {
  auto const b = make_bucket(8, 6, 4);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;   // the winner
  model.mean_us[pipeline_name(b, 1)] = 130.0;  // raced out in screen block 0
  model.mean_us[pipeline_name(b, 2)] = 101.0;  // screened to the end, within the margin
  model.mean_us[pipeline_name(b, 3)] = 125.0;  // raced out in screen block 1
  ProtocolOptions opt;
  opt.screen_block_size = 2;  // blocks {0, 1} and {2, 3}: the baseline serves both
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, opt);
  REQUIRE(r.qualified);
  CHECK(r.pairs[*r.winner].pair.name() == pipeline_name(b, 0));
  auto const& log = sampler.log();

  // Two screen blocks, the baseline built in the first and reused in the second.
  CHECK(count_prefix(log, "begin_block screen") == 2);
  CHECK(count_prefix(log, "build screen baseline=") == 1);
  CHECK(count_prefix(log, "reuse screen baseline=") == 1);
  CHECK(count_prefix(log, "reuse ") == 1);  // no other phase reuses anything
  auto const select = first_line(log, "begin_block select");
  REQUIRE(select < log.size());
  std::vector<std::string> const screen_log(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(select));
  for (std::size_t i = 0; i < 4; ++i) {
    auto const name = pipeline_name(b, i);
    CAPTURE(name);
    CHECK(count_prefix(log, "build screen " + name + "=") == 1);  // once per bucket
    CHECK(count_prefix(screen_log, "release " + name + "=") == 1);  // released in the screen
  }
  // Screen arms get the screen's warm-ups (1) and launches per sample (4); every other phase
  // the sampler's own.
  for (auto const& line : log) {
    if (!starts_with(line, "build ")) continue;
    CAPTURE(line);
    bool const screen = starts_with(line, "build screen ");
    CHECK((line.find(" warmup=1 repeats=4") != std::string::npos) == screen);
    CHECK((line.find(" warmup=default repeats=16") != std::string::npos) == !screen);
  }

  // A raced-out candidate: two samples, released right after the race decision (the block's
  // baseline sampled twice so far), never sampled again.
  struct Raced {
    std::size_t pair;
    std::size_t baseline_samples_before_release;
  };
  for (auto const [pair, before] : {Raced{1, 2}, Raced{3, 5 + 2}}) {
    auto const name = pipeline_name(b, pair);
    CAPTURE(name);
    auto const& p = record(r, name);
    CHECK(p.screen_stopped);
    CHECK(p.screen_us.size() == 2);
    auto const release = first_line(log, "release " + name + "=");
    REQUIRE(release < log.size());
    std::vector<std::string> const head(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(release));
    std::vector<std::string> const tail(log.begin() + static_cast<std::ptrdiff_t>(release), log.end());
    CHECK(count_prefix(head, "sample screen baseline ") == before);
    CHECK(count_prefix(head, "sample screen " + name + " ") == 2);
    CHECK(count_prefix(tail, "sample screen " + name + " ") == 0);
  }

  // Bounded memory: at most a block's candidates and the baseline are alive in the screen,
  // and nothing screened is alive when the finalists are verified and selection begins.
  std::set<std::string> alive;
  std::size_t most = 0;
  auto const finalist_verify = first_line(log, "verify " + pipeline_name(b, 0));
  REQUIRE(finalist_verify < select);
  for (std::size_t i = 0; i < select; ++i) {
    auto const& line = log[i];
    if (i == finalist_verify) CHECK(alive.empty());
    if (starts_with(line, "build ") || starts_with(line, "reuse ")) alive.insert(arm_label(line));
    if (starts_with(line, "release ")) alive.erase(arm_label(line));
    most = std::max(most, alive.size());
  }
  CHECK(alive.empty());
  CHECK(most == 3);  // screen_block_size + the baseline
}

TEST_CASE("kept screen arms: decisions are made, confirmation arms and samples are fresh and "
          "disjoint from the screen's",
          "[tune]") {
  auto const b = make_bucket(8, 6, 3);
  auto model = quiet_model();
  model.mean_us[pipeline_name(b, 0)] = 97.0;
  model.mean_us[pipeline_name(b, 1)] = 130.0;
  ProtocolOptions opt;
  opt.screen_repeats = 8;  // the screen's graphs only; selection and confirmation keep R = 16
  ReplaySampler sampler(model);
  auto const r = tune_bucket(b, sampler, opt);
  REQUIRE(r.qualified);
  CHECK(r.pairs[*r.winner].pair.name() == pipeline_name(b, 0));
  CHECK(record(r, pipeline_name(b, 1)).outcome == Outcome::slower);
  CHECK(record(r, pipeline_name(b, 2)).outcome == Outcome::slower);
  REQUIRE(r.manifest);
  CHECK(r.manifest->repeats == 16);
  REQUIRE(r.attempts.size() == 1);
  CHECK(r.attempts[0].rounds.size() == 36);  // confirmation unchanged: 6 blocks x 6 rounds

  auto const& log = sampler.log();
  for (auto const& line : log) {
    if (!starts_with(line, "build ")) continue;
    CAPTURE(line);
    CHECK((line.find(" repeats=8") != std::string::npos) == starts_with(line, "build screen "));
  }
  // Every confirmation block releases what came before and builds its three arms itself.
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (!starts_with(log[i], "begin_block confirm")) continue;
    std::size_t k = i + 1;
    while (k < log.size() && starts_with(log[k], "release ")) ++k;
    REQUIRE(k + 3 <= log.size());
    for (std::size_t n = 0; n < 3; ++n) CHECK(starts_with(log[k + n], "build confirm "));
  }
  // The identity of samples: no confirmation time is a screen or selection time.
  std::set<double> chosen_on(r.baseline_screen_us.begin(), r.baseline_screen_us.end());
  chosen_on.insert(r.baseline_select_us.begin(), r.baseline_select_us.end());
  for (auto const& p : r.pairs) {
    chosen_on.insert(p.screen_us.begin(), p.screen_us.end());
    chosen_on.insert(p.select_us.begin(), p.select_us.end());
  }
  CHECK(chosen_on.size() > 20);
  std::size_t confirm_samples = 0;
  for (auto const& round : r.attempts[0].rounds) {
    for (double const t : {round.baseline_us, round.candidate_us, round.control_us}) {
      CHECK(chosen_on.count(t) == 0);
      ++confirm_samples;
    }
  }
  CHECK(confirm_samples == 3 * 36);
  CHECK(count_prefix(log, "sample confirm ") == 3 * 36);
}

TEST_CASE("kept screen arms: the screen's counts are checked", "[tune]") {
  auto const b = make_bucket(8, 6, 1);
  ReplaySampler sampler(quiet_model());
  ProtocolOptions opt;
  opt.screen_warmup_replays = -1;
  CHECK_THROWS_AS(tune_bucket(b, sampler, opt), std::invalid_argument);
  opt.screen_warmup_replays = 0;  // no warm-up at all is allowed: racing reads the fastest
  opt.screen_repeats = -1;
  CHECK_THROWS_AS(tune_bucket(b, sampler, opt), std::invalid_argument);
}
