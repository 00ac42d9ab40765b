#pragma once
// The enumerated columns of AITER's fMoE tables, typed, with AITER's exact spellings.
//
// AITER writes these cells with Python's str() of its own enums and torch dtypes
// ("ActivationType.Silu", "torch.bfloat16", ...) and matches them as strings when it looks a
// shape up, so a spelling that differs by one character is a row AITER never finds. We
// therefore parse only the exact spellings and print them back unchanged.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace moetune::io {

// Every member of AITER's ActivationType (aiter/ops/enum.py, csrc/include/aiter_enum.h), not
// only those seen in shipped tables: a table AITER loads must never be refused here.
enum class ActivationType { silu, gelu, swiglu, situv2, gelu_tanh, no };

enum class TorchDtype {
  bf16,
  f16,
  f32,
  fp8_e4m3fn,
  fp8_e4m3fnuz,
  fp8_e5m2,
  fp4x2_e2m1fn,
  fp8_e8m0fnu,  // dtypes.fp8_e8m0 (MX block scales)
  i8,
  i4,  // dtypes.i4x2: torch.int4
  u8,  // AITER's 8-bit fallback where torch lacks a dtype
  i16,
  i32,
  i64,
  u32,
  u64,
};

enum class QuantType {
  no,
  per_tensor,
  per_token,
  per_1x32,
  per_1x128,
  per_128x128,
  per_256x128,
  per_1024x128,
};

// Order of gate and up rows in w1 (fused-hybrid tables only).
enum class GateMode { interleave, separated };

// One enum value and the text AITER writes for it.
template <class E>
struct EnumSpelling {
  E value;
  std::string_view text;
};

// The outcome of parsing an enum cell: a value, or a message naming what was found and
// listing every valid spelling (so the user can fix the cell without reading our source).
template <class E>
struct EnumParse {
  std::optional<E> value;
  std::string error;
  [[nodiscard]] explicit operator bool() const { return value.has_value(); }
};

[[nodiscard]] std::span<const EnumSpelling<ActivationType>> spellings(ActivationType);
[[nodiscard]] std::span<const EnumSpelling<TorchDtype>> spellings(TorchDtype);
[[nodiscard]] std::span<const EnumSpelling<QuantType>> spellings(QuantType);
[[nodiscard]] std::span<const EnumSpelling<GateMode>> spellings(GateMode);

[[nodiscard]] std::string_view to_string(ActivationType value);
[[nodiscard]] std::string_view to_string(TorchDtype value);
[[nodiscard]] std::string_view to_string(QuantType value);
[[nodiscard]] std::string_view to_string(GateMode value);

[[nodiscard]] EnumParse<ActivationType> parse_activation_type(std::string_view text);
[[nodiscard]] EnumParse<TorchDtype> parse_torch_dtype(std::string_view text);
[[nodiscard]] EnumParse<QuantType> parse_quant_type(std::string_view text);
[[nodiscard]] EnumParse<GateMode> parse_gate_mode(std::string_view text);

// "A, B, C": every valid spelling of E, for messages.
template <class E>
[[nodiscard]] std::string spelling_list() {
  std::string out;
  for (auto const& s : spellings(E{})) {
    if (!out.empty()) out += ", ";
    out += s.text;
  }
  return out;
}

// Parses any of the enums above; the message says which kind of value was expected.
template <class E>
[[nodiscard]] EnumParse<E> parse_enum(std::string_view text, std::string_view what) {
  for (auto const& s : spellings(E{})) {
    if (s.text == text) return {s.value, {}};
  }
  std::string error = "expected ";
  error += what;
  error += " (one of ";
  error += spelling_list<E>();
  error += "), found '";
  error += text;
  error += "'";
  return {std::nullopt, std::move(error)};
}

// Number of scale groups along K a quantization type implies: 32 for per_1x32 (MX formats),
// 128 for the block scales (per_1x128, per_128x128, per_256x128, per_1024x128), 1 where any K
// works.
[[nodiscard]] int k_granularity(QuantType value);

// Bytes per element as AITER's tuners count them (TunerCommon.dtype2bpe_dict) for the `bw`
// column: 2 for 16-bit types, 1 for 8-bit ones and for float4_e2m1fn_x2 (AITER counts a packed
// fp4 pair's element as a byte), 0.5 for torch.int4, 4 for 32-bit, 8 for 64-bit types.
[[nodiscard]] double aiter_bytes_per_element(TorchDtype value);

}  // namespace moetune::io
