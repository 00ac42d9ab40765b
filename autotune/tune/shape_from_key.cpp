#include "autotune/tune/shape_from_key.hpp"

#include <fmt/format.h>

namespace moetune::tune {

std::variant<moe::MoeShape, std::string> shape_from_key(const io::FmoeKey& key, std::int64_t M,
                                                        search::Arch arch) {
  using io::TorchDtype;
  if (key.act_type != io::ActivationType::silu) {
    return fmt::format("activation {} is not supported (moe-tune's kernels implement SiLU)",
                       io::to_string(key.act_type));
  }
  if (!key.use_g1u1) return std::string("use_g1u1=0 (no gate/up pair) is not supported");
  if (key.dtype != TorchDtype::bf16) {
    return fmt::format("output dtype {} is not supported (bf16 only)", io::to_string(key.dtype));
  }
  moe::MoeShape shape;
  if (key.q_dtype_w == TorchDtype::fp4x2_e2m1fn && key.q_type == io::QuantType::per_1x32) {
    if (key.q_dtype_a == TorchDtype::bf16) {
      shape.dtype = moe::DtypePath::a16w4;
    } else if (key.q_dtype_a == TorchDtype::fp8_e4m3fn || key.q_dtype_a == TorchDtype::fp8_e4m3fnuz) {
      shape.dtype = moe::DtypePath::a8w4;
    } else {
      return fmt::format("activations {} with MXFP4 weights are not supported",
                         io::to_string(key.q_dtype_a));
    }
  } else if (key.q_dtype_a == TorchDtype::bf16 && key.q_dtype_w == TorchDtype::bf16 &&
             key.q_type == io::QuantType::no) {
    shape.dtype = moe::DtypePath::bf16;
  } else {
    return fmt::format("{} x {} with {} has no moe-tune kernel (A16W4, A8W4 per_1x32 and bf16 "
                       "are supported)",
                       io::to_string(key.q_dtype_a), io::to_string(key.q_dtype_w),
                       io::to_string(key.q_type));
  }
  shape.tokens = M;
  shape.hidden = key.model_dim;
  shape.inter = key.inter_dim;
  shape.experts = static_cast<int>(key.expert);
  shape.topk = static_cast<int>(key.topk);
  shape.gate_up = moe::GateUpLayout::interleaved;
  shape.doweight_stage1 = key.doweight_stage1;
  shape.fp8_flavor = arch == search::Arch::gfx942 ? moe::Fp8Flavor::fnuz : moe::Fp8Flavor::ocp;
  if (auto const errors = moe::validation_errors(shape); !errors.empty()) {
    return fmt::format("invalid shape: {}", errors.front());
  }
  return shape;
}

}  // namespace moetune::tune
