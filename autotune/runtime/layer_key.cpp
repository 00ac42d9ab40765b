#include "autotune/runtime/layer_key.hpp"

#include <bit>

namespace moetune::runtime {

std::int64_t bucket_tokens(std::int64_t tokens) {
  if (tokens <= 1) return 1;
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(tokens)));
}

int bucket_index(std::int64_t tokens) {
  if (tokens <= 1) return 0;
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(tokens - 1)));
}

std::vector<std::int64_t> bucket_list(std::int64_t max_tokens) {
  std::vector<std::int64_t> out;
  for (std::int64_t t = 1; t <= bucket_tokens(max_tokens); t *= 2) out.push_back(t);
  return out;
}

io::FmoeKey layer_key(const LayerSpec& layer, const DeviceIdentity& device, std::int64_t token) {
  using io::QuantType;
  using io::TorchDtype;
  auto const& shape = layer.shape;
  io::FmoeKey key;
  key.gfx = device.arch;
  key.cu_num = device.compute_units;
  key.token = token;
  key.model_dim = shape.hidden;
  key.inter_dim = shape.inter;
  key.expert = shape.experts;
  key.topk = shape.topk;
  key.act_type = io::ActivationType::silu;
  key.dtype = TorchDtype::bf16;  // the output
  key.use_g1u1 = true;
  key.doweight_stage1 = shape.doweight_stage1;
  key.tag = layer.tag;
  switch (shape.dtype) {
    case moe::DtypePath::a16w4:
      key.q_dtype_a = TorchDtype::bf16;
      key.q_dtype_w = TorchDtype::fp4x2_e2m1fn;
      key.q_type = QuantType::per_1x32;
      break;
    case moe::DtypePath::a8w4:
      // The e4m3 flavour the device computes in (tune/shape_from_key.cpp maps both back).
      key.q_dtype_a = shape.fp8_flavor == moe::Fp8Flavor::fnuz ? TorchDtype::fp8_e4m3fnuz
                                                               : TorchDtype::fp8_e4m3fn;
      key.q_dtype_w = TorchDtype::fp4x2_e2m1fn;
      key.q_type = QuantType::per_1x32;
      break;
    case moe::DtypePath::bf16:
      key.q_dtype_a = TorchDtype::bf16;
      key.q_dtype_w = TorchDtype::bf16;
      key.q_type = QuantType::no;
      break;
  }
  return key;
}

bool serves_layer(const io::FmoeKey& row, const io::FmoeKey& wanted) {
  auto probe = wanted;
  probe.token = row.token;
  if (row.gfx.empty()) probe.gfx.clear();
  return probe == row;
}

}  // namespace moetune::runtime
