#include "autotune/io/fmoe_writer.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/io/number_format.hpp"
#include "test/io/io_test_files.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::io;
using moetune::test::input_error_from;
using moetune::test::tuned_header;
using moetune::test::tuned_row;
using moetune::test::untuned_header;
using moetune::test::untuned_row;
using moetune::test::write_text;

namespace {

constexpr std::string_view old_tuned_header =
    "cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,"
    "use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,"
    "run_1stage,tflops,bw,_tag";

// A freshly tuned result for the dsv4 geometry at `token`.
FmoeRow new_tuned_row(std::int64_t token, std::string gfx = "gfx950") {
  FmoeRow row;
  row.key.gfx = std::move(gfx);
  row.key.cu_num = 256;
  row.key.token = token;
  row.key.model_dim = 7168;
  row.key.inter_dim = 512;
  row.key.expert = 384;
  row.key.topk = 6;
  row.key.act_type = ActivationType::silu;
  row.key.dtype = TorchDtype::bf16;
  row.key.q_dtype_a = TorchDtype::fp8_e4m3fn;
  row.key.q_dtype_w = TorchDtype::fp4x2_e2m1fn;
  row.key.q_type = QuantType::per_1x32;
  row.key.use_g1u1 = true;
  row.key.doweight_stage1 = false;
  TunedResult t;
  t.block_m = 16;
  t.ksplit = 0;
  t.us1 = 10.123456;
  t.kernel_name1 = "moetune_s1_a8w4_t16x128x256";
  t.err1 = 0.0;
  t.us2 = 5.00004;
  t.kernel_name2 = "moetune_s2_a8w4_t16x128x256";
  t.err2 = 0.003;
  t.us = total_us(*t.us1, *t.us2);
  t.run_1stage = false;
  t.xbf16 = false;
  t.flat = 0;
  t.tflops = 7.456;
  t.bw = 123456.789;
  row.tuned = t;
  return row;
}

}  // namespace

TEST_CASE("writer: an unmodified table is written back byte-identical", "[io]") {
  auto const dir = moetune::test::scratch_dir("w_roundtrip");
  // No final newline and a short row (one field missing): both must survive untouched.
  std::string const full = tuned_row(1);
  std::string const text = std::string(tuned_header) + "\n" + full + "\n" +
                           full.substr(0, full.size() - 1).replace(11, 1, "2");
  auto const path = write_text(dir, "t.csv", text);
  auto const table = read_fmoe_table(path);
  CHECK_FALSE(table.ends_with_newline());
  CHECK(render_fmoe_table(table) == text);
  auto const out = dir / "copy.csv";
  write_fmoe_table(table, out);
  CHECK(read_file(out) == text);
}

TEST_CASE("writer: new rows are formatted AITER's way in the newest layout", "[io]") {
  auto const dir = moetune::test::scratch_dir("w_new");
  auto table = make_fmoe_table(dir / "new.csv", FmoeFileKind::tuned);
  CHECK(table.header().raw == tuned_header);
  CHECK_FALSE(table.upsert(new_tuned_row(8)));
  write_fmoe_table(table);
  CHECK(read_file(dir / "new.csv") ==
        std::string(tuned_header) +
            "\ngfx950,256,8,7168,512,384,6,ActivationType.Silu,torch.bfloat16,"
            "torch.float8_e4m3fn,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,16,0,10.1235,"
            "moetune_s1_a8w4_t16x128x256,0.0%,5.0,moetune_s2_a8w4_t16x128x256,0.3%,15.1235,0,0,0,"
            "7.46,123456.79,\n");
  // And it reads back to the same typed row.
  auto const again = read_fmoe_table(dir / "new.csv");
  REQUIRE(again.rows().size() == 1);
  CHECK(again.rows()[0].key == new_tuned_row(8).key);
  CHECK(again.rows()[0].tuned->us == 15.1235);
}

TEST_CASE("writer: replacing a row keeps the others' text and the row's position", "[io]") {
  auto const dir = moetune::test::scratch_dir("w_replace");
  std::string const text = std::string(tuned_header) + "\n" + tuned_row(4) + "\n" + tuned_row(8) +
                           "\n" + tuned_row(16) + "\n";
  auto const path = write_text(dir, "t.csv", text);
  CHECK(merge_rows_into_file(path, std::vector{new_tuned_row(8), new_tuned_row(32)},
                             FmoeFileKind::tuned) == 1);
  auto const out = read_file(path);
  auto const table = read_fmoe_table(path);
  REQUIRE(table.rows().size() == 4);
  CHECK(table.rows()[0].raw == tuned_row(4));
  CHECK(table.rows()[1].key.token == 8);
  CHECK(table.rows()[1].tuned->block_m == 16);
  CHECK(table.rows()[2].raw == tuned_row(16));
  CHECK(table.rows()[3].key.token == 32);
  CHECK(out.starts_with(std::string(tuned_header) + "\n" + tuned_row(4) + "\ngfx950,256,8,"));
}

TEST_CASE("writer: removing rows keeps every other line byte for byte", "[io]") {
  auto const dir = moetune::test::scratch_dir("w_remove");
  // A short last row without a final newline: the untouched lines must survive as they are.
  std::string const full16 = tuned_row(16);
  std::string const short16 = full16.substr(0, full16.size() - 1);
  std::string const text = std::string(tuned_header) + "\n" + tuned_row(4) + "\n" + tuned_row(8) +
                           "\n" + short16;
  auto const path = write_text(dir, "t.csv", text);
  auto const key = [&](std::int64_t token) { return new_tuned_row(token).key; };

  SECTION("a removed row comes back with its line and text; the rest is unchanged") {
    auto const update = update_rows_in_file(path, {}, std::vector{key(8), key(64)},
                                            FmoeFileKind::tuned);
    REQUIRE(update.removed.size() == 1);  // token 64 is not in the file
    CHECK(update.removed[0].line == 3);
    CHECK(update.removed[0].raw == tuned_row(8));
    CHECK(read_file(path) == std::string(tuned_header) + "\n" + tuned_row(4) + "\n" + short16);
  }
  SECTION("when every row goes the header stays") {
    auto const update = update_rows_in_file(path, {}, std::vector{key(4), key(8), key(16)},
                                            FmoeFileKind::tuned);
    CHECK(update.removed.size() == 3);
    CHECK(read_file(path) == std::string(tuned_header));
  }
  SECTION("a key that also gets a new row is replaced in place, not removed") {
    auto const update = update_rows_in_file(path, std::vector{new_tuned_row(8)},
                                            std::vector{key(8)}, FmoeFileKind::tuned);
    CHECK(update.removed.empty());
    CHECK(update.replaced == 1);
    auto const table = read_fmoe_table(path);
    REQUIRE(table.rows().size() == 3);
    CHECK(table.rows()[1].key.token == 8);
    CHECK(table.rows()[1].tuned->block_m == 16);
  }
  SECTION("nothing to remove: the file is not rewritten, a missing file not created") {
    auto const before = std::filesystem::last_write_time(path);
    CHECK(update_rows_in_file(path, {}, std::vector{key(64)}, FmoeFileKind::tuned).removed.empty());
    CHECK(std::filesystem::last_write_time(path) == before);
    CHECK(read_file(path) == text);
    auto const absent = dir / "absent.csv";
    CHECK(update_rows_in_file(absent, {}, std::vector{key(8)}, FmoeFileKind::tuned).removed.empty());
    CHECK_FALSE(std::filesystem::exists(absent));
  }
}

TEST_CASE("writer: appending to an older layout keeps its column order", "[io]") {
  auto const dir = moetune::test::scratch_dir("w_old");
  std::string const old_row =
      "80,4,2304,1536,8,2,ActivationType.Gelu,torch.bfloat16,torch.float8_e4m3fnuz,"
      "torch.float8_e4m3fnuz,QuantType.per_Token,1,1,32,0,17.8008,k1,0.0%,14.5115,k2,0.0%,"
      "32.3123,0,5.26,2629.41,";
  auto const path = write_text(dir, "old.csv", std::string(old_tuned_header) + "\n" + old_row);

  SECTION("a row naming a gfx AITER would not fill in from its cu_num is refused") {
    // AITER fills a legacy row's gfx from cu_num (256 -> gfx950): gfx942 would be lost.
    auto const e = input_error_from([&] {
      merge_rows_into_file(path, std::vector{new_tuned_row(8, "gfx942")}, FmoeFileKind::tuned);
    });
    CHECK(e.line() == 1);
    CHECK(e.message().find("it sets gfx=gfx942 but the file has no 'gfx' column") !=
          std::string::npos);
    CHECK(read_file(path) == std::string(old_tuned_header) + "\n" + old_row);
  }
  SECTION("a row whose gfx AITER fills in from cu_num goes in without it") {
    merge_rows_into_file(path, std::vector{new_tuned_row(8, "gfx950")}, FmoeFileKind::tuned);
    auto const text = read_file(path);
    CHECK(text.find("\n256,8,7168,512,384,6,") != std::string::npos);
    CHECK(text.find("gfx950") == std::string::npos);
  }
  SECTION("without gfx, xbf16/flat of 0 are dropped and the row takes the file's order") {
    merge_rows_into_file(path, std::vector{new_tuned_row(8, "")}, FmoeFileKind::tuned);
    // The file had no final newline; it still has none, and the old row is untouched.
    CHECK(read_file(path) ==
          std::string(old_tuned_header) + "\n" + old_row +
              "\n256,8,7168,512,384,6,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fn,"
              "torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,16,0,10.1235,"
              "moetune_s1_a8w4_t16x128x256,0.0%,5.0,moetune_s2_a8w4_t16x128x256,0.3%,15.1235,0,"
              "7.46,123456.79,");
  }
  SECTION("xbf16 = 1 cannot be dropped") {
    auto row = new_tuned_row(8, "");
    row.tuned->xbf16 = true;
    auto const e = input_error_from(
        [&] { merge_rows_into_file(path, std::vector{row}, FmoeFileKind::tuned); });
    CHECK(e.message().find("it sets xbf16=1 but the file has no 'xbf16' column") !=
          std::string::npos);
  }
}

TEST_CASE("writer: rows of another kind or with unwritable text are refused", "[io]") {
  auto const dir = moetune::test::scratch_dir("w_kind");
  auto const path =
      write_text(dir, "u.csv", std::string(untuned_header) + "\n" + untuned_row(1) + "\n");
  auto const kind = input_error_from(
      [&] { merge_rows_into_file(path, std::vector{new_tuned_row(8)}, FmoeFileKind::tuned); });
  CHECK(kind.message() ==
        "the file is of kind 'untuned fMoE list'; cannot add rows of kind 'tuned fMoE table' "
        "to it");

  auto row = new_tuned_row(8);
  row.tuned->kernel_name1 = "a,b";
  auto table = make_fmoe_table(dir / "t.csv", FmoeFileKind::tuned);
  table.upsert(row);
  auto const comma = input_error_from([&] { write_fmoe_table(table); });
  CHECK(comma.message().find("its 'kernelName1' value 'a,b' contains a comma") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "t.csv"));
}

TEST_CASE("writer: an unwritable output is a FileError and leaves nothing behind", "[io]") {
  auto const dir = moetune::test::scratch_dir("w_unwritable");
  auto const blocker = write_text(dir, "not_a_dir", "x");
  auto table = make_fmoe_table(blocker / "t.csv", FmoeFileKind::tuned);
  table.upsert(new_tuned_row(8));
  try {
    write_fmoe_table(table);
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(e.file() == blocker / "t.csv");
    CHECK(std::string(e.what()).find("cannot create a temporary file beside") != std::string::npos);
  }
  CHECK(read_file(blocker) == "x");
}
