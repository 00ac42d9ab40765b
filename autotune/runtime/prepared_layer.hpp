#pragma once
// One MoE layer ready to run: per bucket the kernel pair, its loaded kernels, launch geometry,
// the scalar kernel arguments and the workspace layout; the weights in the layouts those
// kernels read. forward() only picks the bucket, patches the call's pointers and M into the
// bucket's argument template and enqueues the launches: no allocation, no host
// synchronisation, no compile, no lock, no driver call but the launches, so a graph can
// capture it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autotune/gpu/gpu.hpp"
#include "autotune/runtime/bucket_plan.hpp"
#include "autotune/runtime/kernel_library.hpp"
#include "autotune/runtime/prepared_weights.hpp"
#include "moetune/moetune.h"

namespace moetune::runtime {

// The argument lists of kernels/moe_sort.cuh (and moe_upcast_x.cuh's sort, whose list extends
// it), moe_stage1.cuh, moe_stage2.cuh and moe_aux.cuh.
enum class ArgList : std::uint8_t { sort, stage1, stage2, reduce };

struct KernelLaunch {
  gpu::Kernel kernel;
  gpu::Dim3 grid, block;
  std::uint32_t dynamic_shared_bytes = 0;
  ArgList args = ArgList::sort;  // which argument list the kernel takes
};

// The kernel arguments of one forward, as values: every field but the call's pointers and M
// (and the accumulator's word count, which follows M) is filled at prepare time, so a call
// copies the bucket's template and patches those. Field order and types are the kernels'.
struct ForwardArgValues {
  // the call's
  void* x = nullptr;
  void* x_scales = nullptr;
  void* ids = nullptr;
  void* weights = nullptr;
  void* y = nullptr;
  void* slots = nullptr;
  void* block_expert = nullptr;
  void* num_blocks = nullptr;
  void* h = nullptr;
  void* h_scales = nullptr;
  void* partial = nullptr;
  // Stage one's x and scales: the call's, or with x_bf16 the workspace's upcast and none.
  void* x_bf16 = nullptr;
  void* stage1_x = nullptr;
  void* stage1_x_scales = nullptr;
  std::int32_t M = 0;
  std::int64_t accumulator_words = 0;  // stage one's acc_n16: acc[M][H] in fp32 as 16-byte words
  // the bucket's (prepare time)
  void* w1 = nullptr;
  void* w2 = nullptr;
  void* w1_scales = nullptr;
  void* w2_scales = nullptr;
  std::int32_t topk = 0, experts = 0, hidden = 0, inter = 0, block_m = 0, capacity = 0;
  std::int32_t reduce_rows = 0;  // reduce: topk partial rows per token; atomic: 1 (rounds acc)
  std::int32_t stage1_grid_x = 0, stage1_ctas = 0;  // stage one's grid: grid.x and its CTAs
  std::int32_t upcast_ctas = 0;  // x_bf16: the sort launch's upcast CTAs (kernels/moe_upcast_x.cuh)
};

struct PreparedBucket {
  BucketChoice choice;
  BucketPlan plan;
  std::string stage1_name, stage2_name;
  std::vector<KernelLaunch> launches;  // in run order: sort, stage one, stage two, reduce
  ForwardArgValues args;  // the template: the bucket's fields set, the call's left empty
  // atomic stage two: hidden * 4 / 16 (acc[1][H] in 16-byte words); reduce: 0
  std::int64_t accumulator_words_per_token = 0;
};

// The launches of one forward with their argument values and argument-pointer arrays, built
// in place (the arrays point into the object, so it is neither copied nor moved). forward()
// builds one on its stack per call; the host-cost benchmark builds one once and times
// enqueue() alone, the floor of what forward can cost with these kernels.
class ForwardLaunches {
 public:
  // No checks: forward() validates `call` first.
  ForwardLaunches(const PreparedBucket& bucket, const moetune_forward_args& call, bool a8w4);
  ForwardLaunches(const ForwardLaunches&) = delete;
  ForwardLaunches& operator=(const ForwardLaunches&) = delete;

  // The launches in order on the call's stream; throws GpuError when one fails. forward()
  // overlaps each launch with the kernel before it; the host-cost benchmark also times them
  // serial (LaunchOrder::serial) to show what the overlap attribute costs the host.
  void enqueue(gpu::LaunchOrder order = gpu::LaunchOrder::early_start) const;
  [[nodiscard]] std::size_t size() const { return m_bucket->launches.size(); }

 private:
  const PreparedBucket* m_bucket;
  gpu::ExternalStream m_stream;
  ForwardArgValues m_v;
  void* m_sort[14];  // moe_sort reads the first 9, moe_sort_upcast_x all 14
  void* m_stage1[18];
  void* m_stage2[14];
  void* m_reduce[5];
};

class PreparedLayer {
 public:
  // Builds the buckets from `choices` (every configuration already prepared in `kernels`).
  PreparedLayer(const LayerSpec& layer, search::Arch arch,
                std::vector<BucketChoice> choices, const KernelLibrary& kernels,
                std::unique_ptr<PreparedWeights> weights);

  // Throws RuntimeError for a bad argument (null pointer, tokens out of range, workspace too
  // small or misaligned) and GpuError when a launch fails.
  void forward(const moetune_forward_args& args) const;

  [[nodiscard]] const PreparedBucket& bucket(std::int64_t tokens) const;
  [[nodiscard]] std::size_t workspace_bytes(std::int64_t tokens) const;
  [[nodiscard]] const LayerSpec& spec() const { return m_spec; }
  [[nodiscard]] bool a8w4() const { return m_a8w4; }
  [[nodiscard]] const std::vector<PreparedBucket>& buckets() const { return m_buckets; }
  [[nodiscard]] const PreparedWeights& weights() const { return *m_weights; }
  [[nodiscard]] const std::string& report_json() const { return m_report_json; }
  void set_report_json(std::string json) { m_report_json = std::move(json); }

 private:
  LayerSpec m_spec;
  bool m_a8w4 = false;
  std::unique_ptr<PreparedWeights> m_weights;
  std::vector<PreparedBucket> m_buckets;  // index: bucket_index(tokens)
  std::string m_report_json;
};

}  // namespace moetune::runtime
