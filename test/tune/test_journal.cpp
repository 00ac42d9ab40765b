// The journal behind `tune --resume`: decided buckets round-trip (the tuned row to the same
// bytes), a torn last line is ignored and cut off, a damaged middle is an error, a key is
// never returned twice, and every identity field that differs is named.
#include <fstream>

#include <catch2/catch.hpp>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/io/fmoe_schema.hpp"
#include "autotune/io/fmoe_writer.hpp"
#include "autotune/tune/journal.hpp"
#include "test/support/test_paths.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::quiet_model;

namespace {

Provenance provenance() {
  Provenance p;
  p.device = "NVIDIA H200";
  p.arch = "sm_90";
  p.cu_num = 132;
  p.driver = "13.0";
  p.runtime_compiler = "NVRTC 13.0";
  p.search_space_sha256 = std::string(64, 'b');
  p.kernel_source_sha256["moe_gemm.cuh"] = std::string(64, 'a');
  p.sampler = "gpu";
  p.git_revision = "abc";
  p.decision_code_sha256 = std::string(64, 'e');
  p.command = "moe-tune tune";
  return p;
}

std::map<std::string, std::string> extra() {
  return {{"input", "shapes/x.csv"}, {"input_sha256", std::string(64, 'c')}};
}

// Bucket 8 qualifies (a stage one 3 % faster); bucket 16 does not (nothing faster).
std::vector<BucketResult> two_buckets() {
  std::vector<BucketResult> out;
  auto const b8 = make_bucket(8, 6, 2);
  auto model = quiet_model(11);
  model.mean_us[pipeline_name(b8, 0)] = 97.0;
  ReplaySampler s8(model);
  out.push_back(tune_bucket(b8, s8, ProtocolOptions{}));
  auto const b16 = make_bucket(16, 12, 2);
  ReplaySampler s16(quiet_model(12));
  out.push_back(tune_bucket(b16, s16, ProtocolOptions{}));
  return out;
}

void append_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::app);
  out << text;
}

std::vector<std::string> newest_columns() {
  std::vector<std::string> columns;
  for (auto const c : io::newest_header(io::FmoeFileKind::tuned)) columns.emplace_back(c);
  return columns;
}

const RowContext rows{"sm_90", 132};

}  // namespace

TEST_CASE("journal: decided buckets round-trip, the row to the same bytes", "[tune][journal]") {
  auto const dir = test::scratch_dir("journal_round_trip");
  auto const file = dir / "journal.jsonl";
  auto const results = two_buckets();
  REQUIRE(results[0].qualified);
  REQUIRE_FALSE(results[1].qualified);
  ProtocolOptions const opt;
  auto const identity = journal_identity(provenance(), opt, extra());
  {
    auto w = JournalWriter::create(file, identity);
    for (auto const& r : results) w.record(journal_entry(r, rows, opt, provenance()));
  }
  auto const j = read_journal(file);
  CHECK(j.warnings.empty());
  CHECK(j.identity == identity);
  CHECK(j.valid_bytes == std::filesystem::file_size(file));
  REQUIRE(j.entries.size() == 2);
  CHECK(j.entries[0].key == results[0].key.describe());
  CHECK(j.entries[0].journal_line == 2);
  CHECK(j.entries[0].qualified);
  CHECK(j.entries[0].summary == results[0].summary);
  CHECK(j.entries[0].report == to_json(results[0]));
  CHECK_FALSE(j.entries[1].row.has_value());
  REQUIRE(j.entries[0].row.has_value());
  auto const fresh = tuned_row(results[0], rows).value();
  CHECK(j.entries[0].row->key == fresh.key);
  CHECK(j.entries[0].row->tuned == fresh.tuned);
  CHECK_FALSE(j.entries[0].row->from_file());  // formatted anew in the target's columns
  CHECK(io::format_row_cells(*j.entries[0].row, newest_columns(), "t") ==
        io::format_row_cells(fresh, newest_columns(), "t"));
  CHECK_THAT(j.entries[1].summary_md, Catch::StartsWith("| 16 | 12 |"));
}

TEST_CASE("journal: a torn last line is ignored with a warning and cut before appending",
          "[tune][journal]") {
  auto const dir = test::scratch_dir("journal_torn");
  auto const file = dir / "journal.jsonl";
  auto const results = two_buckets();
  ProtocolOptions const opt;
  auto const identity = journal_identity(provenance(), opt, extra());
  {
    auto w = JournalWriter::create(file, identity);
    w.record(journal_entry(results[0], rows, opt, provenance()));
  }
  auto const good = read_file(file);
  // What SIGKILL in the middle of an append leaves: half a line, no newline.
  append_text(file, R"({"key":"token=16 ...","line":3,"qualif)");
  auto const j = read_journal(file);
  REQUIRE(j.warnings.size() == 1);
  CHECK_THAT(j.warnings[0], Catch::Contains(":3: torn last line"));
  CHECK(j.entries.size() == 1);
  CHECK(j.valid_bytes == good.size());
  {
    auto w = JournalWriter::resume(file, j.valid_bytes);
    w.record(journal_entry(results[1], rows, opt, provenance()));
  }
  auto const again = read_journal(file);
  CHECK(again.warnings.empty());
  REQUIRE(again.entries.size() == 2);
  CHECK(again.entries[1].key == results[1].key.describe());
  CHECK(read_file(file).rfind(good, 0) == 0);  // the decided lines are untouched
}

TEST_CASE("journal: a cut JSON last line is torn too, a bad middle line is an error",
          "[tune][journal]") {
  auto const dir = test::scratch_dir("journal_damaged");
  auto const file = dir / "journal.jsonl";
  auto const results = two_buckets();
  ProtocolOptions const opt;
  {
    auto w = JournalWriter::create(file, journal_identity(provenance(), opt, extra()));
    w.record(journal_entry(results[0], rows, opt, provenance()));
  }
  auto const good = read_file(file);
  append_text(file, "{\"key\":\n");
  CHECK(read_journal(file).warnings.size() == 1);
  // The same damage followed by a decided line is not a kill: refuse to guess.
  append_text(file, good.substr(good.find('\n') + 1));
  CHECK_THROWS_WITH(read_journal(file), Catch::Contains(":3: not a moe-tune journal line"));
  std::filesystem::resize_file(file, 10);  // the header itself torn
  CHECK_THROWS_WITH(read_journal(file), Catch::Contains("header"));
}

TEST_CASE("journal: a header whose identity is not all strings is a named error", "[tune][journal]") {
  // Found by test/fuzz/fuzz_journal.cpp: a number escaped as a json exception (an internal error).
  auto const dir = test::scratch_dir("journal_bad_identity");
  auto const file = dir / "journal.jsonl";
  std::ofstream(file) << "{\"identity\":{\"arch\":7},\"moe_tune_journal\":1}\n";
  CHECK_THROWS_AS(read_journal(file), moetune::Error);
  CHECK_THROWS_WITH(read_journal(file), Catch::Contains(":1: identity field 'arch' is not a string"));
  std::ofstream(file) << "{\"identity\":[1],\"moe_tune_journal\":1}\n";
  CHECK_THROWS_WITH(read_journal(file), Catch::Contains("identity is not an object"));
}

TEST_CASE("journal: a key decided twice is returned once, the first decision", "[tune][journal]") {
  auto const dir = test::scratch_dir("journal_duplicates");
  auto const file = dir / "journal.jsonl";
  auto const results = two_buckets();
  ProtocolOptions const opt;
  {
    auto w = JournalWriter::create(file, journal_identity(provenance(), opt, extra()));
    w.record(journal_entry(results[0], rows, opt, provenance()));
    auto second = journal_entry(results[0], rows, opt, provenance());
    second.summary = "a later decision of the same bucket";
    w.record(second);
    w.record(journal_entry(results[1], rows, opt, provenance()));
  }
  auto const j = read_journal(file);
  REQUIRE(j.entries.size() == 2);
  CHECK(j.entries[0].summary == results[0].summary);
  CHECK(j.entries[1].key == results[1].key.describe());
  REQUIRE(j.warnings.size() == 1);
  CHECK_THAT(j.warnings[0], Catch::Contains(":3: bucket") && Catch::Contains("already decided"));
}

TEST_CASE("journal: every identity field that differs is named with both values",
          "[tune][journal]") {
  ProtocolOptions const opt;
  auto const base = journal_identity(provenance(), opt, extra());
  CHECK(identity_mismatches(base, base).empty());
  // The command and the git revision do not change what is measured.
  {
    auto p = provenance();
    p.command = "moe-tune tune --resume";
    p.git_revision = "def";
    CHECK(identity_mismatches(base, journal_identity(p, opt, extra())).empty());
  }
  struct Change {
    const char* field;
    std::function<void(Provenance&, ProtocolOptions&, std::map<std::string, std::string>&)> apply;
  };
  std::vector<Change> const changes = {
      {"device", [](auto& p, auto&, auto&) { p.device = "NVIDIA H100"; }},
      {"arch", [](auto& p, auto&, auto&) { p.arch = "sm_90a"; }},
      {"cu_num", [](auto& p, auto&, auto&) { p.cu_num = 114; }},
      {"driver", [](auto& p, auto&, auto&) { p.driver = "13.1"; }},
      {"runtime_compiler", [](auto& p, auto&, auto&) { p.runtime_compiler = "NVRTC 13.1"; }},
      {"search_space_sha256", [](auto& p, auto&, auto&) { p.search_space_sha256[0] = 'f'; }},
      {"kernel_source_sha256.moe_gemm.cuh",
       [](auto& p, auto&, auto&) { p.kernel_source_sha256["moe_gemm.cuh"][0] = 'f'; }},
      {"sampler", [](auto& p, auto&, auto&) { p.sampler = "replay"; }},
      {"decision_code_sha256", [](auto& p, auto&, auto&) { p.decision_code_sha256[0] = 'f'; }},
      {"protocol.gate.min_median_reduction",
       [](auto&, auto& o, auto&) { o.gate.min_median_reduction = 0.02; }},
      {"protocol.gate.reference_wins", [](auto&, auto& o, auto&) { o.gate.reference_wins = 24; }},
      {"protocol.seed", [](auto&, auto& o, auto&) { o.seed = 2; }},
      {"protocol.confirm_blocks", [](auto&, auto& o, auto&) { o.confirm_blocks = 5; }},
      {"protocol.screen_warmup_replays", [](auto&, auto& o, auto&) { o.screen_warmup_replays = 3; }},
      {"protocol.screen_repeats", [](auto&, auto& o, auto&) { o.screen_repeats = 8; }},
      {"input_sha256", [](auto&, auto&, auto& e) { e["input_sha256"][0] = 'f'; }},
      {"input", [](auto&, auto&, auto& e) { e["input"] = "shapes/y.csv"; }},
  };
  for (auto const& c : changes) {
    SECTION(c.field) {
      auto p = provenance();
      auto o = opt;
      auto e = extra();
      c.apply(p, o, e);
      auto const m = identity_mismatches(base, journal_identity(p, o, e));
      REQUIRE(m.size() == 1);
      CHECK_THAT(m[0], Catch::StartsWith(std::string(c.field) + ": the journal has '"));
      CHECK_THAT(m[0], Catch::Contains(", this run '"));
    }
  }
  SECTION("a kernel source the journal does not know") {
    auto p = provenance();
    p.kernel_source_sha256["moe_sort.cuh"] = std::string(64, 'd');
    auto const m = identity_mismatches(base, journal_identity(p, opt, extra()));
    REQUIRE(m.size() == 1);
    CHECK_THAT(m[0], Catch::Contains("kernel_source_sha256.moe_sort.cuh: the journal has (absent)"));
  }
}

TEST_CASE("journal: a journal of other decision code is told apart, naming decision_code_sha256",
          "[tune][journal]") {
  auto const file = test::scratch_dir("journal_decision_code") / "journal.jsonl";
  ProtocolOptions const opt;
  auto older = provenance();
  older.decision_code_sha256 = std::string(64, '0');
  (void)JournalWriter::create(file, journal_identity(older, opt, extra()));
  auto const m = identity_mismatches(read_journal(file).identity,
                                     journal_identity(provenance(), opt, extra()));
  REQUIRE(m.size() == 1);
  CHECK(m[0] == "decision_code_sha256: the journal has '" + std::string(64, '0') +
                    "', this run '" + std::string(64, 'e') + "'");
  // A journal from before the field existed is refused too: its decision code is unknown.
  auto identity = journal_identity(provenance(), opt, extra());
  identity.erase("decision_code_sha256");
  auto const absent = identity_mismatches(identity, journal_identity(provenance(), opt, extra()));
  REQUIRE(absent.size() == 1);
  CHECK_THAT(absent[0], Catch::StartsWith("decision_code_sha256: the journal has (absent)"));
}
