#include "autotune/io/table_merge.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <string>

#include <sys/resource.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "test/io/io_test_files.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::io;
using moetune::test::tuned_header;
using moetune::test::tuned_row;
using moetune::test::with_cell;
using moetune::test::write_text;

namespace {

std::string lines(std::initializer_list<std::string> rows, bool final_newline = true) {
  std::string out;
  for (auto const& r : rows) out += (out.empty() ? "" : "\n") + r;
  return final_newline ? out + "\n" : out;
}

const std::string header(tuned_header);

// A row in a harmless but non-canonical spelling (trailing zero): the writer would print
// "12.07190" as "12.0719", so it survives only if untouched rows are copied verbatim.
std::string odd_row(int token) { return tuned_row(token, "12.07190", "8.8572", "20.9291"); }

bool has_error_containing(const MergePlan& plan, const std::string& text) {
  for (auto const& d : plan.findings) {
    if (d.severity == Severity::error && d.format().find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("merge replaces a row in place, appends new keys at the end, keeps other bytes",
          "[io][merge]") {
  auto dir = moetune::test::scratch_dir("merge_basic");
  auto const before = lines({header, odd_row(1), tuned_row(2), odd_row(8)});
  auto const target = write_text(dir, "table.csv", before);
  auto const replaced = tuned_row(2, "10.0", "8.8572", "18.8572");
  auto const incoming =
      write_text(dir, "new.csv", lines({header, tuned_row(16), replaced}));

  auto const plan = plan_merge(target, incoming, std::nullopt);
  REQUIRE(plan.ok());
  CHECK(plan.count(MergeChange::Kind::replaced) == 1);
  CHECK(plan.count(MergeChange::Kind::appended) == 1);
  // Planning alone (what --dry-run does) writes nothing.
  CHECK(read_file(target) == before);

  apply_merge(plan);
  // Exact bytes: odd rows verbatim, row 2 replaced on its own line, row 16 appended.
  CHECK(read_file(target) == lines({header, odd_row(1), replaced, odd_row(8), tuned_row(16)}));

  REQUIRE(plan.changes.size() == 2);
  CHECK(plan.changes[0].kind == MergeChange::Kind::replaced);
  CHECK(plan.changes[0].target_line == 3);
  CHECK(plan.changes[0].source_line == 3);
  CHECK(plan.changes[1].kind == MergeChange::Kind::appended);
  CHECK(plan.changes[1].target_line == 5);
  CHECK(plan.changes[1].source_line == 2);
}

TEST_CASE("merge keeps a missing final newline and an older header's column order",
          "[io][merge]") {
  auto dir = moetune::test::scratch_dir("merge_old");
  // Older layout: no gfx, xbf16, flat; columns in a different order than the newest header.
  std::string const old_header =
      "cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,"
      "use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,"
      "run_1stage,tflops,bw,_tag";
  auto old_row = [](int token) {
    return "256," + std::to_string(token) +
           ",7168,512,384,6,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fn,"
           "torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,32,0,12.0719,k1,0.0%,8.8572,k2,0.0%,"
           "20.9291,0,6.31,202009.64,";
  };
  auto const target = write_text(dir, "old.csv", lines({old_header, old_row(1)}, false));
  auto const incoming = write_text(dir, "new.csv", lines({old_header, old_row(4)}));
  auto const plan = plan_merge(target, incoming, std::nullopt);
  REQUIRE(plan.ok());
  apply_merge(plan);
  CHECK(read_file(target) == lines({old_header, old_row(1), old_row(4)}, false));

  SECTION("a row naming a gfx cannot go into a file without a gfx column") {
    // gfx942 at cu_num 256: not what AITER fills in for a legacy row (gfx950), so it is lost.
    auto const newest = write_text(
        dir, "newest.csv", lines({header, with_cell(tuned_row(32), header, "gfx", "gfx942")}));
    auto const refused = plan_merge(target, newest, std::nullopt);
    CHECK_FALSE(refused.ok());
    CHECK(has_error_containing(refused, "newest.csv:2: error: cannot write the row"));
    CHECK(refused.after == refused.before);
  }
}

TEST_CASE("merge refuses a key another tuned table in the sibling directory defines",
          "[io][merge]") {
  auto dir = moetune::test::scratch_dir("merge_siblings");
  auto const target = write_text(dir, "table.csv", lines({header, tuned_row(1)}));
  auto const sibling = write_text(dir, "other.csv", lines({header, tuned_row(4), tuned_row(8)}));
  // Not fMoE tables, or a separate key space: never compared.
  write_text(dir, "gemm.csv", "M,N,K,kernelName\n1,2,3,k\n");
  write_text(dir, "untuned.csv", lines({std::string(moetune::test::untuned_header),
                                        moetune::test::untuned_row(8)}));
  auto const incoming = write_text(dir, "new.csv", lines({header, tuned_row(2), tuned_row(8)}));
  auto const before = read_file(target);

  auto const plan = plan_merge(target, incoming, dir);
  CHECK_FALSE(plan.ok());
  CHECK(plan.error_count() == 1);
  // Both places, file:line.
  auto const expected = incoming.string() + ":3 and " + sibling.string() + ":3 both define";
  CHECK(has_error_containing(plan, expected));
  CHECK(plan.findings.front().file == incoming);
  CHECK(plan.findings.front().line == 3);
  CHECK(plan.siblings_checked == std::vector<std::filesystem::path>{sibling});
  CHECK(plan.siblings_skipped.size() == 2);
  CHECK(plan.after == before);
  CHECK_THROWS_AS(apply_merge(plan), Error);
  CHECK(read_file(target) == before);

  SECTION("the target itself is not a sibling: replacing its own row is allowed") {
    auto const again = write_text(dir, "new.csv", lines({header, tuned_row(1, "1.0", "2.0",
                                                                          "3.0")}));
    auto const ok = plan_merge(target, again, dir);
    CHECK(ok.ok());
    CHECK(ok.count(MergeChange::Kind::replaced) == 1);
  }
}

TEST_CASE("merge refuses an incoming file with validation errors or short rows", "[io][merge]") {
  auto dir = moetune::test::scratch_dir("merge_invalid");
  auto const target = write_text(dir, "table.csv", lines({header, tuned_row(1)}));

  SECTION("a bad enum") {
    auto const bad = with_cell(tuned_row(2), header, "act_type", "ActivationType.Sliu");
    auto const incoming = write_text(dir, "new.csv", lines({header, bad}));
    auto const plan = plan_merge(target, incoming, std::nullopt);
    CHECK_FALSE(plan.ok());
    CHECK(has_error_containing(plan, "new.csv:2:"));
  }
  SECTION("a duplicate key within the incoming file") {
    auto const incoming = write_text(dir, "new.csv", lines({header, tuned_row(2), tuned_row(2)}));
    CHECK(has_error_containing(plan_merge(target, incoming, std::nullopt), "duplicate key"));
  }
  SECTION("a padded short row") {
    auto row = tuned_row(2);
    row.pop_back();  // drop the (empty) _tag field's comma: one field short
    auto const incoming = write_text(dir, "new.csv", lines({header, row}));
    CHECK(has_error_containing(plan_merge(target, incoming, std::nullopt),
                               "new.csv:2: error: a short (padded) row cannot be merged"));
  }
  SECTION("an unreadable incoming file throws (exit code 2 in the CLI)") {
    auto const incoming = write_text(dir, "new.csv", "a,\"b\"\n");
    CHECK_THROWS_AS(plan_merge(target, incoming, std::nullopt), InputError);
    CHECK_THROWS_AS(plan_merge(target, dir / "missing.csv", std::nullopt), FileError);
  }
  CHECK(read_file(target) == lines({header, tuned_row(1)}));
}

TEST_CASE("merge refuses a target with errors: rewriting it would drop the bad rows",
          "[io][merge]") {
  auto dir = moetune::test::scratch_dir("merge_bad_target");
  auto const bad = with_cell(tuned_row(2), header, "topk", "400");
  auto const before = lines({header, tuned_row(1), bad});
  auto const target = write_text(dir, "table.csv", before);
  auto const incoming = write_text(dir, "new.csv", lines({header, tuned_row(4)}));
  auto const plan = plan_merge(target, incoming, std::nullopt);
  CHECK_FALSE(plan.ok());
  CHECK(has_error_containing(plan, "table.csv:3:"));
  CHECK(plan.after == before);
}

TEST_CASE("merging an identical row changes nothing", "[io][merge]") {
  auto dir = moetune::test::scratch_dir("merge_same");
  auto const target = write_text(dir, "table.csv", lines({header, tuned_row(1)}));
  auto const incoming = write_text(dir, "new.csv", lines({header, tuned_row(1)}));
  auto const plan = plan_merge(target, incoming, std::nullopt);
  REQUIRE(plan.ok());
  CHECK(plan.count(MergeChange::Kind::unchanged) == 1);
  CHECK(plan.after == plan.before);
  CHECK(positional_diff(plan.before, plan.after, "a", "b").empty());
}

TEST_CASE("a failed write leaves the target untouched", "[io][merge]") {
  auto dir = moetune::test::scratch_dir("merge_unwritable");
  auto const before = lines({header, tuned_row(1)});
  auto const target = write_text(dir, "table.csv", before);
  auto const incoming = write_text(dir, "new.csv", lines({header, tuned_row(2)}));
  auto const plan = plan_merge(target, incoming, std::nullopt);
  REQUIRE(plan.ok());
  // A file-size limit of 0 makes every write fail (EFBIG), even for root, for whom a
  // read-only directory would not be read-only.
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto const old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit zero = saved;
  zero.rlim_cur = 0;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &zero) == 0);
  bool threw = false;
  try {
    apply_merge(plan);
  } catch (const FileError&) {
    threw = true;
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  CHECK(threw);
  CHECK(read_file(target) == before);
  // No temporary file is left beside it.
  std::size_t files = 0;
  for ([[maybe_unused]] auto const& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 2);
}

TEST_CASE("positional_diff: hunks with line numbers, replacements and appends",
          "[io][merge]") {
  auto const diff = positional_diff("h\na\nb\nc\n", "h\nA\nb\nc\nd\ne\n", "t.csv", "t.csv (merged)");
  CHECK(diff ==
        "--- t.csv\n+++ t.csv (merged)\n"
        "@@ -2,1 +2,1 @@\n-a\n+A\n"
        "@@ -4,0 +5,2 @@\n+d\n+e\n");
  CHECK(positional_diff("h\na", "h\na\n", "x", "y").empty());  // line content only
}
