#include "autotune/io/fmoe_table.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "autotune/core/error.hpp"
#include "test/io/io_test_files.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::io;
using moetune::test::input_error_from;
using moetune::test::tuned_header;
using moetune::test::tuned_row;
using moetune::test::untuned_header;
using moetune::test::untuned_row;
using moetune::test::with_cell;
using moetune::test::write_text;

namespace {

std::string lines(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) {
    out += p;
    out += '\n';
  }
  return out;
}

// Reads `text` as a file named `name`; returns the InputError it must raise.
InputError table_error(const char* test, const std::string& name, const std::string& text) {
  auto const dir = moetune::test::scratch_dir(test);
  auto const path = write_text(dir, name, text);
  return input_error_from([&] { (void)read_fmoe_table(path); });
}

FmoeTable read_text(const char* test, const std::string& name, const std::string& text) {
  auto const dir = moetune::test::scratch_dir(test);
  return read_fmoe_table(write_text(dir, name, text));
}

std::string untuned_with(std::string_view column, std::string_view value, int token = 16) {
  return with_cell(untuned_row(token), untuned_header, column, value);
}

}  // namespace

TEST_CASE("fmoe: a tuned row converts to typed key and result", "[io]") {
  auto const table = read_text("fmoe_typed", "t.csv", lines({tuned_header, tuned_row(1)}));
  CHECK(table.kind() == FmoeFileKind::tuned);
  REQUIRE(table.rows().size() == 1);
  auto const& row = table.rows()[0];
  CHECK(row.line == 2);
  CHECK(row.key.gfx == "gfx950");
  CHECK(row.key.cu_num == 256);
  CHECK(row.key.token == 1);
  CHECK(row.key.model_dim == 7168);
  CHECK(row.key.inter_dim == 512);
  CHECK(row.key.expert == 384);
  CHECK(row.key.topk == 6);
  CHECK(row.key.act_type == ActivationType::silu);
  CHECK(row.key.q_dtype_a == TorchDtype::fp8_e4m3fn);
  CHECK(row.key.q_dtype_w == TorchDtype::fp4x2_e2m1fn);
  CHECK(row.key.q_type == QuantType::per_1x32);
  CHECK(row.key.use_g1u1);
  CHECK_FALSE(row.key.doweight_stage1);
  CHECK(row.key.tag.empty());
  CHECK_FALSE(row.key.fhmoe);
  REQUIRE(row.tuned);
  CHECK(row.tuned->block_m == 32);
  CHECK(row.tuned->us1 == 12.0719);
  CHECK(row.tuned->us == 20.9291);
  CHECK(row.tuned->err1 == 0.0);
  CHECK(row.tuned->kernel_name1 == "k1");
  CHECK(row.tuned->run_1stage == false);
  CHECK(row.tuned->tflops == 6.31);
  CHECK(row.tuned->bw == 202009.64);
  CHECK(table.warnings().empty());
}

TEST_CASE("fmoe: file kinds are detected from the header", "[io]") {
  CHECK(read_text("kind_u", "u.csv", lines({untuned_header, untuned_row(1)})).kind() ==
        FmoeFileKind::untuned);
  auto const with_arch =
      read_text("kind_u2", "u.csv",
                lines({std::string("gfx,cu_num,") + std::string(untuned_header) + ",actual_m",
                       "gfx950,256," + untuned_row(8) + ",6"}));
  CHECK(with_arch.kind() == FmoeFileKind::untuned);
  CHECK(with_arch.rows()[0].key.gfx == "gfx950");
  CHECK(with_arch.rows()[0].actual_m == 6);
  auto const fh = read_text(
      "kind_fh", "fh.csv",
      lines({"gfx,cu_num,token,model_dim,inter_dim,expert,topk,shared_expert_id,act_type,dtype,"
             "q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1,hidden_pad,intermediate_pad,"
             "gate_mode,block_m,ksplit,kernelName1,kernelName2",
             "gfx950,256,1,7168,384,385,7,384,ActivationType.Silu,torch.bfloat16,"
             "torch.float8_e4m3fn,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,0,0,"
             "GateMode.SEPARATED,32,-1,a,b"}));
  CHECK(fh.kind() == FmoeFileKind::fhmoe_tuned);
  REQUIRE(fh.rows()[0].key.fhmoe);
  CHECK(fh.rows()[0].key.fhmoe->shared_expert_id == 384);
  CHECK(fh.rows()[0].key.fhmoe->gate_mode == GateMode::separated);
  CHECK(fh.rows()[0].tuned->ksplit == -1);
}

TEST_CASE("fmoe: bad header", "[io]") {
  std::string header(untuned_header);
  header.replace(header.find(",topk"), 5, "");
  auto const missing = table_error("hdr_missing", "u.csv", lines({header}));
  CHECK(missing.line() == 1);
  CHECK(missing.message() ==
        "bad header: missing column 'topk', required by the untuned fMoE list layout");

  auto const garbage = table_error("hdr_garbage", "u.csv", lines({"1,2,3", "4,5,6"}));
  CHECK(garbage.line() == 1);
  CHECK(garbage.column() == 1);
  CHECK(garbage.message().starts_with("not an fMoE table: expected a header naming columns"));

  auto const actual_m =
      table_error("hdr_actual_m", "t.csv", lines({std::string(tuned_header) + ",actual_m"}));
  CHECK(actual_m.line() == 1);
  CHECK(actual_m.column() == 214);
  CHECK(actual_m.message() ==
        "column 'actual_m' does not belong in the tuned fMoE table layout (actual_m is for "
        "untuned lists only)");
}

TEST_CASE("fmoe: a non-numeric field names file, line, column and the expected form", "[io]") {
  std::string text = std::string(tuned_header) + "\n";
  for (int token : {1, 2, 4, 8, 16}) text += tuned_row(token) + "\n";
  text += with_cell(tuned_row(32), tuned_header, "topk", "x6") + "\n";
  auto const e = table_error("nonnumeric", "tuned.csv", text);
  CHECK(e.line() == 7);
  CHECK(e.column() == 28);
  CHECK(e.message() == "column 'topk': expected a positive integer, found 'x6'");
  CHECK(std::string(e.what()).ends_with(
      "tuned.csv:7:28: error: column 'topk': expected a positive integer, found 'x6'"));
}

TEST_CASE("fmoe: an unknown enum spelling lists the valid ones", "[io]") {
  auto const e = table_error(
      "enum", "u.csv", lines({untuned_header, untuned_with("act_type", "ActivationType.Relu")}));
  CHECK(e.line() == 2);
  CHECK(e.column() == 19);
  CHECK(e.message() ==
        "column 'act_type': expected an activation type (one of ActivationType.Silu, "
        "ActivationType.Gelu, ActivationType.Swiglu, ActivationType.Situv2, "
        "ActivationType.GeluTanh, ActivationType.No), found "
        "'ActivationType.Relu'");
}

TEST_CASE("fmoe: zero or negative dimensions are rejected", "[io]") {
  auto const zero =
      table_error("dim_zero", "u.csv", lines({untuned_header, untuned_with("model_dim", "0")}));
  CHECK(zero.line() == 2);
  CHECK(zero.column() == 4);
  CHECK(zero.message() == "column 'model_dim': expected a positive integer, found '0'");

  auto const negative = table_error(
      "dim_neg", "u.csv", lines({untuned_header, untuned_row(1), untuned_with("expert", "-8")}));
  CHECK(negative.line() == 3);
  CHECK(negative.column() == 13);
  CHECK(negative.message() == "column 'expert': expected a positive integer, found '-8'");

  auto const token =
      table_error("dim_token", "u.csv", lines({untuned_header, untuned_with("token", "")}));
  CHECK(token.column() == 1);
  CHECK(token.message() == "column 'token': expected a positive integer, found an empty field");
}

TEST_CASE("fmoe: K must be a multiple of the scale block", "[io]") {
  auto const k32 =
      table_error("k32", "u.csv", lines({untuned_header, untuned_with("model_dim", "7000")}));
  CHECK(k32.line() == 2);
  CHECK(k32.column() == 4);
  CHECK(k32.message() ==
        "column 'model_dim': expected a multiple of 32 under QuantType.per_1x32 (one scale per "
        "32 elements along K), found 7000");

  auto const inter =
      table_error("k32i", "u.csv", lines({untuned_header, untuned_with("inter_dim", "500")}));
  CHECK(inter.column() == 9);
  CHECK(inter.message().starts_with("column 'inter_dim': expected a multiple of 32"));

  auto const k128 = table_error(
      "k128", "u.csv",
      lines({untuned_header, with_cell(untuned_row(16, "7168,192,384,6", "QuantType.per_1x128"),
                                       untuned_header, "inter_dim", "192")}));
  CHECK(k128.message() ==
        "column 'inter_dim': expected a multiple of 128 under QuantType.per_1x128 (one scale "
        "per 128 elements along K), found 192");

  // per_Token has no block structure along K.
  CHECK_NOTHROW(
      read_text("ktok", "u.csv",
                lines({untuned_header, untuned_row(16, "7000,500,8,2", "QuantType.per_Token")})));
}

TEST_CASE("fmoe: topk > expert", "[io]") {
  auto const e =
      table_error("topk", "u.csv", lines({untuned_header, untuned_row(16, "7168,512,4,6")}));
  CHECK(e.line() == 2);
  CHECK(e.column() == 15);
  CHECK(e.message() ==
        "column 'topk': 6 exceeds expert (4): a token cannot be routed to more experts than "
        "exist");
}

TEST_CASE("fmoe: flags must be 0 or 1, ksplit >= -1", "[io]") {
  auto const flag =
      table_error("flag", "u.csv", lines({untuned_header, untuned_with("use_g1u1", "2")}));
  CHECK(flag.message() == "column 'use_g1u1': expected 0 or 1, found '2'");
  auto const ksplit =
      table_error("ksplit", "t.csv",
                  lines({tuned_header, with_cell(tuned_row(1), tuned_header, "ksplit", "-2")}));
  CHECK(ksplit.column() == 133);
  CHECK(ksplit.message() == "column 'ksplit': expected an integer >= -1, found '-2'");
  auto const err =
      table_error("errpct", "t.csv",
                  lines({tuned_header, with_cell(tuned_row(1), tuned_header, "err1", "0.0x")}));
  CHECK(err.message() ==
        "column 'err1': expected a non-negative percentage like 0.0% (or a bare fraction like "
        "0.0), found '0.0x'");
}

TEST_CASE("fmoe: actual_m must lie in 1..token", "[io]") {
  std::string const header = std::string(untuned_header) + ",actual_m";
  auto const big = table_error("am_big", "u.csv", lines({header, untuned_row(8) + ",9"}));
  CHECK(big.line() == 2);
  CHECK(big.column() == 119);
  CHECK(big.message() ==
        "column 'actual_m': expected at most token (8): a bucket is timed at an M it covers, "
        "found 9");
  auto const zero = table_error("am_zero", "u.csv", lines({header, untuned_row(8) + ",0"}));
  CHECK(zero.message() == "column 'actual_m': expected a positive integer, found '0'");
  auto const ok =
      read_text("am_ok", "u.csv", lines({header, untuned_row(8) + ",6", untuned_row(16) + ","}));
  CHECK(ok.rows()[0].actual_m == 6);
  CHECK_FALSE(ok.rows()[1].actual_m);
}

TEST_CASE("fmoe: one field short is padded with a warning, two short is an error", "[io]") {
  std::string const full = tuned_row(1);
  std::string const short_one = full.substr(0, full.size() - 1);  // drops the empty _tag
  auto const table = read_text("short1", "t.csv", lines({tuned_header, full, short_one}));
  REQUIRE(table.rows().size() == 2);
  CHECK(table.rows()[1].missing_fields == 1);
  CHECK(table.rows()[1].cells.size() == 29);
  REQUIRE(table.warnings().size() == 1);
  auto const& w = table.warnings()[0];
  CHECK(w.severity == Severity::warning);
  CHECK(w.line == 3);
  CHECK(w.column == static_cast<std::int64_t>(short_one.size()) + 1);
  CHECK(
      w.message.starts_with("row has 28 fields, the header 29: padded with an empty '_tag' field"));

  std::string const short_two = full.substr(0, full.rfind(',', full.size() - 2));
  auto const e = table_error("short2", "t.csv", lines({tuned_header, full, short_two}));
  CHECK(e.line() == 3);
  CHECK(e.column() == static_cast<std::int64_t>(short_two.size()) + 1);
  CHECK(e.message() ==
        "too few fields: expected 29 (as in the header), found 27; first missing column is 'bw'");
}

TEST_CASE("fmoe: unknown columns are kept with a warning", "[io]") {
  auto const table = read_text(
      "unknown", "u.csv", lines({std::string(untuned_header) + ",note", untuned_row(1) + ",hi"}));
  REQUIRE(table.warnings().size() == 1);
  CHECK(table.warnings()[0].line == 1);
  CHECK(table.warnings()[0].column == 106);
  CHECK(table.warnings()[0].message ==
        "unknown column 'note': kept as text and written back unchanged, but moe-tune does not "
        "check it");
  CHECK(table.rows()[0].cells.back() == "hi");
}

TEST_CASE("fmoe: parse_fmoe_file collects every bad row instead of stopping", "[io]") {
  auto const dir = moetune::test::scratch_dir("collect");
  auto const path = write_text(dir, "u.csv",
                               lines({untuned_header, untuned_with("topk", "0"), untuned_row(2),
                                      untuned_with("q_type", "QuantType.per_tok", 4)}));
  auto const result = parse_fmoe_file(path);
  CHECK(result.data_rows == 3);
  CHECK(result.table.rows().size() == 1);
  CHECK(result.error_count() == 2);
  REQUIRE(result.diagnostics.size() == 2);
  CHECK(result.diagnostics[0].line == 2);
  CHECK(result.diagnostics[1].line == 4);
  CHECK(result.diagnostics[1].column == 96);
}
