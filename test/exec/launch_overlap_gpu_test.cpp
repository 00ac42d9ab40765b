// Launch overlap (gpu::LaunchOrder::early_start, CUDA programmatic dependent launch): the MoE's
// kernels start while the previous one drains and wait for it on the device. A kernel that
// read its predecessor's output before that wait, or skipped it, would read the NaN fill or
// the previous launch's data; here the overlapped MoE must give, bit for bit, what serial
// launches give, over a graph of back-to-back MoEs whose inputs alternate between two
// routings (so a stage reading the previous MoE's sort or h would differ).
#include <catch2/catch.hpp>

#include "autotune/exec/replay_timer.hpp"
#include "autotune/exec/verifier.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/validity.hpp"
#include "autotune/moe/routing.hpp"
#include "autotune/moe/workload.hpp"

using namespace moetune;

namespace {

gpu::Device& overlap_device() {
  static gpu::Device instance(0);
  return instance;
}

// y of `pipeline` after enqueueing it on inputs a, b, a, ..., b (an even count, the last b),
// with the outputs NaN-filled first.
std::vector<std::uint16_t> run_alternating(exec::MoePipeline& pipeline, const exec::DeviceInputs& a,
                                           const exec::DeviceInputs& b, const exec::DeviceWeights& w,
                                           gpu::Stream& stream, int launches) {
  pipeline.fill_outputs(0xFF);
  gpu::GraphExec graph;
  {
    gpu::GraphCapture capture(stream);
    for (int i = 0; i < launches; ++i) pipeline.enqueue(i % 2 == 0 ? a : b, w, stream, exec::PipelinePart::all, i);
    graph = capture.finish();
  }
  graph.launch(stream);
  stream.synchronize();
  return pipeline.download_y();
}

void check_overlap_matches_serial(const moe::MoeShape& base, std::int64_t M) {
  auto& device = overlap_device();
  auto const arch = search::parse_arch(device.info().arch);
  // The test means something only where the overlap is real.
  if (arch == search::Arch::sm_90) REQUIRE(device.info().early_start_launches);
  exec::UnitCompiler compiler(arch);
  exec::Verifier verifier(device, compiler, base, 11);
  auto shape = base;
  shape.tokens = M;
  // The reduce stage two sums in a fixed order, so serial and overlapped runs agree bit for bit.
  auto pair = search::default_config(shape, arch, M);
  pair.stage2.stage2_mode = search::Stage2Mode::reduce;
  INFO("pair " << pair.stage1.name() << " + " << pair.stage2.name() << ", M=" << M);
  auto const invalid = search::check_config(pair.stage2, arch, shape);
  INFO(invalid.value_or("valid"));
  REQUIRE_FALSE(invalid.has_value());
  auto const x = moe::make_activations(shape, 5);
  auto const spec = moe::parse_routing_spec("uniform");
  exec::DeviceInputs const a(device, shape, x, moe::make_routing(spec, M, shape.experts, shape.topk, 6));
  exec::DeviceInputs const b(device, shape, x, moe::make_routing(spec, M, shape.experts, shape.topk, 7));
  exec::DeviceWeights const weights(device, verifier.device_weights(), 2);
  exec::MoePipeline pipeline(device, arch, shape, M, pair.stage1, compiler.compile(pair.stage1).result,
                             pair.stage2, compiler.compile(pair.stage2).result);
  gpu::Stream stream(device);

  REQUIRE(pipeline.launch_order() == gpu::LaunchOrder::early_start);  // the default
  pipeline.set_launch_order(gpu::LaunchOrder::serial);
  auto const serial_b = run_alternating(pipeline, a, b, weights, stream, 2);
  pipeline.set_launch_order(gpu::LaunchOrder::early_start);
  auto const overlapped_b = run_alternating(pipeline, a, b, weights, stream, 16);
  REQUIRE(serial_b.size() == overlapped_b.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < serial_b.size(); ++i) differing += serial_b[i] != overlapped_b[i] ? 1 : 0;
  CHECK(differing == 0);
  // And the routing matters (the check above could not pass by reading a's result instead).
  pipeline.set_launch_order(gpu::LaunchOrder::serial);
  pipeline.fill_outputs(0xFF);
  pipeline.enqueue(a, weights, stream);
  stream.synchronize();
  CHECK(pipeline.download_y() != serial_b);
}

}  // namespace

TEST_CASE("launch overlap: back-to-back overlapped MoEs equal serial launches bit for bit", "[gpu][exec]") {
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
    moe::MoeShape shape;  // small, so 3 dtypes x 4 M stay quick: H1024 I256 E32 top4
    shape.hidden = 1024, shape.inter = 256, shape.experts = 32, shape.topk = 4, shape.dtype = dtype;
    for (std::int64_t M : {1, 8, 64, 512}) check_overlap_matches_serial(shape, M);
  }
}
