// The GPU layer on a real device ([gpu]: runs on the H200, skips visibly elsewhere). Kernels
// are compiled at run time for the device's own arch with the JIT, so these tests also prove
// that a code object from the JIT loads and runs.
#include <catch2/catch.hpp>

#include <array>
#include <numeric>
#include <string>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/jit/compiler.hpp"

using namespace moetune;

namespace {

// Self-contained kernels for both vendors (no headers at all).
constexpr const char* kernel_text = R"(
#if defined(__CUDACC_RTC__)
#define K __global__
#define SHARED __shared__
#define TID threadIdx.x
#define BID blockIdx.x
#define SYNC() __syncthreads()
#else
#define K __attribute__((global))
#define SHARED __attribute__((shared))
#define TID __builtin_amdgcn_workitem_id_x()
#define BID __builtin_amdgcn_workgroup_id_x()
#define SYNC() __builtin_amdgcn_s_barrier()
#endif
extern "C" K void add_one(float* x, int n, int block) {
  int i = static_cast<int>(BID) * block + static_cast<int>(TID);
  if (i < n) x[i] += 1.0f;
}
namespace gpu_test {
template <int Factor>
K void scale_reverse(float* out, const float* in, int n) {
  SHARED float tile[256];
  int t = static_cast<int>(TID);
  int i = static_cast<int>(BID) * 256 + t;
  tile[t] = i < n ? in[i] * Factor : 0.0f;
  SYNC();
  if (i < n) out[i] = tile[255 - t];
}
}
// Dynamic shared memory, sized at launch. Values k % 8 keep every partial sum an integer
// below 2^24, so the float sum is exact and the test can demand equality.
extern "C" K void dynamic_sum(float* out, int count) {
  extern SHARED float scratch[];
  int t = static_cast<int>(TID);
  for (int k = t; k < count; k += 256) scratch[k] = static_cast<float>(k % 8);
  SYNC();
  if (t == 0) {
    float s = 0.0f;
    for (int k = 0; k < count; ++k) s += scratch[k];
    out[0] = s;
  }
}
)";

gpu::Device& device() {
  static gpu::Device opened(0);
  return opened;
}

struct TestModule {
  jit::CompileResult compiled;
  gpu::Module module;
};

TestModule& test_module() {
  static TestModule loaded = [] {
    auto const compiler = jit::make_compiler({device().info().arch, std::vector<jit::EmbeddedFile>{}, {}});
    jit::KernelSource const source{"gpu_test",
                                   kernel_text,
                                   {"add_one", "gpu_test::scale_reverse<3>", "dynamic_sum"},
                                   {}};
    jit::CompileResult compiled = compiler->compile(source);
    if (!compiled.ok) throw Error("test kernels did not compile:\n" + compiled.log);
    gpu::Module module(device(), compiled.image);
    return TestModule{std::move(compiled), std::move(module)};
  }();
  return loaded;
}

gpu::Kernel kernel(std::size_t index) {
  auto& loaded = test_module();
  return loaded.module.function(loaded.compiled.kernels.at(index).lowered_name);
}

}  // namespace

TEST_CASE("device info describes the GPU", "[gpu]") {
  auto const& info = device().info();
  INFO(info.name << " " << info.arch << " driver " << info.driver_version);
  CHECK_FALSE(info.name.empty());
  CHECK(info.compute_units > 0);
  CHECK(info.l2_bytes > 0);
  CHECK(info.global_memory_bytes > (std::int64_t{1} << 30));
  CHECK(info.shared_memory_per_block_optin_bytes >= info.shared_memory_per_block_bytes);
  CHECK(info.max_threads_per_block >= 256);
  CHECK(info.sm_clock_khz > 0);
  CHECK_FALSE(info.driver_version.empty());
  CHECK_FALSE(info.runtime_version.empty());
  if (info.vendor == gpu::Vendor::nvidia) {
    CHECK(info.wave_size == 32);
    CHECK(info.arch.starts_with("sm_"));
    if (info.name.find("H200") != std::string::npos || info.name.find("H100") != std::string::npos) {
      CHECK(info.arch == "sm_90");
      CHECK(info.compute_units >= 114);
    }
  } else {
    CHECK(info.wave_size == 64);
    CHECK(info.arch.starts_with("gfx"));
  }
  auto const memory = device().memory_info();
  CHECK(memory.total_bytes > 0);
  CHECK(memory.free_bytes <= memory.total_bytes);
}

// The synchronous memset and copy run on the legacy stream; work queued right after them on
// one of our (non-blocking) streams must find them finished. Session 22: a 42 MB NaN fill was
// still running when the next kernel wrote the buffer, and overwrote its result. A 512 MB
// fill takes far longer than a 4-byte copy queued behind it, so without the wait the fill,
// which reaches the buffer's end last, would overwrite that copy.
TEST_CASE("a synchronous memset or copy has finished before work queued on a stream", "[gpu]") {
  std::size_t const bytes = std::size_t{512} << 20;
  gpu::DeviceBuffer big(device(), bytes), source(device(), bytes);
  gpu::Stream stream(device());
  std::array<std::uint8_t, 4> const mark{1, 2, 3, 4};
  auto const last_four = [&] {
    std::array<std::uint8_t, 4> out{};
    big.download(std::as_writable_bytes(std::span(out)), bytes - 4);
    return out;
  };
  big.memset(0xFF);
  big.upload_async(std::as_bytes(std::span(mark)), stream, bytes - 4);
  stream.synchronize();
  CHECK(last_four() == mark);
  source.memset(0);
  big.copy_from(source);
  big.upload_async(std::as_bytes(std::span(mark)), stream, bytes - 4);
  stream.synchronize();
  CHECK(last_four() == mark);
}

TEST_CASE("device buffers round-trip, memset and copy", "[gpu]") {
  std::vector<float> host(1000);
  std::iota(host.begin(), host.end(), 0.0F);
  gpu::DeviceBuffer buffer(device(), host.size() * sizeof(float));
  CHECK(buffer.size() == 4000);
  buffer.upload(host);
  CHECK(buffer.download_as<float>() == host);

  buffer.memset(0);
  CHECK(buffer.download_as<float>() == std::vector<float>(1000, 0.0F));
  buffer.memset(0xFF, 4, 4);  // one float of all-ones bits: a NaN sentinel
  auto const bytes = buffer.download_as<std::uint8_t>();
  CHECK(bytes[3] == 0);
  CHECK(bytes[4] == 0xFF);
  CHECK(bytes[7] == 0xFF);
  CHECK(bytes[8] == 0);

  gpu::DeviceBuffer copy(device(), buffer.size());
  buffer.upload(host);
  copy.copy_from(buffer);
  CHECK(copy.download_as<float>() == host);

  gpu::Stream stream(device());
  std::vector<float> back(host.size());
  copy.memset_async(0, stream);
  copy.upload_async(std::as_bytes(std::span<const float>(host)).subspan(400), stream, 400);
  copy.download_async(std::as_writable_bytes(std::span<float>(back)), stream);
  stream.synchronize();
  CHECK(back[0] == 0.0F);
  CHECK(back[99] == 0.0F);
  CHECK(back[100] == 100.0F);
  CHECK(back[999] == 999.0F);

  CHECK_THROWS_AS(buffer.upload(std::span<const float>(host), 4), Error);  // out of range
  gpu::DeviceBuffer moved = std::move(copy);
  CHECK(moved.size() == 4000);
  CHECK(copy.empty());
}

TEST_CASE("a JIT-compiled kernel loads, launches and computes", "[gpu]") {
  int const n = 1000;
  std::vector<float> input(n);
  std::iota(input.begin(), input.end(), 1.0F);
  gpu::DeviceBuffer in(device(), n * sizeof(float));
  gpu::DeviceBuffer out(device(), n * sizeof(float));
  in.upload(input);
  out.memset(0xFF);
  gpu::Stream stream(device());
  auto const scale = kernel(1);
  void* in_ptr = in.data();
  void* out_ptr = out.data();
  int count = n;
  void* args[] = {&out_ptr, &in_ptr, &count};
  scale.launch({(n + 255) / 256}, {256}, 0, stream, args);
  stream.synchronize();
  auto const result = out.download_as<float>();
  for (int i = 0; i < n; ++i) {
    int const block = i / 256;
    int const j = block * 256 + 255 - i % 256;
    float const expected = j < n ? input[j] * 3.0F : 0.0F;
    INFO("i = " << i);
    REQUIRE(result[i] == expected);
  }
  auto const attributes = scale.attributes();
  CHECK(attributes.registers > 0);
  CHECK(attributes.static_shared_bytes == 1024);
}

TEST_CASE("dynamic shared memory beyond the default needs and gets the opt-in", "[gpu]") {
  auto const& info = device().info();
  std::size_t const bytes =
      std::min<std::size_t>(100 * 1024, static_cast<std::size_t>(info.shared_memory_per_block_optin_bytes));
  int const count = static_cast<int>(bytes / sizeof(float));
  auto const sum = kernel(2);
  sum.set_max_dynamic_shared_bytes(bytes);
  gpu::DeviceBuffer out(device(), sizeof(float));
  gpu::Stream stream(device());
  void* out_ptr = out.data();
  int n = count;
  void* args[] = {&out_ptr, &n};
  sum.launch({1}, {256}, bytes, stream, args);
  stream.synchronize();
  double expected = 0;
  for (int k = 0; k < count; ++k) expected += k % 8;
  CHECK(static_cast<double>(out.download_as<float>()[0]) == expected);
}

TEST_CASE("events time a kernel", "[gpu]") {
  int const n = 1 << 24;
  gpu::DeviceBuffer x(device(), n * sizeof(float));
  x.memset(0);
  gpu::Stream stream(device());
  gpu::Event start(device());
  gpu::Event stop(device());
  auto const add = kernel(0);
  void* ptr = x.data();
  int count = n;
  int block = 256;
  void* args[] = {&ptr, &count, &block};
  start.record(stream);
  for (int r = 0; r < 4; ++r) add.launch({n / 256}, {256}, 0, stream, args);
  stop.record(stream);
  stop.synchronize();
  CHECK(stop.query());
  float const ms = gpu::elapsed_ms(start, stop);
  CHECK(ms > 0.0F);
  CHECK(ms < 1000.0F);
  CHECK(x.download_as<float>()[n - 1] == 4.0F);
}

TEST_CASE("a captured graph of several launches replays them", "[gpu]") {
  int const n = 4096;
  gpu::DeviceBuffer x(device(), n * sizeof(float));
  x.memset(0);
  gpu::Stream stream(device());
  auto const add = kernel(0);
  void* ptr = x.data();
  int count = n;
  int block = 128;
  void* args[] = {&ptr, &count, &block};

  gpu::GraphExec graph;
  {
    gpu::GraphCapture capture(stream);
    for (int r = 0; r < 5; ++r) add.launch({n / 128}, {128}, 0, stream, args);
    graph = capture.finish();
  }
  stream.synchronize();
  CHECK(x.download_as<float>()[0] == 0.0F);  // capture records, it does not run

  graph.launch(stream);
  graph.launch(stream);
  stream.synchronize();
  auto const values = x.download_as<float>();
  CHECK(values[0] == 10.0F);
  CHECK(values[n - 1] == 10.0F);

  // An abandoned capture (exception half-way) leaves the stream usable.
  try {
    gpu::GraphCapture capture(stream);
    add.launch({n / 128}, {128}, 0, stream, args);
    throw std::runtime_error("abandon");
  } catch (const std::runtime_error&) {
  }
  add.launch({n / 128}, {128}, 0, stream, args);
  stream.synchronize();
  CHECK(x.download_as<float>()[0] == 11.0F);
}

TEST_CASE("GPU errors name the call, the error and the device", "[gpu]") {
  gpu::Stream stream(device());
  gpu::DeviceBuffer x(device(), 4096);
  void* ptr = x.data();
  int count = 1;
  int block = 2048;
  void* args[] = {&ptr, &count, &block};
  auto const add = kernel(0);

  SECTION("a launch with 2048 threads per block") {
    try {
      add.launch({1}, {2048}, 0, stream, args);
      FAIL("no GpuError");
    } catch (const GpuError& error) {
      std::string const what = error.what();
      INFO(what);
      CHECK_THAT(what, Catch::Contains("LaunchKernel") && Catch::Contains("block=(2048,1,1)") &&
                           Catch::Contains(device().name()) && Catch::Contains("module.cpp"));
      CHECK(error.code() != 0);
      CHECK_FALSE(error.code_name().empty());
    }
    // The failed launch is not sticky: the context still works.
    add.launch({1}, {32}, 0, stream, args);
    stream.synchronize();
  }
  SECTION("a missing kernel symbol") {
    try {
      (void)test_module().module.function("no_such_kernel");
      FAIL("no GpuError");
    } catch (const GpuError& error) {
      std::string const what = error.what();
      INFO(what);
      CHECK_THAT(what, Catch::Contains("ModuleGetFunction") && Catch::Contains("no_such_kernel"));
    }
  }
}
