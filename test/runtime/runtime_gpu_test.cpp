// The runtime on a real GPU ([gpu]: skips visibly elsewhere), through the C API as an engine
// calls it: a tuned table with a usable row, a row naming a kernel that does not exist and
// buckets without rows; every data path against the CPU reference at M inside and between
// buckets; graph capture and replay with new inputs in the same buffers; argument errors.
// Plus hidden benchmarks, run by hand: the host cost of one forward beside its floor of bare
// launches ([.host_cost]) and forward's device time beside `moe-tune bench`'s for the same
// configuration ([.device_time]).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "autotune/exec/device_buffers.hpp"
#include "autotune/exec/moe_pipeline.hpp"
#include "autotune/exec/replay_timer.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/moe/compare.hpp"
#include "autotune/moe/reference.hpp"
#include "autotune/moe/workload.hpp"
#include "autotune/runtime/c_api_handles.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/validity.hpp"
#include "autotune/search/kernel_config.hpp"
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
// tokens (another configuration than 16's default, so the row visibly decides; A8W4 on sm_90:
// that pair keeping h in bf16 and, with a wgmma stage one, reading x in bf16, so the runtime's
// bf16 h, bf16 x and A16W4-word tiles are exercised),
// bucket 4 a kernel that does not exist (falls back to the default); every other bucket has
// no row.
std::filesystem::path write_table(moetune_context* context, const moe::MoeShape& shape,
                                  const char* name) {
  const char* arch = nullptr;
  int cus = 0;
  REQUIRE_OK(moetune_context_device(context, &arch, &cus));
  auto const a = search::parse_arch(arch);
  auto row_pair = search::default_config(shape, a, 256);
  if (shape.dtype == moe::DtypePath::a8w4 && a == search::Arch::sm_90) {
    row_pair.stage1.h_bf16 = row_pair.stage2.h_bf16 = true;
    // Stage two is then the A16W4 kernel: a fragment-decode one reads repacked words.
    if (row_pair.stage2.fragment_decode) row_pair.stage2.repacked = true;
    // A wgmma stage one also reads x upcast to bf16 (`_xb`): the sort launch's upcast into
    // the workspace and w1 in A16W4's tile words.
    if (row_pair.stage1.wgmma) row_pair.stage1.x_bf16 = true;
    REQUIRE_FALSE(search::check_config(row_pair.stage1, a, shape));
    REQUIRE_FALSE(search::check_config(row_pair.stage2, a, shape));
  }
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

// A planned forward (moetune_forward_plan_*): the same output as forward, bit for bit, for
// every dtype, with new values in the same buffers between launches; launched into a stream
// that is being captured it enqueues forward's launches, and the engine's graph replays them;
// a plan for M = 0 runs nothing; a plan checks its call as forward does.
TEST_CASE("a planned forward is forward in one graph launch", "[gpu]") {
  ContextHolder holder;
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
    DYNAMIC_SECTION(moe::to_string(dtype)) {
      PreparedFixture f(holder.context, dtype, "runtime_gpu_plan");
      gpu::Stream stream(f.device);
      for (std::int64_t M : {3, 16, 200}) {
        INFO("M=" << M);
        Call call(f, M, 5);
        auto const args = call.args(stream.native_handle());
        moetune_forward_plan* plan = nullptr;
        REQUIRE_OK(moetune_forward_plan_create(f.layer, &args, &plan));
        std::vector<std::uint16_t> by_forward, by_plan;
        for (std::uint64_t round = 0; round < 2; ++round) {
          call.fill(f, 300 + round);  // same addresses, new values
          call.y.memset(0xFF);
          REQUIRE_OK(moetune_forward(f.layer, &args));
          stream.synchronize();
          by_forward = call.y.download_as<std::uint16_t>();
          call.y.memset(0xFF);
          REQUIRE_OK(moetune_forward_plan_launch(plan, stream.native_handle()));
          stream.synchronize();
          by_plan = call.y.download_as<std::uint16_t>();
          auto const result = call.compare();
          INFO("round " << round << ": " << result.summary());
          CHECK(result.passed());
          // An atomic stage two may add in another order: equal to the reference's tolerance
          // above, and bit for bit only where the configuration is deterministic.
          std::int64_t bucket = 0;
          const char* name2 = nullptr;
          REQUIRE_OK(moetune_layer_selection(f.layer, M, &bucket, nullptr, &name2, nullptr));
          if (!std::string(name2).ends_with("_atomic")) CHECK(by_plan == by_forward);
        }
        // Into a capture: forward's launches, which the captured graph replays.
        gpu::GraphExec graph;
        {
          gpu::GraphCapture capture(stream);
          REQUIRE_OK(moetune_forward_plan_launch(plan, stream.native_handle()));
          graph = capture.finish();
        }
        call.fill(f, 400);
        call.y.memset(0xFF);
        graph.launch(stream);
        stream.synchronize();
        auto const captured = call.compare();
        INFO("captured: " << captured.summary());
        CHECK(captured.passed());
        moetune_forward_plan_destroy(plan);
      }
      Call call(f, 8, 5);
      auto args = call.args(stream.native_handle());
      args.tokens = 0;  // nothing to run
      moetune_forward_plan* empty = nullptr;
      REQUIRE_OK(moetune_forward_plan_create(f.layer, &args, &empty));
      REQUIRE_OK(moetune_forward_plan_launch(empty, stream.native_handle()));
      moetune_forward_plan_destroy(empty);
      args = call.args(stream.native_handle());
      args.workspace_bytes = 1;
      moetune_forward_plan* refused = reinterpret_cast<moetune_forward_plan*>(1);
      CHECK(moetune_forward_plan_create(f.layer, &args, &refused) == MOETUNE_ERROR_WORKSPACE);
      CHECK(refused == nullptr);
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

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

template <class F>
double host_us_per_call(int calls, F&& f) {
  auto const start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  auto const stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(stop - start).count() / calls;
}

}  // namespace

// Host time of one moetune_forward (all its launches) beside its floor: the same kernels with
// the same prepared arguments launched bare (runtime::ForwardLaunches built once, only its
// launch loop timed), so the gap is the library's own work per call (C API wrapper, checks,
// bucket index, argument patching). Also: the GPU's span per forward over the batch (if it is
// at or above the host time, the host may be held back by the device, not by its own work),
// the host time of a short batch right after a synchronisation (queue empty) and the row
// selection alone. A benchmark, not a test: run with `moetune_test_runtime "[.host_cost]"`;
// target <= 3 us of the library's own work on top of the vendor's launch calls.
TEST_CASE("host cost of one forward", "[.host_cost][gpu]") {
  ContextHolder holder;
  PreparedFixture f(holder.context, moe::DtypePath::a16w4, "runtime_gpu_host_cost");
  gpu::Stream stream(f.device);
  gpu::Event gpu_start(f.device), gpu_stop(f.device);
  auto const& layer = *f.layer->impl;
  for (std::int64_t M : {1, 16, 256}) {
    Call call(f, M, 1);
    auto const args = call.args(stream.native_handle());
    REQUIRE_OK(moetune_forward(f.layer, &args));
    stream.synchronize();
    runtime::ForwardLaunches const bare(layer.bucket(M), args, layer.a8w4());
    bare.enqueue();  // the floor's launches must work too
    stream.synchronize();
    constexpr int batch = 64;  // 320 launches at most: far below the driver's queue depth
    constexpr int short_batch = 4;
    // The planned forward (moetune_forward_plan_launch: its capture check and one graph
    // launch) beside forward, and the bare launches without the overlap attribute.
    moetune_forward_plan* plan = nullptr;
    REQUIRE_OK(moetune_forward_plan_create(f.layer, &args, &plan));
    REQUIRE_OK(moetune_forward_plan_launch(plan, stream.native_handle()));
    stream.synchronize();
    std::vector<double> forward_us, bare_us, span_us, short_us, select_us, plan_us, serial_us;
    auto time_forward = [&] {
      gpu_start.record(stream);
      forward_us.push_back(host_us_per_call(batch, [&] { (void)moetune_forward(f.layer, &args); }));
      gpu_stop.record(stream);
      gpu_stop.synchronize();
      span_us.push_back(1000.0 * static_cast<double>(gpu::elapsed_ms(gpu_start, gpu_stop)) / batch);
    };
    auto time_bare = [&] {
      bare_us.push_back(host_us_per_call(batch, [&] { bare.enqueue(); }));
      stream.synchronize();
    };
    for (int round = 0; round < 50; ++round) {
      // Alternating the order spreads any drift (clocks, other tenants) over both.
      if (round % 2 == 0) {
        time_forward();
        time_bare();
      } else {
        time_bare();
        time_forward();
      }
      short_us.push_back(
          host_us_per_call(short_batch, [&] { (void)moetune_forward(f.layer, &args); }));
      stream.synchronize();
      plan_us.push_back(host_us_per_call(batch, [&] {
        (void)moetune_forward_plan_launch(plan, stream.native_handle());
      }));
      stream.synchronize();
      serial_us.push_back(host_us_per_call(batch, [&] { bare.enqueue(gpu::LaunchOrder::serial); }));
      stream.synchronize();
      std::int64_t bucket = 0;
      select_us.push_back(host_us_per_call(batch, [&] {
        (void)moetune_layer_selection(f.layer, M, &bucket, nullptr, nullptr, nullptr);
      }));
    }
    auto const launches = static_cast<double>(bare.size());
    double const fwd = median(forward_us), bare_floor = median(bare_us);
    fmt::print("M={:>4}: {} launches | forward {:.2f} us host ({:.2f} per launch) | bare launches "
               "{:.2f} us ({:.2f} per launch) | library's own work {:.2f} us per forward | GPU span "
               "{:.2f} us per forward | forward right after a sync ({} calls) {:.2f} us | "
               "selection alone {:.3f} us | planned forward (one graph launch) {:.2f} us | "
               "bare launches without overlap {:.2f} us   (medians of 50 rounds x {} calls)\n",
               M, bare.size(), fwd, fwd / launches, bare_floor, bare_floor / launches, fwd - bare_floor,
               median(span_us), short_batch, median(short_us), median(select_us), median(plan_us),
               median(serial_us), batch);
    moetune_forward_plan_destroy(plan);
  }
}

// Device time of forward beside `moe-tune bench`'s own timing path for the same configuration
// in the same process: the backbone shape of session 9's tuned table (H5120 I640 E384 top6 a16w4)
// with that table loaded, at M = 8, 32, 128 (rows of the table; powers of two, so the
// runtime's bucket plans are made for exactly the M bench plans for). Both sides are timed as
// bench times (exec/replay_timer.hpp): a graph of 16 back-to-back forwards, launch i reading
// weight copy i (copies as exec::cold_weight_copies picks them for bench; one prepared layer
// per copy on the runtime side), median of 15 replays after 3 warm-ups, the two interleaved.
// Same inputs (one exec::DeviceInputs). A benchmark: it prints the two medians, their
// interquartile ranges and the ratio, and asserts only that both ran and wrote finite
// outputs. Run with `moetune_test_runtime "[.device_time]"`; MOETUNE_DEVICE_TIME_M="8,64"
// picks other M. Needs about 10 GB of device memory and compiles every bucket's kernels up to
// the largest M on a cold code cache.
TEST_CASE("device time of forward against moe-tune bench", "[.device_time][gpu]") {
  moe::MoeShape shape;
  shape.hidden = 5120;
  shape.inter = 640;
  shape.experts = 384;
  shape.topk = 6;
  shape.dtype = moe::DtypePath::a16w4;
  std::vector<std::int64_t> ms{8, 32, 128};
  if (char const* env = std::getenv("MOETUNE_DEVICE_TIME_M"); env != nullptr && *env != '\0') {
    ms.clear();
    std::string const list(env);
    for (std::size_t at = 0; at <= list.size();) {
      auto const comma = std::min(list.find(',', at), list.size());
      ms.push_back(std::stoll(list.substr(at, comma - at)));
      at = comma + 1;
    }
  }
  constexpr int repeats = 16, samples = 15, warmups = 3;
  std::int64_t const max_tokens_here = *std::max_element(ms.begin(), ms.end());
  constexpr std::uint64_t timing_seed = 1 + 17;  // bench's default --seed 1, inputs at seed + 17

  ContextHolder holder;
  gpu::Device device(0);
  const char* arch_name = nullptr;
  REQUIRE_OK(moetune_context_device(holder.context, &arch_name, nullptr));
  auto const arch = search::parse_arch(arch_name);
  // Session 9's tuned rows (withdrawn from the current table in session 10, kept as data).
  auto const table = test::source_dir() / "results/sm_90/2026-12-02-h200-s9/published_dsv41_flash_tp4_a16w4_tuned_fmoe.csv";
  if (std::filesystem::exists(table)) {
    REQUIRE_OK(moetune_context_load_table(holder.context, table.c_str()));
  }

  // Weights as bench holds them: seeded, uploaded (with the `_rp` layout), rotated copies.
  std::vector<moe::Routing> routings;
  for (auto M : ms) {
    routings.push_back(moe::make_routing({}, M, shape.experts, shape.topk, timing_seed));
  }
  int copies = 1;
  auto const rotated = [&] {
    exec::DeviceWeights const source(device, shape, moe::make_weights(shape, seed), 1);
    for (auto const& r : routings) {
      copies = std::max(copies, exec::cold_weight_copies(device, shape, r,
                                                         source.bytes_per_copy(), false));
    }
    return exec::DeviceWeights(device, source, copies);
  }();

  // The runtime: one layer per weight copy (each prepares its own `_rp` layout if a bucket's
  // kernels read it), all from one context, so the kernels are compiled once.
  struct Layers {
    std::vector<moetune_layer*> all;
    ~Layers() {
      for (auto* l : all) moetune_layer_destroy(l);
    }
  } layers;
  for (int c = 0; c < copies; ++c) {
    auto const& w = rotated.copy(c);
    moetune_layer_desc desc{shape.hidden, shape.inter, shape.experts, shape.topk,
                            MOETUNE_DTYPE_A16W4, 0, max_tokens_here, nullptr};
    moetune_layer_weights lw{w.w1.data(), w.w1_scales.data(), w.w2.data(), w.w2_scales.data()};
    moetune_layer* layer = nullptr;
    REQUIRE_OK(moetune_layer_prepare(holder.context, &desc, &lw, &layer));
    layers.all.push_back(layer);
  }

  exec::UnitCompiler compiler(arch);  // the default code cache, as the context's
  gpu::Stream stream(device);
  exec::ReplayTimer timer(device);
  fmt::print("device time, H{} I{} E{} top{} {} on {}: graph of {} forwards, median of {} "
             "replays, {} weight cop{}\n",
             shape.hidden, shape.inter, shape.experts, shape.topk, moe::to_string(shape.dtype),
             device.name(), repeats, samples, copies, copies == 1 ? "y" : "ies");
  for (std::size_t k = 0; k < ms.size(); ++k) {
    auto const M = ms[k];
    INFO("M=" << M);
    auto shape_m = shape;
    shape_m.tokens = M;
    exec::DeviceInputs const inputs(device, shape_m, moe::make_activations(shape_m, timing_seed),
                                    routings[k]);

    // The configuration the runtime picked for M, run by bench's pipeline.
    const char* name1 = nullptr;
    const char* name2 = nullptr;
    int from_row = 0;
    REQUIRE_OK(moetune_layer_selection(layers.all[0], M, nullptr, &name1, &name2, &from_row));
    auto const cfg1 = search::parse_kernel_name(name1);
    auto const cfg2 = search::parse_kernel_name(name2);
    exec::MoePipeline const pipeline(device, arch, shape_m, M, cfg1, compiler.compile(cfg1).result,
                                     cfg2, compiler.compile(cfg2).result);
    pipeline.enqueue(inputs, rotated, stream);
    stream.synchronize();
    auto const bench_graph = exec::capture_repeats(pipeline, inputs, rotated, stream,
                                                   exec::PipelinePart::all, repeats);

    std::size_t workspace_bytes = 0;
    REQUIRE_OK(moetune_workspace_size(layers.all[0], M, &workspace_bytes));
    gpu::DeviceBuffer y(device, static_cast<std::size_t>(M * shape.hidden * 2));
    gpu::DeviceBuffer workspace(device, std::max<std::size_t>(workspace_bytes, 1));
    moetune_forward_args const args{inputs.x().data(), nullptr,
                                    static_cast<const int32_t*>(inputs.topk_ids().data()),
                                    static_cast<const float*>(inputs.topk_weights().data()),
                                    y.data(), M, workspace.data(), workspace.size(),
                                    stream.native_handle()};
    REQUIRE_OK(moetune_forward(layers.all[0], &args));
    stream.synchronize();
    gpu::GraphExec runtime_graph;
    {
      gpu::GraphCapture capture(stream);
      for (int i = 0; i < repeats; ++i) {
        REQUIRE_OK(moetune_forward(layers.all[static_cast<std::size_t>(i % copies)], &args));
      }
      runtime_graph = capture.finish();
    }

    for (int w = 0; w < warmups; ++w) {
      (void)timer.time_us(bench_graph, stream, repeats);
      (void)timer.time_us(runtime_graph, stream, repeats);
    }
    std::vector<double> bench_us, runtime_us;
    for (int s = 0; s < samples; ++s) {
      if (s % 2 == 0) {
        bench_us.push_back(timer.time_us(bench_graph, stream, repeats));
        runtime_us.push_back(timer.time_us(runtime_graph, stream, repeats));
      } else {
        runtime_us.push_back(timer.time_us(runtime_graph, stream, repeats));
        bench_us.push_back(timer.time_us(bench_graph, stream, repeats));
      }
    }

    // Both wrote finite outputs; how far apart they are (same inputs and configuration; an
    // atomic stage two sums in a run-dependent order, so not always bit-identical).
    auto const y_runtime = y.download_as<std::uint16_t>();
    auto const y_bench = pipeline.download_y();
    REQUIRE(y_runtime.size() == y_bench.size());
    auto const finite = [](std::uint16_t bf16) { return (bf16 & 0x7F80U) != 0x7F80U; };
    auto const to_float = [](std::uint16_t bf16) {
      std::uint32_t const bits = static_cast<std::uint32_t>(bf16) << 16;
      float out = 0;
      std::memcpy(&out, &bits, sizeof out);
      return out;
    };
    std::size_t not_finite_runtime = 0, not_finite_bench = 0;
    double max_diff = 0;
    for (std::size_t i = 0; i < y_runtime.size(); ++i) {
      not_finite_runtime += finite(y_runtime[i]) ? 0 : 1;
      not_finite_bench += finite(y_bench[i]) ? 0 : 1;
      if (finite(y_runtime[i]) && finite(y_bench[i])) {
        max_diff = std::max(max_diff, std::fabs(static_cast<double>(to_float(y_runtime[i])) -
                                                to_float(y_bench[i])));
      }
    }
    CHECK(not_finite_runtime == 0);
    CHECK(not_finite_bench == 0);
    double const b = median(bench_us), r = median(runtime_us);
    fmt::print("M={:>4}: bench {:.2f} us (IQR {:.2f}-{:.2f}) | runtime forward {:.2f} us (IQR "
               "{:.2f}-{:.2f}) | runtime / bench {:.3f} | max |y_runtime - y_bench| {:.3g} | "
               "{} ({}) + {}\n",
               M, b, quantile(bench_us, 0.25), quantile(bench_us, 0.75), r,
               quantile(runtime_us, 0.25), quantile(runtime_us, 0.75), r / b, max_diff, name1,
               from_row != 0 ? "tuned row" : "default", name2);
  }
}
