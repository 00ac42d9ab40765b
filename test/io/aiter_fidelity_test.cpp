// validate and merge give AITER's verdicts: on the snapshot of AITER's whole fMoE config tree
// (../shared/aiter-data/aiter-configs, 63 tables), and rule by rule on small files. The rules
// come from AITER's own definitions (its enums and dtypes, its CSV test, its legacy
// cu_num -> gfx backfill, its grouped-MoE lookup), not from the samples.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "autotune/core/atomic_file.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/fmoe_writer.hpp"
#include "autotune/io/table_merge.hpp"
#include "autotune/io/validate.hpp"
#include "test/io/io_test_files.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::io;
using moetune::test::tuned_header;
using moetune::test::tuned_row;
using moetune::test::untuned_header;
using moetune::test::untuned_row;
using moetune::test::with_cell;
using moetune::test::write_text;

namespace {

std::filesystem::path config_tree() { return moetune::test::aiter_data_dir() / "aiter-configs"; }

std::vector<std::filesystem::path> csv_files_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (auto const& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string text_of(std::string_view header, std::initializer_list<std::string> rows) {
  std::string out(header);
  for (auto const& row : rows) out += "\n" + row;
  return out + "\n";
}

std::size_t errors_in(const ValidationReport& report) { return report.error_count(); }

bool has_finding(const std::vector<Diagnostic>& findings, Severity severity,
                 std::string_view part) {
  return std::any_of(findings.begin(), findings.end(), [&](const Diagnostic& d) {
    return d.severity == severity && d.format().find(part) != std::string::npos;
  });
}

// tuned_header without its gfx column, and a row of it: a legacy table AITER backfills.
std::string legacy_header() { return std::string(tuned_header).substr(std::string("gfx,").size()); }
std::string legacy_row(int token, std::string_view cu_num) {
  auto row = tuned_row(token);
  row = row.substr(row.find(',') + 1);  // drop gfx
  return std::string(cu_num) + row.substr(row.find(','));
}

}  // namespace

TEST_CASE("aiter: validate accepts every table of AITER's fMoE config tree", "[io][aiter]") {
  auto const files = csv_files_under(config_tree());
  REQUIRE(files.size() == 63);
  auto const report = validate_files(files);
  INFO([&] {
    std::string all;
    for (auto const& d : report.findings) {
      if (d.severity == Severity::error) all += d.format() + "\n";
    }
    return all;
  }());
  CHECK(errors_in(report) == 0);
  CHECK(report.exit_code() == 0);
  auto kind_of = [&](std::string_view name) {
    auto const it = std::find_if(report.files.begin(), report.files.end(),
                                 [&](const FileSummary& f) { return f.file.filename() == name; });
    REQUIRE(it != report.files.end());
    return it->kind;
  };
  CHECK(kind_of("tuned_grouped_fmoe.csv") == FmoeFileKind::grouped_tuned);
  CHECK(kind_of("untuned_grouped_fmoe.csv") == FmoeFileKind::grouped_untuned);
  CHECK(kind_of("tuned_fmoe.csv") == FmoeFileKind::tuned);
  CHECK(kind_of("kimik3_fp4_tuned_fmoe.csv") == FmoeFileKind::tuned);
  // Read and written back unchanged, every file is byte-identical (blank lines included).
  for (auto const& file : files) {
    INFO(file.string());
    CHECK(render_fmoe_table(read_fmoe_table(file)) == read_file(file));
  }
}

TEST_CASE("aiter: merge --siblings works on the real tree", "[io][aiter]") {
  // A new row for a shape no shipped table has, merged into the main table with every model
  // table as a sibling: no finding in AITER's own files may refuse it.
  auto const dir = moetune::test::scratch_dir("aiter_tree_merge");
  std::filesystem::copy(config_tree(), dir / "configs", std::filesystem::copy_options::recursive);
  auto const target = dir / "configs" / "tuned_fmoe.csv";
  auto const incoming =
      write_text(dir, "new.csv",
                 text_of(legacy_header(), {legacy_row(1, "80").replace(
                                              legacy_row(1, "80").find(",7168,"), 6, ",7040,")}));
  auto const plan = plan_merge(target, incoming, dir / "configs" / "model_configs");
  INFO((plan.findings.empty() ? std::string() : plan.findings.front().format()));
  CHECK(plan.ok());
  CHECK(plan.count(MergeChange::Kind::appended) == 1);
  CHECK(plan.siblings_checked.size() >= 25);
}

TEST_CASE("aiter: every enum member and dtype AITER defines is accepted", "[io][aiter]") {
  auto const dir = moetune::test::scratch_dir("aiter_enums");
  auto const row = [](std::string_view column, std::string_view value) {
    return with_cell(untuned_row(16), untuned_header, column, value);
  };
  auto const u = write_text(
      dir, "u.csv",
      text_of(untuned_header,
              {row("act_type", "ActivationType.Situv2"),
               with_cell(row("act_type", "ActivationType.GeluTanh"), untuned_header, "token", "32"),
               with_cell(row("q_type", "QuantType.per_256x128"), untuned_header, "token", "64"),
               with_cell(row("q_type", "QuantType.per_1024x128"), untuned_header, "token", "128"),
               with_cell(row("q_dtype_a", "torch.float8_e8m0fnu"), untuned_header, "token", "256"),
               with_cell(row("q_dtype_w", "torch.uint8"), untuned_header, "token", "512")}));
  auto const report = validate_files({u});
  INFO((report.findings.empty() ? std::string() : report.findings.front().format()));
  CHECK(report.findings.empty());
  auto const table = read_fmoe_table(u);
  REQUIRE(table.rows().size() == 6);
  CHECK(table.rows()[0].key.act_type == ActivationType::situv2);
  CHECK(table.rows()[2].key.q_type == QuantType::per_256x128);
  CHECK(table.rows()[4].key.q_dtype_a == TorchDtype::fp8_e8m0fnu);
  // Still exact: AITER matches these cells as text, so a near miss is refused, located.
  auto const bad = write_text(dir, "bad.csv",
                              text_of(untuned_header, {row("act_type", "ActivationType.situv2")}));
  auto const refused = validate_files({bad});
  REQUIRE(refused.findings.size() == 1);
  CHECK(refused.findings[0].line == 2);
  CHECK(refused.findings[0].column == 19);
  CHECK(refused.findings[0].message.find("found 'ActivationType.situv2'") != std::string::npos);
}

TEST_CASE("aiter: err1/err2 with or without '%'", "[io][aiter]") {
  auto const dir = moetune::test::scratch_dir("aiter_err");
  auto const t = write_text(
      dir, "t.csv",
      text_of(tuned_header,
              {with_cell(with_cell(tuned_row(1), tuned_header, "err1", "0.0"), tuned_header,
                         "err2", "0"),
               tuned_row(2)}));
  auto const report = validate_files({t});
  CHECK(report.findings.empty());
  auto const table = read_fmoe_table(t);
  CHECK(table.rows()[0].tuned->err1 == 0.0);
  CHECK(table.rows()[0].tuned->err2 == 0.0);
  auto const bad = write_text(
      dir, "bad.csv", text_of(tuned_header, {with_cell(tuned_row(1), tuned_header, "err1", "-1%")}));
  auto const refused = validate_files({bad});
  REQUIRE(refused.error_count() == 1);
  CHECK(refused.findings[0].message.starts_with("column 'err1': expected a non-negative "
                                                "percentage like 0.0% (or a bare fraction"));
}

TEST_CASE("aiter: the grouped-MoE family is its own kind and key space", "[io][aiter]") {
  auto const dir = moetune::test::scratch_dir("aiter_grouped");
  std::string const header =
      "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,"
      "q_type,use_g1u1,doweight_stage1,max_m,tile_m,tile_n,tile_k,kernelName1,kernelName2,us,"
      "tflops,bw";
  std::string const shape =
      "gfx1250,256,64,4096,2048,256,6,ActivationType.Swiglu,torch.bfloat16,"
      "torch.float4_e2m1fn_x2,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0";
  // Two rows for one shape (AITER takes the fastest measured) and a topk of -1 (a row no
  // runtime shape matches): both legal in this family.
  auto const g = write_text(
      dir, "tuned_grouped_fmoe.csv",
      text_of(header, {shape + ",384,16,512,128,g1,g2,468.0528,0,0",
                       shape + ",3072,64,256,256,g1,g2,517.8896,0,0",
                       "gfx1250,256,8,4096,2048,256,-1,ActivationType.Swiglu,torch.bfloat16,"
                       "torch.float4_e2m1fn_x2,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,"
                       "384,16,512,128,g1,g2,1.0,0,0"}));
  auto const report = validate_files({g});
  INFO((report.findings.empty() ? std::string() : report.findings.front().format()));
  CHECK(report.findings.empty());
  REQUIRE(report.files[0].kind);
  CHECK(*report.files[0].kind == FmoeFileKind::grouped_tuned);
  // A bad knob is still located.
  auto const bad = write_text(dir, "bad.csv",
                              text_of(header, {shape + ",384,x16,512,128,g1,g2,468.0528,0,0"}));
  auto const refused = validate_files({bad});
  REQUIRE(refused.error_count() == 1);
  CHECK(refused.findings[0].line == 2);
  CHECK(refused.findings[0].message == "column 'tile_m': expected a positive integer, found 'x16'");
  // The untuned list: gate_mode without the fhmoe padding columns, cu_num may be blank.
  auto const u = write_text(
      dir, "untuned_grouped_fmoe.csv",
      "cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,"
      "use_g1u1,doweight_stage1,gate_mode\n"
      ",1,3072,3072,128,4,ActivationType.Swiglu,torch.bfloat16,torch.float4_e2m1fn_x2,"
      "torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,GateMode.SEPARATED\n\n");
  auto const ureport = validate_files({u});
  REQUIRE(ureport.files[0].kind);
  CHECK(*ureport.files[0].kind == FmoeFileKind::grouped_untuned);
  CHECK(ureport.exit_code() == 0);
  // The trailing empty line is skipped as pandas does, and reported.
  CHECK(has_finding(ureport.findings, Severity::warning, "untuned_grouped_fmoe.csv:3:1: warning: "
                                                         "1 empty line: skipped"));
}

TEST_CASE("aiter: a git conflict marker anywhere refuses the file", "[io][aiter]") {
  auto const dir = moetune::test::scratch_dir("aiter_conflict");
  auto const t = write_text(
      dir, "t.csv",
      text_of(tuned_header,
              {tuned_row(1), with_cell(tuned_row(2), tuned_header, "_tag", "x>>>>>>>y")}));
  auto const report = validate_files({t});
  CHECK(report.exit_code() == 2);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].line == 3);
  CHECK(report.findings[0].format().find("t.csv:3:") != std::string::npos);
  CHECK(report.findings[0].message.starts_with("git merge conflict marker '>>>>>>>'"));
}

TEST_CASE("aiter: a legacy row's gfx is filled from cu_num before keys are compared",
          "[io][aiter]") {
  auto const dir = moetune::test::scratch_dir("aiter_gfx_fill");
  auto const modern = write_text(dir, "modern.csv",
                                 text_of(tuned_header, {tuned_row(1),
                                                        with_cell(tuned_row(2), tuned_header,
                                                                  "gfx", "gfx942")}));
  SECTION("256 is gfx950") {
    auto const legacy = write_text(dir, "legacy.csv", text_of(legacy_header(), {legacy_row(1, "256")}));
    auto const report = validate_files({modern, legacy});
    REQUIRE(report.error_count() == 1);
    CHECK(report.findings.back().line == 2);
    CHECK(report.findings.back().message.starts_with(
        "duplicate key: " + modern.string() + ":2 and " + legacy.string() + ":2 both define "
        "gfx=gfx950 cu_num=256 token=1"));
    CHECK(report.findings.back().message.find("gfx filled from cu_num") != std::string::npos);
  }
  SECTION("80 and 304 are gfx942") {
    for (auto const* cu : {"80", "304"}) {
      auto const m = write_text(
          dir, std::string("m") + cu + ".csv",
          text_of(tuned_header, {with_cell(with_cell(tuned_row(2), tuned_header, "gfx", "gfx942"),
                                           tuned_header, "cu_num", cu)}));
      auto const legacy =
          write_text(dir, std::string("l") + cu + ".csv", text_of(legacy_header(), {legacy_row(2, cu)}));
      CHECK(validate_files({m, legacy}).error_count() == 1);
    }
  }
  SECTION("another count is not filled: no duplicate") {
    auto const m = write_text(
        dir, "m132.csv",
        text_of(tuned_header, {with_cell(with_cell(tuned_row(1), tuned_header, "gfx", "sm_90"),
                                         tuned_header, "cu_num", "132")}));
    auto const legacy = write_text(dir, "l132.csv", text_of(legacy_header(), {legacy_row(1, "132")}));
    CHECK(validate_files({m, legacy}).error_count() == 0);
  }
  SECTION("within one legacy file too") {
    auto const legacy = write_text(dir, "twice.csv",
                                   text_of(legacy_header(), {legacy_row(4, "80"), legacy_row(4, "80")}));
    CHECK(validate_files({legacy}).error_count() == 1);
  }
}

TEST_CASE("aiter: a sibling's own finding does not block a merge into another file",
          "[io][aiter]") {
  auto const dir = moetune::test::scratch_dir("aiter_sibling");
  std::filesystem::create_directories(dir / "siblings");
  auto const target = write_text(dir, "target.csv", text_of(tuned_header, {tuned_row(1)}));
  auto const target_before = read_file(target);
  // A sibling with a bad cell and one unreadable sibling (a conflict marker).
  write_text(dir / "siblings", "bad.csv",
             text_of(tuned_header, {tuned_row(4), with_cell(tuned_row(8), tuned_header, "topk",
                                                            "x")}));
  write_text(dir / "siblings", "conflict.csv", text_of(tuned_header, {tuned_row(16), "======="}));

  SECTION("no collision: merged, the findings reported as warnings") {
    auto const incoming = write_text(dir, "new.csv", text_of(tuned_header, {tuned_row(2)}));
    auto const plan = plan_merge(target, incoming, dir / "siblings");
    CHECK(plan.ok());
    CHECK(plan.count(MergeChange::Kind::appended) == 1);
    CHECK(has_finding(plan.findings, Severity::warning,
                      "bad.csv:3:27: warning: in a sibling table (does not block this merge): "
                      "column 'topk': expected a positive integer, found 'x'"));
    CHECK(has_finding(plan.findings, Severity::warning,
                      "conflict.csv:3:1: warning: in a sibling table (does not block this "
                      "merge): git merge conflict marker '======='"));
  }
  SECTION("a collision with a sibling's row still refuses, naming both places") {
    auto const incoming = write_text(dir, "new.csv", text_of(tuned_header, {tuned_row(4)}));
    auto const plan = plan_merge(target, incoming, dir / "siblings");
    CHECK_FALSE(plan.ok());
    CHECK(has_finding(plan.findings, Severity::error,
                      "new.csv:2:1: error: key collision: " + (dir / "new.csv").string() +
                          ":2 and " + (dir / "siblings" / "bad.csv").string() + ":2 both define"));
    CHECK(plan.after == plan.before);
    CHECK(read_file(target) == target_before);
  }
}
