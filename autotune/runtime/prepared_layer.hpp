#pragma once
// One MoE layer ready to run: per bucket the kernel pair, its loaded kernels, launch geometry
// and workspace layout; the weights in the layouts those kernels read. forward() only picks
// the bucket and enqueues the launches with the caller's pointers: no allocation, no host
// synchronisation, no compile, so a graph can capture it.
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

struct KernelLaunch {
  gpu::Kernel kernel;
  gpu::Dim3 grid, block;
  std::uint32_t dynamic_shared_bytes = 0;
};

enum class StageTwoPart { zero, stage, reduce };

struct PreparedBucket {
  BucketChoice choice;
  BucketPlan plan;
  std::string stage1_name, stage2_name;
  KernelLaunch sort, stage1;
  std::vector<std::pair<StageTwoPart, KernelLaunch>> stage2;  // in run order
  const void* w1 = nullptr;  // the layout stage one reads
  const void* w2 = nullptr;  // the layout stage two reads
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
  [[nodiscard]] const std::vector<PreparedBucket>& buckets() const { return m_buckets; }
  [[nodiscard]] const PreparedWeights& weights() const { return *m_weights; }
  [[nodiscard]] const std::string& report_json() const { return m_report_json; }
  void set_report_json(std::string json) { m_report_json = std::move(json); }

 private:
  LayerSpec m_spec;
  std::unique_ptr<PreparedWeights> m_weights;
  std::vector<PreparedBucket> m_buckets;  // index: bucket_index(tokens)
  std::string m_report_json;
};

}  // namespace moetune::runtime
