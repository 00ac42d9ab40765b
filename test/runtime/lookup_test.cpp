// The runtime's lookup and fallback rules without a GPU: AITER's bucket rounding, the key a
// layer's rows must have, which row serves which bucket, and when the default configuration
// takes over (no row, a row that does not parse, does not fit, or does not compile).
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/runtime/bucket_choice.hpp"
#include "autotune/runtime/bucket_plan.hpp"
#include "autotune/runtime/runtime_error.hpp"
#include "autotune/search/default_config.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::runtime;

namespace {

const DeviceIdentity h200{"sm_90", 132};

LayerSpec backbone(std::int64_t max_tokens, moe::DtypePath dtype = moe::DtypePath::a16w4) {
  LayerSpec layer;
  layer.shape.hidden = 5120;
  layer.shape.inter = 640;
  layer.shape.experts = 384;
  layer.shape.topk = 6;
  layer.shape.dtype = dtype;
  layer.max_tokens = max_tokens;
  return layer;
}

// A real tuned table: session 9's published sm_90 table, kept in its results folder since
// session 10 withdrew its rows from the current table (all slower than the wgmma default).
std::filesystem::path tuned_table() {
  return test::source_dir() / "results/sm_90/2026-12-02-h200-s9/published_dsv41_flash_tp4_a16w4_tuned_fmoe.csv";
}

constexpr const char* header =
    "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,"
    "use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,"
    "run_1stage,xbf16,flat,tflops,bw,_tag\n";

// One tuned row of the backbone A16W4 layer for `token` with the given kernel names.
std::string backbone_row(std::int64_t token, const std::string& name1, const std::string& name2,
                         int block_m = 8, const std::string& gfx = "sm_90", int cu_num = 132,
                         const std::string& tag = "") {
  return fmt::format("{},{},{},5120,640,384,6,ActivationType.Silu,torch.bfloat16,torch.bfloat16,"
                     "torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,{},0,10.0,{},0.0%,10.0,{},"
                     "0.0%,20.0,0,0,0,1.0,1.0,{}\n",
                     gfx, cu_num, token, block_m, name1, name2, tag);
}

std::filesystem::path write_table(const char* test_name, const std::string& rows,
                                  const char* file = "tuned.csv") {
  auto const path = test::scratch_dir(test_name) / file;
  std::ofstream(path) << header << rows;
  return path;
}

// Compiles nothing: every configuration "compiles" except the names in `broken`.
CompileCheck compiles_except(std::set<std::string> broken = {}) {
  return [broken = std::move(broken)](const search::KernelConfig& c) -> std::optional<std::string> {
    if (broken.count(c.name())) return std::string("error: deliberately broken");
    return std::nullopt;
  };
}

const char* s1_name = "moetune_s1_a16w4_bf16_t8x16x256_w4_kp1_nk16_wv4_st2_sab_rp_gi_dw0";
const char* s2_name = "moetune_s2_a16w4_bf16_t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic";

}  // namespace

TEST_CASE("M rounds up to the next power of two, as AITER looks rows up") {
  CHECK(bucket_tokens(0) == 1);
  CHECK(bucket_tokens(1) == 1);
  CHECK(bucket_tokens(2) == 2);
  CHECK(bucket_tokens(3) == 4);
  CHECK(bucket_tokens(8) == 8);
  CHECK(bucket_tokens(9) == 16);
  CHECK(bucket_tokens(1000) == 1024);
  CHECK(bucket_index(1) == 0);
  CHECK(bucket_index(3) == 2);
  CHECK(bucket_index(8) == 3);
  CHECK(bucket_index(9) == 4);
  CHECK(bucket_list(1) == std::vector<std::int64_t>{1});
  CHECK(bucket_list(100) == std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128});
  for (std::int64_t m = 1; m <= 5000; ++m) {
    auto const list = bucket_list(5000);
    REQUIRE(list.at(static_cast<std::size_t>(bucket_index(m))) == bucket_tokens(m));
  }
}

TEST_CASE("the layer key spells the data path as AITER does") {
  auto key = layer_key(backbone(64), h200, 16);
  CHECK(key.gfx == "sm_90");
  CHECK(key.cu_num == 132);
  CHECK(key.token == 16);
  CHECK(key.q_dtype_a == io::TorchDtype::bf16);
  CHECK(key.q_dtype_w == io::TorchDtype::fp4x2_e2m1fn);
  CHECK(key.q_type == io::QuantType::per_1x32);
  auto a8 = backbone(64, moe::DtypePath::a8w4);
  CHECK(layer_key(a8, h200, 1).q_dtype_a == io::TorchDtype::fp8_e4m3fn);
  a8.shape.fp8_flavor = moe::Fp8Flavor::fnuz;
  CHECK(layer_key(a8, {"gfx942", 304}, 1).q_dtype_a == io::TorchDtype::fp8_e4m3fnuz);
  auto const bf = layer_key(backbone(64, moe::DtypePath::bf16), h200, 1);
  CHECK(bf.q_dtype_w == io::TorchDtype::bf16);
  CHECK(bf.q_type == io::QuantType::no);
}

TEST_CASE("a tuned sm_90 table (session 9's) serves the backbone layer on an H200 only") {
  TunedTables tables;
  tables.load(tuned_table());
  auto const rows = tables.rows_for(layer_key(backbone(1024), h200, 1));
  std::vector<std::int64_t> tokens;
  for (auto const& [t, source] : rows) tokens.push_back(t);
  CHECK(tokens == std::vector<std::int64_t>{8, 16, 32, 64, 128});
  CHECK(rows.at(8).origin.ends_with("published_dsv41_flash_tp4_a16w4_tuned_fmoe.csv:2"));

  // Another CU count, arch, tag or data path: no row (AITER matches every key column).
  CHECK(tables.rows_for(layer_key(backbone(1024), {"sm_90", 114}, 1)).empty());
  CHECK(tables.rows_for(layer_key(backbone(1024), {"gfx942", 132}, 1)).empty());
  auto tagged = backbone(1024);
  tagged.tag = "draft";
  CHECK(tables.rows_for(layer_key(tagged, h200, 1)).empty());
  CHECK(tables.rows_for(layer_key(backbone(1024, moe::DtypePath::a8w4), h200, 1)).empty());
  // The draft layer (E128 top3) has its own rows.
  auto draft = backbone(1024);
  draft.shape.experts = 128;
  draft.shape.topk = 3;
  CHECK(tables.rows_for(layer_key(draft, h200, 1)).size() == 3);
}

TEST_CASE("every bucket gets the row AITER would use, or the default") {
  TunedTables tables;
  tables.load(tuned_table());
  auto const layer = backbone(200);  // buckets 1 .. 256
  auto const choices = choose_buckets(layer, search::Arch::sm_90, h200, tables, compiles_except());
  REQUIRE(choices.size() == 9);
  for (auto const& c : choices) {
    INFO("bucket " << c.tokens);
    bool const tuned = c.tokens >= 8 && c.tokens <= 128;
    CHECK(c.source == (tuned ? ChoiceSource::tuned_row : ChoiceSource::default_no_row));
    if (tuned) {
      CHECK(c.row_origin.find("dsv41_flash_tp4_a16w4_tuned_fmoe.csv:") != std::string::npos);
      CHECK(c.stage1.repacked);  // the table's kernels read the repacked layout
    } else {
      auto const d = search::default_config(layer.shape, search::Arch::sm_90, c.tokens);
      CHECK(c.stage1 == d.stage1);
      CHECK(c.stage2 == d.stage2);
      CHECK(c.rejection.empty());
    }
  }
  CHECK(choices.at(3).stage1.name() == "moetune_s1_a16w4_bf16_t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp_gi_dw0");
}

TEST_CASE("a row that cannot run falls back to the default and says why") {
  auto const path = write_table(
      "runtime_fallback",
      backbone_row(1, "ck_moe_stage1_some_aiter_kernel", "ck_moe_stage2_other") +  // not ours
          backbone_row(2, s2_name, s1_name) +                                       // swapped
          backbone_row(4, s1_name, s2_name) +                                       // compile fails
          backbone_row(8, s1_name, s2_name, 16) +                                  // block_m column
          backbone_row(16, "moetune_s1_a8w4_fp8_t8x32x256_w4_kp1_nk16_wv0_st2_sab_gi_dw0", s2_name) +
          backbone_row(32, s1_name, s2_name));                                     // fine
  TunedTables tables;
  tables.load(path);
  // s1_name "fails to compile": buckets 4 and 32, whose rows are otherwise fine, fall back.
  auto const choices = choose_buckets(backbone(32), search::Arch::sm_90, h200, tables,
                                      compiles_except({s1_name}));
  REQUIRE(choices.size() == 6);
  auto const& c1 = choices[0];
  CHECK(c1.source == ChoiceSource::default_row_rejected);
  CHECK_THAT(c1.rejection, Catch::Contains("not a moe-tune kernel"));
  CHECK_THAT(choices[1].rejection, Catch::Contains("stage-2 kernel"));
  CHECK_THAT(choices[2].rejection, Catch::Contains("did not compile: error: deliberately broken"));
  CHECK_THAT(choices[3].rejection, Catch::Contains("block_m column 16"));
  CHECK_THAT(choices[4].rejection, Catch::Contains("is for a8w4, the layer is a16w4"));
  CHECK_THAT(choices[5].rejection, Catch::Contains("did not compile"));
  for (auto const& c : choices) {
    INFO("bucket " << c.tokens << ": " << c.rejection);
    CHECK(c.row_origin.starts_with(path.string() + ":"));
    auto const d = search::default_config(backbone(32).shape, search::Arch::sm_90, c.tokens);
    CHECK(c.stage1 == d.stage1);
    CHECK(c.stage2 == d.stage2);
  }

  // With the kernels compiling, bucket 32's row is used.
  auto const fine = choose_buckets(backbone(32), search::Arch::sm_90, h200, tables, compiles_except());
  CHECK(fine[5].source == ChoiceSource::tuned_row);
  CHECK(fine[5].stage1.name() == s1_name);
  CHECK(fine[2].source == ChoiceSource::tuned_row);
}

TEST_CASE("a default configuration that does not compile is an error") {
  TunedTables tables;
  auto const layer = backbone(4);
  auto const d = search::default_config(layer.shape, search::Arch::sm_90, 2);
  try {
    (void)choose_buckets(layer, search::Arch::sm_90, h200, tables, compiles_except({d.stage1.name()}));
    FAIL("no error");
  } catch (const RuntimeError& e) {
    CHECK(e.kind() == ErrorKind::compile);
    CHECK_THAT(std::string(e.what()), Catch::Contains(d.stage1.name()));
  }
}

TEST_CASE("tables are read strictly and a key may be tuned once") {
  auto const one = write_table("runtime_tables", backbone_row(8, s1_name, s2_name), "one.csv");
  auto const two = one.parent_path() / "two.csv";
  std::ofstream(two) << header << backbone_row(8, s1_name, s2_name);
  TunedTables tables;
  tables.load(one);
  try {
    tables.load(two);
    FAIL("duplicate key accepted");
  } catch (const Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("two.csv:2") && Catch::Contains("one.csv:2"));
  }
  CHECK(tables.table_count() == 1);
  // An untuned shape list is not a tuned table.
  CHECK_THROWS_WITH(tables.load(test::source_dir() / "shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv"),
                    Catch::Contains("tuned fMoE tables"));
  // A malformed cell is the reader's error, with its location.
  auto const bad = one.parent_path() / "bad.csv";
  std::ofstream(bad) << header << "sm_90,132,8,5120,640,384,6,ActivationType.Silu,torch.bfloat16,"
                                  "torch.bfloat16,torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,"
                                  "eight,0,10.0,a,0.0%,10.0,b,0.0%,20.0,0,0,0,1.0,1.0,\n";
  CHECK_THROWS_AS(tables.load(bad), InputError);
}

TEST_CASE("a row without an arch serves any device with its CU count") {
  io::FmoeKey wanted = layer_key(backbone(8), h200, 1);
  io::FmoeKey row = wanted;
  row.token = 8;
  CHECK(serves_layer(row, wanted));
  row.gfx.clear();  // a legacy table's row whose cu_num AITER cannot map to an arch
  CHECK(serves_layer(row, wanted));
  row.cu_num = 80;
  CHECK_FALSE(serves_layer(row, wanted));
  row = wanted;
  row.gfx = "gfx950";
  CHECK_FALSE(serves_layer(row, wanted));
}

TEST_CASE("a bucket's workspace holds every scratch buffer, aligned") {
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
    auto const layer = backbone(100, dtype);
    TunedTables none;
    auto const choices = choose_buckets(layer, search::Arch::sm_90, h200, none, compiles_except());
    std::size_t previous = 0;
    for (auto const& c : choices) {
      INFO(moe::to_string(dtype) << " bucket " << c.tokens);
      auto const plan = plan_bucket(c, layer.shape, search::Arch::sm_90, layer.max_tokens);
      auto const& w = plan.workspace;
      CHECK(plan.planned_tokens == std::min<std::int64_t>(c.tokens, 100));
      for (auto offset : {w.sorted_slots, w.block_expert, w.num_blocks, w.h, w.h_scales, w.partial}) {
        CHECK(offset % workspace_alignment == 0);
      }
      auto const slots = plan.planned_tokens * layer.shape.topk;
      CHECK(w.block_expert - w.sorted_slots >= static_cast<std::size_t>(plan.stage1.sort_capacity * 4));
      CHECK(w.h_scales - w.h >=
            static_cast<std::size_t>(slots * layer.shape.inter * (dtype == moe::DtypePath::a8w4 ? 1 : 2)));
      CHECK(w.total >= w.partial + static_cast<std::size_t>(plan.stage2.partial_bytes));
      CHECK(w.total % workspace_alignment == 0);
      CHECK(w.total >= previous);  // a bigger bucket never needs less
      previous = w.total;
    }
  }
}

TEST_CASE("an A8W4 bucket keeping h in bf16 sizes h as bf16 and has no h scales") {
  auto const layer = backbone(100, moe::DtypePath::a8w4);
  TunedTables none;
  auto choices = choose_buckets(layer, search::Arch::sm_90, h200, none, compiles_except());
  REQUIRE_FALSE(choices.empty());
  auto c = choices.back();
  auto const fp8_plan = plan_bucket(c, layer.shape, search::Arch::sm_90, layer.max_tokens);
  c.stage1.h_bf16 = c.stage2.h_bf16 = true;
  auto const plan = plan_bucket(c, layer.shape, search::Arch::sm_90, layer.max_tokens);
  auto const slots = plan.planned_tokens * layer.shape.topk;
  auto const& w = plan.workspace;
  CHECK(w.h_scales - w.h >= static_cast<std::size_t>(slots * layer.shape.inter * 2));
  CHECK(w.partial - w.h_scales < workspace_alignment);  // no scale bytes placed
  CHECK(fp8_plan.workspace.partial - fp8_plan.workspace.h_scales >=
        static_cast<std::size_t>(slots * layer.shape.inter / 32));
}

TEST_CASE("an A8W4 bucket reading x in bf16 places the upcast x in the workspace") {
  auto const layer = backbone(100, moe::DtypePath::a8w4);
  TunedTables none;
  auto choices = choose_buckets(layer, search::Arch::sm_90, h200, none, compiles_except());
  REQUIRE_FALSE(choices.empty());
  auto c = choices.back();
  REQUIRE(c.stage1.wgmma);
  auto const fp8_x = plan_bucket(c, layer.shape, search::Arch::sm_90, layer.max_tokens);
  c.stage1.x_bf16 = true;
  auto const plan = plan_bucket(c, layer.shape, search::Arch::sm_90, layer.max_tokens);
  auto const bytes = static_cast<std::size_t>(plan.planned_tokens * layer.shape.hidden * 2);
  CHECK(plan.stage1.x_bf16_bytes == static_cast<std::int64_t>(bytes));
  CHECK(plan.workspace.x_bf16 >= plan.workspace.partial);
  CHECK(plan.workspace.total - plan.workspace.x_bf16 >= bytes);
  CHECK(plan.workspace.total >= fp8_x.workspace.total + bytes);
  CHECK(plan.stage1.launches.at(0).kernel_name == "moetune::moe_sort_upcast_x<0>");
  CHECK(fp8_x.stage1.x_bf16_bytes == 0);
}

TEST_CASE("a tuned table's rows and the defaults compile for sm_90 through the code cache") {
  // The compile check prepare uses, without the module load: NVRTC needs no GPU.
  exec::UnitCompiler compiler(search::Arch::sm_90, test::scratch_dir("runtime_compile") / "cache");
  CompileCheck const compile = [&](const search::KernelConfig& c) -> std::optional<std::string> {
    auto const& outcome = compiler.compile(c);
    if (outcome.status == jit::CompileStatus::ok) return std::nullopt;
    return outcome.log_head.empty() ? std::string("compile error") : outcome.log_head;
  };
  TunedTables tables;
  tables.load(tuned_table());
  auto const choices = choose_buckets(backbone(8), search::Arch::sm_90, h200, tables, compile);
  REQUIRE(choices.size() == 4);
  for (auto const& c : choices) {
    INFO("bucket " << c.tokens << ": " << c.rejection);
    CHECK(c.source == (c.tokens == 8 ? ChoiceSource::tuned_row : ChoiceSource::default_no_row));
  }
}
