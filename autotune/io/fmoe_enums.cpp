#include "autotune/io/fmoe_enums.hpp"

#include <array>

namespace moetune::io {
namespace {

constexpr std::array<EnumSpelling<ActivationType>, 6> activation_spellings{{
    {ActivationType::silu, "ActivationType.Silu"},
    {ActivationType::gelu, "ActivationType.Gelu"},
    {ActivationType::swiglu, "ActivationType.Swiglu"},
    {ActivationType::situv2, "ActivationType.Situv2"},
    {ActivationType::gelu_tanh, "ActivationType.GeluTanh"},
    {ActivationType::no, "ActivationType.No"},
}};

constexpr std::array<EnumSpelling<TorchDtype>, 16> dtype_spellings{{
    {TorchDtype::bf16, "torch.bfloat16"},
    {TorchDtype::f16, "torch.float16"},
    {TorchDtype::f32, "torch.float32"},
    {TorchDtype::fp8_e4m3fn, "torch.float8_e4m3fn"},
    {TorchDtype::fp8_e4m3fnuz, "torch.float8_e4m3fnuz"},
    {TorchDtype::fp8_e5m2, "torch.float8_e5m2"},
    {TorchDtype::fp4x2_e2m1fn, "torch.float4_e2m1fn_x2"},
    {TorchDtype::fp8_e8m0fnu, "torch.float8_e8m0fnu"},
    {TorchDtype::i8, "torch.int8"},
    {TorchDtype::i4, "torch.int4"},
    {TorchDtype::u8, "torch.uint8"},
    {TorchDtype::i16, "torch.int16"},
    {TorchDtype::i32, "torch.int32"},
    {TorchDtype::i64, "torch.int64"},
    {TorchDtype::u32, "torch.uint32"},
    {TorchDtype::u64, "torch.uint64"},
}};

constexpr std::array<EnumSpelling<QuantType>, 8> quant_spellings{{
    {QuantType::no, "QuantType.No"},
    {QuantType::per_tensor, "QuantType.per_Tensor"},
    {QuantType::per_token, "QuantType.per_Token"},
    {QuantType::per_1x32, "QuantType.per_1x32"},
    {QuantType::per_1x128, "QuantType.per_1x128"},
    {QuantType::per_128x128, "QuantType.per_128x128"},
    {QuantType::per_256x128, "QuantType.per_256x128"},
    {QuantType::per_1024x128, "QuantType.per_1024x128"},
}};

constexpr std::array<EnumSpelling<GateMode>, 2> gate_mode_spellings{{
    {GateMode::interleave, "GateMode.INTERLEAVE"},
    {GateMode::separated, "GateMode.SEPARATED"},
}};

template <class E, std::size_t N>
std::string_view lookup(const std::array<EnumSpelling<E>, N>& table, E value) {
  for (auto const& s : table) {
    if (s.value == value) return s.text;
  }
  return "<invalid>";  // unreachable for a valid enumerator
}

}  // namespace

std::span<const EnumSpelling<ActivationType>> spellings(ActivationType) {
  return activation_spellings;
}
std::span<const EnumSpelling<TorchDtype>> spellings(TorchDtype) { return dtype_spellings; }
std::span<const EnumSpelling<QuantType>> spellings(QuantType) { return quant_spellings; }
std::span<const EnumSpelling<GateMode>> spellings(GateMode) { return gate_mode_spellings; }

std::string_view to_string(ActivationType value) { return lookup(activation_spellings, value); }
std::string_view to_string(TorchDtype value) { return lookup(dtype_spellings, value); }
std::string_view to_string(QuantType value) { return lookup(quant_spellings, value); }
std::string_view to_string(GateMode value) { return lookup(gate_mode_spellings, value); }

EnumParse<ActivationType> parse_activation_type(std::string_view text) {
  return parse_enum<ActivationType>(text, "an activation type");
}
EnumParse<TorchDtype> parse_torch_dtype(std::string_view text) {
  return parse_enum<TorchDtype>(text, "a torch dtype");
}
EnumParse<QuantType> parse_quant_type(std::string_view text) {
  return parse_enum<QuantType>(text, "a quantization type");
}
EnumParse<GateMode> parse_gate_mode(std::string_view text) {
  return parse_enum<GateMode>(text, "a gate mode");
}

int k_granularity(QuantType value) {
  switch (value) {
    case QuantType::per_1x32:
      return 32;
    case QuantType::per_1x128:
    case QuantType::per_128x128:
    case QuantType::per_256x128:
    case QuantType::per_1024x128:
      return 128;
    default:
      return 1;
  }
}

double aiter_bytes_per_element(TorchDtype value) {
  switch (value) {
    case TorchDtype::bf16:
    case TorchDtype::f16:
    case TorchDtype::i16:
      return 2;
    case TorchDtype::f32:
    case TorchDtype::i32:
    case TorchDtype::u32:
      return 4;
    case TorchDtype::i64:
    case TorchDtype::u64:
      return 8;
    case TorchDtype::i4:
      return 0.5;
    default:  // fp8 flavours, e8m0, fp4x2, int8, uint8
      return 1;
  }
}

}  // namespace moetune::io
