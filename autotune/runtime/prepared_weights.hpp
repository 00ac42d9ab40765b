#pragma once
// A layer's weights in every layout its kernels read: the caller's tensors as they are
// (AITER's natural MXFP4 layout, or bf16), plus, for the stages whose kernels carry the name
// token `_rp`, a copy of the MXFP4 codes in the repacked layout (moe/mxfp4_repack.hpp) that the
// layer owns. Scales are shared by both layouts. The repack runs once, at prepare time.
#include <cstddef>

#include "autotune/gpu/gpu.hpp"
#include "autotune/moe/moe_shape.hpp"

namespace moetune::runtime {

// Device pointers owned by the caller (moetune_layer_weights).
struct LayerWeights {
  const void* w1 = nullptr;
  const void* w1_scales = nullptr;
  const void* w2 = nullptr;
  const void* w2_scales = nullptr;
};

// Bytes of the w1 / w2 arrays the kernels read (codes for MXFP4, values for bf16).
[[nodiscard]] std::size_t w1_bytes(const moe::MoeShape& shape);
[[nodiscard]] std::size_t w2_bytes(const moe::MoeShape& shape);

class PreparedWeights {
 public:
  // Repacks w1's and/or w2's codes when asked (MXFP4 paths only): the codes are copied to the
  // host in chunks, repacked and uploaded into memory this object owns.
  PreparedWeights(const gpu::Device& device, const moe::MoeShape& shape, const LayerWeights& caller,
                  bool repack_w1, bool repack_w2);

  [[nodiscard]] const void* w1(bool repacked) const;
  [[nodiscard]] const void* w2(bool repacked) const;
  [[nodiscard]] const void* w1_scales() const { return m_caller.w1_scales; }
  [[nodiscard]] const void* w2_scales() const { return m_caller.w2_scales; }
  [[nodiscard]] std::size_t repacked_bytes() const { return m_w1_repacked.size() + m_w2_repacked.size(); }
  [[nodiscard]] double repack_seconds() const { return m_repack_seconds; }

 private:
  LayerWeights m_caller;
  gpu::DeviceBuffer m_w1_repacked, m_w2_repacked;
  double m_repack_seconds = 0;
};

}  // namespace moetune::runtime
