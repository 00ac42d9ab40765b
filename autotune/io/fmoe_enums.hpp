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

enum class ActivationType { silu, gelu, swiglu, no };

enum class TorchDtype {
  bf16,
  f16,
  f32,
  fp8_e4m3fn,
  fp8_e4m3fnuz,
  fp8_e5m2,
  fp4x2_e2m1fn,
  i8,
  i4,
  u32,
};

enum class QuantType { no, per_tensor, per_token, per_1x32, per_1x128, per_128x128 };

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
// 128 for per_1x128 and per_128x128 (block scales), 1 where any K works.
[[nodiscard]] int k_granularity(QuantType value);

}  // namespace moetune::io
