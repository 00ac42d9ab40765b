// Rows only from qualified decisions (issue #12): a journaled entry yields its row only when
// its verdict, its report, the winning pipeline's outcome and the row's key all agree with
// the plan bucket it is matched to; otherwise no row and a warning naming the journal line.
#include <catch2/catch.hpp>

#include "autotune/tune/journaled_row.hpp"
#include "autotune/tune/tune_report.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;

namespace {

const RowContext machine{"sm_90", 132};
const std::filesystem::path journal_file = "runs/journal.jsonl";

// Bucket 8 qualifies: a stage one 3 % faster than the baseline.
BucketResult qualified_bucket() {
  auto const b = test::make_bucket(8, 6, 2);
  auto model = test::quiet_model(11);
  model.mean_us[test::pipeline_name(b, 0)] = 97.0;
  ReplaySampler sampler(model);
  return tune_bucket(b, sampler, ProtocolOptions{});
}

// As read back from line 5 of a journal.
JournalEntry entry_of(const BucketResult& bucket, const RowContext& context = machine) {
  ProtocolOptions const opt;
  auto e = journal_entry(bucket, context, opt, Provenance{});
  e.journal_line = 5;
  return e;
}

void require_no_row(const JournaledRow& r, const std::string& why) {
  CHECK_FALSE(r.row.has_value());
  CHECK_THAT(r.warning, Catch::StartsWith("runs/journal.jsonl:5: bucket "));
  CHECK_THAT(r.warning, Catch::Contains(why) && Catch::EndsWith("; no row is written for it"));
}

}  // namespace

TEST_CASE("journaled row: a consistent qualified entry yields its row", "[tune][journal]") {
  auto const bucket = qualified_bucket();
  REQUIRE(bucket.qualified);
  auto const r = journaled_row(entry_of(bucket), bucket.key, machine, journal_file);
  CHECK(r.warning.empty());
  REQUIRE(r.row.has_value());
  CHECK(r.row->key == tuned_row_key(bucket.key, machine));
}

TEST_CASE("journaled row: an inconsistent entry yields no row and a warning naming its line",
          "[tune][journal]") {
  auto const bucket = qualified_bucket();
  auto e = entry_of(bucket);
  REQUIRE(e.row.has_value());

  SECTION("the verdict edited to not qualified, the row left in") {
    e.qualified = false;
    require_no_row(journaled_row(e, bucket.key, machine, journal_file),
                   "it carries a row but its verdict is not qualified");
  }
  SECTION("qualified without a row") {
    e.row.reset();
    require_no_row(journaled_row(e, bucket.key, machine, journal_file),
                   "its verdict is qualified but it carries no row");
  }
  SECTION("the report says the bucket did not qualify") {
    e.report["qualified"] = false;
    require_no_row(journaled_row(e, bucket.key, machine, journal_file),
                   "its report's verdict is not qualified");
  }
  SECTION("the report's winner did not end qualified") {
    for (auto& p : e.report["pipelines"]) {
      if (p["name"] == e.report["winner"]) p["outcome"] = "not_significant";
    }
    require_no_row(journaled_row(e, bucket.key, machine, journal_file),
                   "winning pipeline has outcome 'not_significant'");
  }
  SECTION("the row is another machine's") {
    e.row->key.cu_num = 114;
    require_no_row(journaled_row(e, bucket.key, machine, journal_file),
                   "is not this bucket's on this machine");
  }
  SECTION("the row is another bucket's") {
    e.row->key.token = 16;
    require_no_row(journaled_row(e, bucket.key, machine, journal_file), "token=16");
  }
  SECTION("a measured row where the run tags its rows (a replay)") {
    RowContext const replay{"sm_90", 132, "replay"};
    require_no_row(journaled_row(e, bucket.key, replay, journal_file),
                   "is not this bucket's on this machine");
    auto const tagged = journaled_row(entry_of(bucket, replay), bucket.key, replay, journal_file);
    CHECK(tagged.warning.empty());
    REQUIRE(tagged.row.has_value());
    CHECK(tagged.row->key.tag == "replay");
  }
}

TEST_CASE("journaled row: a plain non-qualified decision yields no row and no warning",
          "[tune][journal]") {
  auto const b = test::make_bucket(16, 12, 2);
  ReplaySampler sampler(test::quiet_model(12));
  auto const bucket = tune_bucket(b, sampler, ProtocolOptions{});
  REQUIRE_FALSE(bucket.qualified);
  auto const r = journaled_row(entry_of(bucket), bucket.key, machine, journal_file);
  CHECK_FALSE(r.row.has_value());
  CHECK(r.warning.empty());
}

TEST_CASE("journaled row: an entry measured in this run is named as such", "[tune][journal]") {
  auto const bucket = qualified_bucket();
  auto e = entry_of(bucket);
  e.journal_line = 0;
  e.qualified = false;
  auto const r = journaled_row(e, bucket.key, machine, journal_file);
  CHECK_THAT(r.warning, Catch::StartsWith("runs/journal.jsonl (measured in this run): bucket "));
}
