// Emission: tuned rows that validate and round-trip, the JSON report, the Markdown summary.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/number_format.hpp"
#include "autotune/io/validate.hpp"
#include "autotune/tune/markdown_summary.hpp"
#include "autotune/tune/tune_report.hpp"
#include "autotune/tune/tuned_rows.hpp"
#include "test/support/test_paths.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using namespace moetune::tune;
using namespace moetune::measure;
using moetune::test::make_bucket;
using moetune::test::pipeline_name;
using moetune::test::quiet_model;

namespace {

// Bucket 8 (M=6) qualifies with a 3 % faster stage one; bucket 16 (M=12) has a biased control.
std::vector<BucketResult> run_two_buckets() {
  std::vector<BucketResult> out;
  {
    auto const b = make_bucket(8, 6, 2);
    auto model = quiet_model(11);
    model.mean_us[pipeline_name(b, 0)] = 97.0;
    ReplaySampler s(model);
    out.push_back(tune_bucket(b, s, ProtocolOptions{}));
  }
  {
    auto const b = make_bucket(16, 12, 2);
    auto model = quiet_model(12);
    model.mean_us[pipeline_name(b, 1)] = 96.0;
    model.arm_bias["control"] = -0.03;
    ReplaySampler s(model);
    out.push_back(tune_bucket(b, s, ProtocolOptions{}));
  }
  return out;
}

Provenance provenance() {
  Provenance p;
  p.device = "replay";
  p.arch = "sm_90";
  p.cu_num = 132;
  p.git_revision = "abc123";
  p.decision_code_sha256 = std::string(64, 'd');
  p.command = "moe-tune tune -i shapes/x.csv";
  p.sampler = "replay";
  p.kernel_source_sha256["kernels/moe_stage1.cuh"] = std::string(64, 'a');
  return p;
}

}  // namespace

TEST_CASE("AITER's tflops and bw formulas reproduce its published rows", "[tune]") {
  // tuned_fmoe.csv line 2 (fp8 per_Token, Gelu, doweight) and kimik2_fp4_tuned_fmoe.csv
  // line 2 (fp4x2 per_1x32): us, tflops and bw as AITER wrote them.
  io::FmoeKey fp8;
  fp8.token = 4, fp8.model_dim = 2304, fp8.inter_dim = 1536, fp8.expert = 8, fp8.topk = 2;
  fp8.dtype = io::TorchDtype::bf16;
  fp8.q_dtype_a = fp8.q_dtype_w = io::TorchDtype::fp8_e4m3fnuz;
  fp8.use_g1u1 = true;
  auto const a = aiter_row_figures(fp8, 32.3123);
  CHECK(a.M == 4);
  CHECK(a.tflops == 5.26);
  CHECK(a.bw == 2629.41);
  io::FmoeKey fp4 = fp8;
  fp4.token = 1, fp4.model_dim = 7168, fp4.inter_dim = 256, fp4.expert = 384, fp4.topk = 8;
  fp4.q_dtype_a = fp4.q_dtype_w = io::TorchDtype::fp4x2_e2m1fn;
  auto const b = aiter_row_figures(fp4, 21.362);
  CHECK(b.tflops == 4.12);
  CHECK(b.bw == 98958.46);
}

TEST_CASE("AITER's ksplit column stays 0: each stage's split-K is in its kernel name", "[tune]") {
  auto buckets = run_two_buckets();
  REQUIRE(buckets[0].qualified);
  auto& b = buckets[0];
  b.pairs[*b.winner].pair.stage1.ksplit = 4;
  b.pairs[*b.winner].pair.stage2.ksplit = 2;
  auto const row = tuned_row(b, RowContext{"sm_90", 132}).value();
  CHECK(row.tuned->ksplit == 0);
  CHECK(row.tuned->kernel_name1.find("_ks4_") != std::string::npos);
  CHECK(row.tuned->kernel_name2.find("_ks2_") != std::string::npos);
}

TEST_CASE("qualified buckets become AITER rows that validate and round-trip", "[tune]") {
  auto const buckets = run_two_buckets();
  REQUIRE(buckets[0].qualified);
  REQUIRE_FALSE(buckets[1].qualified);
  auto const rows = tuned_rows(buckets, RowContext{"sm_90", 132});
  REQUIRE(rows.size() == 1);  // the control-failed bucket has no row
  auto const& row = rows[0];
  auto const& t = row.tuned.value();
  auto const& b = buckets[0];
  auto const& pair = b.pairs[*b.winner].pair;
  CHECK(row.key.gfx == "sm_90");
  CHECK(row.key.cu_num == 132);
  CHECK(row.key.token == 8);
  CHECK(t.block_m == pair.stage1.block_m);
  CHECK(t.block_m == pair.stage2.block_m);
  CHECK(t.ksplit == 0);
  CHECK(t.kernel_name1 == pair.stage1.name());
  CHECK(t.kernel_name2 == pair.stage2.name());
  CHECK(*t.us1 == io::python_round(*b.stage1_us, 4));
  CHECK(*t.us == io::total_us(*t.us1, *t.us2));
  CHECK(*t.us == Approx(97.0 * 0.95).epsilon(0.01));
  // tflops and bw are AITER's (at token 8), not moe-tune's own (at the timed M = 6).
  auto const aiter = aiter_row_figures(row.key, *t.us);
  CHECK(*t.tflops == aiter.tflops);
  CHECK(*t.bw == aiter.bw);
  auto const own = moetune_row_figures(b, *t.us);
  CHECK(own.M == 6);
  CHECK(aiter.M == 8);
  CHECK(aiter.tflops == Approx(own.tflops * 8.0 / 6.0).epsilon(0.01));
  CHECK(aiter.bw != Approx(own.bw));

  auto const dir = test::scratch_dir("tune_emit_rows");
  auto const file = dir / "tuned_fmoe.csv";
  CHECK(write_tuned_rows(file, rows).replaced == 0);
  auto const report = io::validate_files({file});
  INFO(read_file(file));
  CHECK(report.exit_code() == 0);
  CHECK(report.error_count() == 0);
  auto const text = read_file(file);
  CHECK(text.find("," + pair.stage1.name() + ",0.0%,") != std::string::npos);
  CHECK(text.find(",sm_90,") == std::string::npos);  // gfx is the first column
  CHECK(text.rfind("sm_90,132,8,5120,640,384,6,", std::string::npos) != std::string::npos);

  auto const table = io::read_fmoe_table(file);
  REQUIRE(table.rows().size() == 1);
  auto const& back = table.rows()[0];
  CHECK(back.key == row.key);
  CHECK(back.tuned.value() == t);
  // Writing the same rows again replaces, never duplicates.
  CHECK(write_tuned_rows(file, rows).replaced == 1);
  CHECK(io::read_fmoe_table(file).rows().size() == 1);
}

TEST_CASE("no qualified bucket: no file is written", "[tune]") {
  auto const buckets = run_two_buckets();
  auto const rows = tuned_rows(std::span(buckets).subspan(1), RowContext{"sm_90", 132});
  CHECK(rows.empty());
  auto const file = test::scratch_dir("tune_emit_none") / "tuned_fmoe.csv";
  CHECK(write_tuned_rows(file, rows).replaced == 0);
  CHECK_FALSE(std::filesystem::exists(file));
}

TEST_CASE("a re-tune that no longer qualifies withdraws the old row, and only that", "[tune]") {
  auto const buckets = run_two_buckets();
  RowContext const context{"sm_90", 132};
  auto const rows = tuned_rows(buckets, context);
  REQUIRE(rows.size() == 1);
  auto const file = test::scratch_dir("tune_emit_withdraw") / "tuned_fmoe.csv";
  // An unrelated row (another machine's) before ours; the file ends without a newline.
  auto other = rows[0];
  other.key.cu_num = 114;
  (void)write_tuned_rows(file, std::vector{other, rows[0]});
  auto const before = read_file(file);
  auto const ours_starts = before.rfind('\n', before.size() - 2) + 1;
  auto const header_and_other = before.substr(0, ours_starts - 1);
  auto const ours = before.substr(ours_starts, before.size() - 1 - ours_starts);
  std::filesystem::resize_file(file, before.size() - 1);  // drop the final newline

  std::vector<RowWithdrawal> const withdrawals{
      {tuned_row_key(buckets[0].key, context), "median reduction 0.1% below the 1% gate"},
      {tuned_row_key(buckets[1].key, context), "control failed twice"}};  // no row in the file
  auto const written = write_tuned_rows(file, {}, withdrawals);
  REQUIRE(written.withdrawn.size() == 1);
  auto const& w = written.withdrawn[0];
  CHECK(w.file == file);
  CHECK(w.line == 3);
  CHECK(w.text == ours);
  CHECK(w.key == rows[0].key.describe());
  CHECK(w.reason == "median reduction 0.1% below the 1% gate");
  CHECK(read_file(file) == header_and_other);  // the other row byte for byte, no newline added

  auto const json = to_json(std::span<const WithdrawnRow>(written.withdrawn));
  REQUIRE(json.size() == 1);
  CHECK(json[0]["row"] == ours);
  CHECK(json[0]["line"] == 3);
  auto const md = withdrawn_rows_markdown(written.withdrawn);
  CHECK_THAT(md, Catch::Contains("## Withdrawn rows") && Catch::Contains("`" + ours + "`") &&
                     Catch::Contains("below the 1% gate"));
  CHECK(withdrawn_rows_markdown({}).empty());
  CHECK_THAT(withdrawn_rows_console(written.withdrawn),
             Catch::StartsWith("withdrawn: " + file.string() + ":3: " + ours + " (median"));

  // The last row withdrawn: the header stays.
  (void)write_tuned_rows(file, {}, std::vector<RowWithdrawal>{{other.key, "gone"}});
  CHECK(read_file(file) == before.substr(0, before.find('\n')));
}

TEST_CASE("the JSON report holds every outcome, sample, gate input and the manifest", "[tune]") {
  auto const buckets = run_two_buckets();
  ProtocolOptions opt;
  auto const dir = test::scratch_dir("tune_emit_json");
  write_tune_report(dir / "report.json", buckets, opt, provenance());
  auto const j = nlohmann::json::parse(read_file(dir / "report.json"));
  CHECK(j["provenance"]["git_revision"] == "abc123");
  CHECK(j["provenance"]["decision_code_sha256"] == std::string(64, 'd'));
  CHECK(j["provenance"]["cu_num"] == 132);
  CHECK(j["protocol"]["confirm_blocks"] == 6);
  REQUIRE(j["buckets"].size() == 2);
  auto const& b0 = j["buckets"][0];
  CHECK(b0["qualified"] == true);
  REQUIRE(b0["candidates"].size() == 3);
  CHECK(b0["candidates"][0]["outcome"] == "qualified");
  CHECK(b0["candidates"][2]["outcome"] == "pruned");
  CHECK(b0["pipelines"][0]["screen_us"].size() == 5);
  CHECK(b0["pipelines"][0]["select_us"].size() == 9);
  REQUIRE(b0["confirmation"].size() == 1);
  CHECK(b0["confirmation"][0]["comparison"]["samples"].size() == 36);
  CHECK(b0["confirmation"][0]["versus_control"]["samples"].size() == 36);
  CHECK(b0["confirmation"][0]["layout"]["blocks"].size() == 6);
  CHECK(b0["confirmation"][0]["control"]["samples"].size() == 36);
  CHECK(b0["confirmation"][0]["gate"]["required_wins"] == stats::required_wins(opt.gate, 36));
  CHECK(b0["confirmation"][0]["control"]["passed"] == true);
  CHECK(b0["manifest"]["candidate"] == pipeline_name(make_bucket(8, 6, 2), 0));
  CHECK(b0["stage1_samples_us"].size() == 15);
  // The bucket's time split, in seconds.
  for (auto const* phase : {"setup", "check", "screen", "verify", "select", "confirm", "total"}) {
    CAPTURE(phase);
    REQUIRE(b0["seconds"].contains(phase));
    CHECK(b0["seconds"][phase].get<double>() >= 0.0);
  }
  CHECK(b0["seconds"]["total"].get<double>() == Approx(buckets[0].seconds.total()));
  // us1/us2 were timed at the row's token (8), not at the bucket's M (6).
  CHECK(b0["stage_times_m"] == 8);
  CHECK(buckets[0].stage_times_M == 8);
  // The row's figures as AITER defines them (at token), and moe-tune's own for the confirmed
  // full-MoE median at actual_m.
  auto const row = tuned_row(buckets[0], RowContext{"sm_90", 132}).value();
  CHECK(b0["figures"]["aiter_row"]["token"] == 8);
  CHECK(b0["figures"]["aiter_row"]["us"] == *row.tuned->us);
  CHECK(b0["figures"]["aiter_row"]["tflops"] == *row.tuned->tflops);
  CHECK(b0["figures"]["aiter_row"]["bw_gbps"] == *row.tuned->bw);
  double const confirmed = buckets[0].final_attempt()->comparison_summary.candidate_median_us;
  auto const own = moetune_row_figures(buckets[0], confirmed);
  CHECK(b0["figures"]["moetune"]["actual_m"] == 6);
  CHECK(b0["figures"]["moetune"]["us"] == confirmed);
  CHECK(b0["figures"]["moetune"]["tflops"] == own.tflops);
  CHECK(b0["figures"]["moetune"]["bw_gbps"] == own.bw);
  auto const& b1 = j["buckets"][1];
  CHECK(b1["qualified"] == false);
  CHECK(b1["figures"].is_null());
  CHECK(b1["confirmation"].size() == 2);
  CHECK(b1["confirmation"][1]["control"]["passed"] == false);
  CHECK(b1["candidates"][1]["outcome"] == "control_failed");
}

TEST_CASE("the Markdown summary has one table line per bucket", "[tune]") {
  auto const buckets = run_two_buckets();
  auto const md = markdown_summary(buckets, ProtocolOptions{}, provenance());
  std::istringstream in(md);
  std::vector<std::string> table;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| ", 0) == 0) table.push_back(line);
  }
  REQUIRE(table.size() == 3);  // header + 2 buckets (the separator starts with "|-")
  CHECK_THAT(table[0], Catch::Contains("baseline → tuned (µs)") && Catch::Contains("wins/36"));
  CHECK_THAT(table[1], Catch::StartsWith("| 8 | 6 | "));
  CHECK_THAT(table[1], Catch::Contains("/36 | pass") && Catch::Contains("qualified"));
  auto const& s = buckets[0].attempts[0].comparison_summary;
  CHECK_THAT(table[1], Catch::Contains(fmt::format("{:.2f} → {:.2f}", s.baseline_median_us,
                                                   s.candidate_median_us)));
  CHECK_THAT(table[2], Catch::StartsWith("| 16 | 12 | "));
  CHECK_THAT(table[2], Catch::Contains("FAIL ×2") && Catch::Contains("control_failed"));
  CHECK_THAT(md, Catch::Contains("not calibrated"));
}
