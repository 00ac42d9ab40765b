#pragma once
// A workload's inputs on the GPU, in two parts with different lifetimes:
// - DeviceWeights: the experts' weights, uploaded once per shape (gigabytes for DeepSeek
//   shapes) and optionally held in several identical copies, so that a timed sequence of
//   launches rotates through more memory than the L2 holds (in serving, the other layers
//   evict this layer's weights);
// - DeviceInputs: activations and routing for one M, replaceable in place (same addresses,
//   new values), which the changed-input graph replay needs.
#include <array>
#include <string>
#include <vector>

#include "autotune/gpu/gpu.hpp"
#include "autotune/moe/workload.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::exec {

struct WeightCopy {
  gpu::DeviceBuffer w1, w1_scales, w2, w2_scales;  // scales empty on the bf16 path
  // The MXFP4 codes again in the repacked layout (moe/mxfp4_repack.hpp) that `_rp` kernels
  // read, prepared once when the weights are uploaded; the scales are shared. Empty on bf16.
  gpu::DeviceBuffer w1_repacked, w2_repacked;
  // Codes and scales again in the wgmma tile layout (moe/mxfp4_wgmma_tiles.hpp) that `_wg`
  // kernels read, for each matrix whose K allows it (empty otherwise, and on bf16).
  gpu::DeviceBuffer w1_tiles, w1_tile_scales, w2_tiles, w2_tile_scales;
  // A8W4 only: the codes in the wgmma tile layout's A16W4 words, which the kernels compiled as
  // A16W4's main loop read (a stage one reading x in bf16, a stage two keeping h in bf16); the
  // tile scales are w1_tile_scales and w2_tile_scales (the same layout for both words).
  gpu::DeviceBuffer w1_tiles_a16w4, w2_tiles_a16w4;

  // Every buffer above, in this order: the one list that copying, sizing, hashing and the
  // verifier's checksum walk.
  static constexpr std::array<gpu::DeviceBuffer WeightCopy::*, 12> buffers{
      &WeightCopy::w1,       &WeightCopy::w1_scales,      &WeightCopy::w2,       &WeightCopy::w2_scales,
      &WeightCopy::w1_repacked, &WeightCopy::w2_repacked, &WeightCopy::w1_tiles, &WeightCopy::w1_tile_scales,
      &WeightCopy::w2_tiles, &WeightCopy::w2_tile_scales, &WeightCopy::w1_tiles_a16w4, &WeightCopy::w2_tiles_a16w4};
  [[nodiscard]] std::vector<const gpu::DeviceBuffer*> all() const;
};

// The codes and scales of w1 or w2 in the layout a kernel reads (search::weight_layout).
struct WeightView {
  const gpu::DeviceBuffer& codes;
  const gpu::DeviceBuffer& scales;
};
[[nodiscard]] WeightView weight_view(const WeightCopy& w, int stage, search::WeightLayout layout);

class DeviceWeights {
 public:
  // MXFP4 weights are also repacked and tiled for wgmma (on the host, timed: repack_seconds())
  // and uploaded in those layouts.
  DeviceWeights(const gpu::Device& device, const moe::MoeShape& shape, const moe::Weights& weights,
                int copies = 1);
  // `copies` freshly allocated copies of `source`'s first copy, copied on the device: a new
  // placement for a timing block at device-copy speed (milliseconds), where uploading
  // gigabytes from the host again would cost about a second per block.
  DeviceWeights(const gpu::Device& device, const DeviceWeights& source, int copies);
  [[nodiscard]] const WeightCopy& copy(int index) const;  // index taken modulo copies()
  [[nodiscard]] int copies() const { return static_cast<int>(m_copies.size()); }
  [[nodiscard]] std::size_t bytes_per_copy() const;
  // Host time the repack and the wgmma tiling of the MXFP4 weights took when these weights
  // were uploaded (0 for bf16 and for device copies): a load-time cost, never part of a timed
  // MoE.
  [[nodiscard]] double repack_seconds() const { return m_repack_seconds; }
  // A fast 64-bit hash over every copy's bytes (core/fast_hash.hpp), as hex.
  [[nodiscard]] std::string digest() const;

 private:
  std::vector<WeightCopy> m_copies;
  double m_repack_seconds = 0;
};

// How many weight copies make one timed replay cold: enough that the weights this routing
// touches, rotated through the copies, stream at least 4x the L2 (in serving, the other layers
// evict this layer's weights), bounded by a third of free device memory; 1 when `hot`.
[[nodiscard]] int cold_weight_copies(const gpu::Device& device, const moe::MoeShape& shape,
                                     const moe::Routing& routing, std::size_t bytes_per_copy,
                                     bool hot);

class DeviceInputs {
 public:
  // x and routing for workload.shape.tokens tokens.
  DeviceInputs(const gpu::Device& device, const moe::MoeShape& shape, const moe::Activations& x,
               const moe::Routing& routing);

  [[nodiscard]] std::int64_t tokens() const { return m_tokens; }
  [[nodiscard]] const gpu::DeviceBuffer& x() const { return m_x; }
  [[nodiscard]] const gpu::DeviceBuffer& x_scales() const { return m_x_scales; }
  [[nodiscard]] const gpu::DeviceBuffer& topk_ids() const { return m_topk_ids; }
  [[nodiscard]] const gpu::DeviceBuffer& topk_weights() const { return m_topk_weights; }

  // Replace values in place; sizes must be those of the shape.
  void upload_activations(const moe::Activations& x);
  void upload_routing(const moe::Routing& routing);
  [[nodiscard]] std::string digest() const;  // fast 64-bit hash over x, scales, ids, weights

 private:
  moe::DtypePath m_dtype;
  std::int64_t m_tokens;
  gpu::DeviceBuffer m_x, m_x_scales, m_topk_ids, m_topk_weights;
};

}  // namespace moetune::exec
