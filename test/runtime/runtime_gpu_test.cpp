// The runtime on a real GPU ([gpu]: skips visibly elsewhere), through the C API as an engine
// calls it: a tuned table with a usable row, a row naming a kernel that does not exist and
// buckets without rows; every data path against the CPU reference at M inside and between
// buckets; graph capture and replay with new inputs in the same buffers; argument errors.
// Plus a hidden benchmark of the host cost of one forward ([.host_cost], run by hand).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "autotune/gpu/gpu.hpp"
#include "autotune/moe/compare.hpp"
#include "autotune/moe/reference.hpp"
#include "autotune/moe/workload.hpp"
#include "autotune/search/default_config.hpp"
#include "moetune/moetune.h"
#include "test/support/test_paths.hpp"

using namespace moetune;

namespace {

constexpr std::int64_t max_tokens = 300;
constexpr std::uint64_t seed = 11;

moe::MoeShape small_shape(moe::DtypePath dtype) {
  moe::MoeShape s;
  s.hidden = 1024;
  s.inter = 256;
  s.experts = 32;
  s.topk = 4;
  s.dtype = dtype;
  return s;
}

moetune_dtype c_dtype(moe::DtypePath d) {
  return d == moe::DtypePath::a16w4 ? MOETUNE_DTYPE_A16W4
         : d == moe::DtypePath::a8w4 ? MOETUNE_DTYPE_A8W4
                                     : MOETUNE_DTYPE_BF16;
}

#define REQUIRE_OK(call)                                          \
  do {                                                            \
    auto const status_ = (call);                                  \
    INFO(moetune_status_name(status_) << ": " << moetune_last_error()); \
    REQUIRE(status_ == MOETUNE_OK);                               \
  } while (false)

struct ContextHolder {
  moetune_context* context = nullptr;
  ContextHolder() { REQUIRE_OK(moetune_context_create(0, nullptr, &context)); }
  ~ContextHolder() { moetune_context_destroy(context); }
};

// AITER's spelling of the data path's key columns.
std::string key_columns(moe::DtypePath d, const char* fp8) {
  switch (d) {
    case moe::DtypePath::a16w4:
      return "torch.bfloat16,torch.bfloat16,torch.float4_e2m1fn_x2,QuantType.per_1x32";
    case moe::DtypePath::a8w4:
      return fmt::format("torch.bfloat16,{},torch.float4_e2m1fn_x2,QuantType.per_1x32", fp8);
    case moe::DtypePath::bf16:
      return "torch.bfloat16,torch.bfloat16,torch.bfloat16,QuantType.No";
  }
  return "";
}

// A tuned table for the test shape on this device: bucket 16 names the default pair of 256
// tokens (another configuration than 16's default, so the row visibly decides), bucket 4 a
// kernel that does not exist (falls back to the default); every other bucket has no row.
std::filesystem::path write_table(moetune_context* context, const moe::MoeShape& shape,
                                  const char* name) {
  const char* arch = nullptr;
  int cus = 0;
  REQUIRE_OK(moetune_context_device(context, &arch, &cus));
  auto const a = search::parse_arch(arch);
  auto const row_pair = search::default_config(shape, a, 256);
  auto const fp8 = a == search::Arch::gfx942 ? "torch.float8_e4m3fnuz" : "torch.float8_e4m3fn";
  auto row = [&](std::int64_t token, int block_m, const std::string& n1, const std::string& n2) {
    return fmt::format("{},{},{},{},{},{},{},ActivationType.Silu,{},1,0,{},0,1.0,{},0.0%,1.0,{},"
                       "0.0%,2.0,0,0,0,1.0,1.0,\n",
                       arch, cus, token, shape.hidden, shape.inter, shape.experts, shape.topk,
                       key_columns(shape.dtype, fp8), block_m, n1, n2);
  };
  auto const path = test::scratch_dir(name) / "tuned.csv";
  std::ofstream(path)
      << "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,"
         "q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,"
         "err2,us,run_1stage,xbf16,flat,tflops,bw,_tag\n"
      << row(16, row_pair.stage1.block_m, row_pair.stage1.name(), row_pair.stage2.name())
      << row(4, 16, "moetune_s1_no_such_kernel", "moetune_s2_no_such_kernel");
  return path;
}

template <class T>
gpu::DeviceBuffer upload(const gpu::Device& device, const std::vector<T>& host) {
  gpu::DeviceBuffer b(device, std::max<std::size_t>(host.size() * sizeof(T), 1));
  if (!host.empty()) b.upload(host);
  return b;
}

// One layer of the test shape prepared through the C API, with its weights on the device.
struct PreparedFixture {
  moe::MoeShape shape;
  gpu::Device device{0};
  moe::Weights weights;
  gpu::DeviceBuffer w1, w1_scales, w2, w2_scales;
  moetune_layer* layer = nullptr;

  PreparedFixture(moetune_context* context, moe::DtypePath dtype, const char* name)
      : shape(small_shape(dtype)), weights(moe::make_weights(shape, seed)) {
    REQUIRE_OK(moetune_context_load_table(context, write_table(context, shape, name).c_str()));
    bool const bf16 = dtype == moe::DtypePath::bf16;
    w1 = bf16 ? upload(device, weights.w1_bf16) : upload(device, weights.w1_codes);
    w2 = bf16 ? upload(device, weights.w2_bf16) : upload(device, weights.w2_codes);
    if (!bf16) {
      w1_scales = upload(device, weights.w1_scales);
      w2_scales = upload(device, weights.w2_scales);
    }
    moetune_layer_desc desc{shape.hidden, shape.inter, shape.experts, shape.topk,
                            c_dtype(dtype), 0, max_tokens, nullptr};
    moetune_layer_weights w{w1.data(), bf16 ? nullptr : w1_scales.data(), w2.data(),
                            bf16 ? nullptr : w2_scales.data()};
    REQUIRE_OK(moetune_layer_prepare(context, &desc, &w, &layer));
  }
  ~PreparedFixture() { moetune_layer_destroy(layer); }
};

// Inputs and output of one forward at M tokens, on the device.
struct Call {
  moe::Workload workload;
  gpu::DeviceBuffer x, x_scales, ids, weights, y, workspace;

  Call(PreparedFixture& f, std::int64_t M, std::uint64_t input_seed) {
    workload.shape = f.shape;
    workload.shape.tokens = M;
    workload.seed = seed;
    workload.w = f.weights;
    fill(f, input_seed);
    y = gpu::DeviceBuffer(f.device, static_cast<std::size_t>(M * f.shape.hidden * 2));
    std::size_t bytes = 0;
    REQUIRE_OK(moetune_workspace_size(f.layer, M, &bytes));
    workspace = gpu::DeviceBuffer(f.device, std::max<std::size_t>(bytes, 1));
  }

  // New activations and routing; the same buffers when they exist (graph replay).
  void fill(PreparedFixture& f, std::uint64_t input_seed) {
    auto const& s = workload.shape;
    workload.x = moe::make_activations(s, input_seed);
    workload.routing = moe::make_routing({}, s.tokens, s.experts, s.topk, input_seed);
    bool const a8w4 = s.dtype == moe::DtypePath::a8w4;
    if (x.empty()) {
      x = a8w4 ? upload(f.device, workload.x.x_codes) : upload(f.device, workload.x.x_bf16);
      if (a8w4) x_scales = upload(f.device, workload.x.x_scales);
      ids = upload(f.device, workload.routing.ids);
      weights = upload(f.device, workload.routing.weights);
    } else {
      if (a8w4) {
        x.upload(workload.x.x_codes);
        x_scales.upload(workload.x.x_scales);
      } else {
        x.upload(workload.x.x_bf16);
      }
      ids.upload(workload.routing.ids);
      weights.upload(workload.routing.weights);
    }
  }

  moetune_forward_args args(void* stream) const {
    return moetune_forward_args{x.data(),
                                x_scales.empty() ? nullptr : x_scales.data(),
                                static_cast<const int32_t*>(ids.data()),
                                static_cast<const float*>(weights.data()),
                                y.data(),
                                workload.shape.tokens,
                                workspace.data(),
                                workspace.size(),
                                stream};
  }

  moe::CompareResult compare() const {
    auto const reference =
        moe::reference_rows(workload, moe::sample_tokens(workload.shape.tokens, seed));
    return moe::compare_output(y.download_as<std::uint16_t>(), reference);
  }
};

}  // namespace

TEST_CASE("forward matches the CPU reference on every data path", "[gpu]") {
  ContextHolder holder;
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
    DYNAMIC_SECTION(moe::to_string(dtype)) {
      PreparedFixture f(holder.context, dtype, "runtime_gpu_reference");
      std::string const report = moetune_layer_report(f.layer);
      INFO(report);
      CHECK_THAT(report, Catch::Contains("\"tuned_row\"") &&
                             Catch::Contains("\"default_row_rejected\"") &&
                             Catch::Contains("\"default_no_row\""));
      gpu::Stream stream(f.device);
      // Inside buckets and at their ends: 1, 3 (bucket 4: the rejected row's default), 16 and
      // 9 (bucket 16: the tuned row), 37, 300 (max_tokens, inside bucket 512).
      for (std::int64_t M : {1, 3, 9, 16, 37, 300}) {
        INFO("M=" << M);
        std::int64_t bucket = 0;
        int from_row = -1;
        REQUIRE_OK(moetune_layer_selection(f.layer, M, &bucket, nullptr, nullptr, &from_row));
        CHECK(from_row == (bucket == 16 ? 1 : 0));
        Call call(f, M, 100 + static_cast<std::uint64_t>(M));
        call.y.memset(0xFF);  // NaN: an unwritten element fails the comparison
        auto const args = call.args(stream.native_handle());
        REQUIRE_OK(moetune_forward(f.layer, &args));
        stream.synchronize();
        auto const result = call.compare();
        INFO(result.summary());
        CHECK(result.passed());
      }
    }
  }
}

TEST_CASE("forward is captured into a graph and replays with new inputs", "[gpu]") {
  ContextHolder holder;
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
    DYNAMIC_SECTION(moe::to_string(dtype)) {
      PreparedFixture f(holder.context, dtype, "runtime_gpu_graph");
      gpu::Stream stream(f.device);
      for (std::int64_t M : {5, 16}) {
        INFO("M=" << M);
        Call call(f, M, 7);
        auto const args = call.args(stream.native_handle());
        gpu::GraphExec graph;
        {
          gpu::GraphCapture capture(stream);
          REQUIRE_OK(moetune_forward(f.layer, &args));
          graph = capture.finish();
        }
        for (std::uint64_t replay = 0; replay < 3; ++replay) {
          call.fill(f, 200 + replay);  // same addresses, new values
          call.y.memset(0xFF);
          graph.launch(stream);
          stream.synchronize();
          auto const result = call.compare();
          INFO("replay " << replay << ": " << result.summary());
          CHECK(result.passed());
        }
      }
    }
  }
}

TEST_CASE("forward refuses bad arguments with a status and a message", "[gpu]") {
  ContextHolder holder;
  PreparedFixture f(holder.context, moe::DtypePath::a8w4, "runtime_gpu_errors");
  gpu::Stream stream(f.device);
  Call call(f, 8, 3);
  auto args = call.args(stream.native_handle());

  args.workspace_bytes = call.workspace.size() - 1;
  CHECK(moetune_forward(f.layer, &args) == MOETUNE_ERROR_WORKSPACE);
  CHECK_THAT(std::string(moetune_last_error()), Catch::Contains("workspace"));
  args = call.args(stream.native_handle());
  args.workspace = static_cast<std::byte*>(call.workspace.data()) + 16;
  CHECK(moetune_forward(f.layer, &args) == MOETUNE_ERROR_WORKSPACE);

  args = call.args(stream.native_handle());
  args.hidden_scales = nullptr;  // a8w4 needs them
  CHECK(moetune_forward(f.layer, &args) == MOETUNE_ERROR_NULL_POINTER);
  CHECK_THAT(std::string(moetune_last_error()), Catch::Contains("hidden_scales"));

  args = call.args(stream.native_handle());
  args.tokens = max_tokens + 1;
  CHECK(moetune_forward(f.layer, &args) == MOETUNE_ERROR_INVALID_ARGUMENT);
  args.tokens = -1;
  CHECK(moetune_forward(f.layer, &args) == MOETUNE_ERROR_INVALID_ARGUMENT);
  args.tokens = 0;  // an empty batch: nothing to do
  CHECK(moetune_forward(f.layer, &args) == MOETUNE_OK);

  // Preparing: a wrong dtype, an impossible shape, missing scales.
  moetune_layer* layer = nullptr;
  moetune_layer_desc desc{1024, 256, 32, 4, static_cast<moetune_dtype>(7), 0, 16, nullptr};
  moetune_layer_weights w{f.w1.data(), f.w1_scales.data(), f.w2.data(), f.w2_scales.data()};
  CHECK(moetune_layer_prepare(holder.context, &desc, &w, &layer) == MOETUNE_ERROR_DTYPE);
  desc.dtype = MOETUNE_DTYPE_A8W4;
  desc.hidden = 1000;  // not a multiple of 32
  CHECK(moetune_layer_prepare(holder.context, &desc, &w, &layer) == MOETUNE_ERROR_SHAPE);
  desc.hidden = 1024;
  w.w2_scales = nullptr;
  CHECK(moetune_layer_prepare(holder.context, &desc, &w, &layer) == MOETUNE_ERROR_NULL_POINTER);
  CHECK(layer == nullptr);

  // A second table repeating a key already loaded is refused.
  auto const again = write_table(holder.context, f.shape, "runtime_gpu_errors_again");
  CHECK(moetune_context_load_table(holder.context, again.c_str()) == MOETUNE_ERROR_TABLE);
  CHECK(moetune_context_load_table(holder.context, "/nonexistent/table.csv") == MOETUNE_ERROR_TABLE);
}

// Host time of one moetune_forward (all its launches), and of the row selection alone. A
// benchmark, not a test: run with `moetune_test_runtime "[.host_cost]"`; target <= 3 us of
// the library's own work on top of the vendor's launch calls.
TEST_CASE("host cost of one forward", "[.host_cost][gpu]") {
  ContextHolder holder;
  PreparedFixture f(holder.context, moe::DtypePath::a16w4, "runtime_gpu_host_cost");
  gpu::Stream stream(f.device);
  for (std::int64_t M : {1, 16, 256}) {
    Call call(f, M, 1);
    auto const args = call.args(stream.native_handle());
    REQUIRE_OK(moetune_forward(f.layer, &args));
    stream.synchronize();
    constexpr int batch = 64;  // launches stay far below the driver's queue depth
    std::vector<double> per_call_us, select_us;
    for (int round = 0; round < 50; ++round) {
      auto const start = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) (void)moetune_forward(f.layer, &args);
      auto const stop = std::chrono::steady_clock::now();
      per_call_us.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / batch);
      stream.synchronize();
      std::int64_t bucket = 0;
      auto const s0 = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) {
        (void)moetune_layer_selection(f.layer, M, &bucket, nullptr, nullptr, nullptr);
      }
      auto const s1 = std::chrono::steady_clock::now();
      select_us.push_back(std::chrono::duration<double, std::micro>(s1 - s0).count() / batch);
    }
    std::sort(per_call_us.begin(), per_call_us.end());
    std::sort(select_us.begin(), select_us.end());
    const char* n2 = nullptr;
    (void)moetune_layer_selection(f.layer, M, nullptr, nullptr, &n2, nullptr);
    int const launches = std::string(n2).ends_with("atomic") ? 5 : 4;
    fmt::print("M={:>4}: forward {:.2f} us host (median of 50 x {} calls; {} kernel launches, "
               "{:.2f} us each), selection alone {:.3f} us\n",
               M, per_call_us[per_call_us.size() / 2], batch, launches,
               per_call_us[per_call_us.size() / 2] / launches, select_us[select_us.size() / 2]);
  }
}
