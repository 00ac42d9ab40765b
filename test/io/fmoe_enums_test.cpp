#include "autotune/io/fmoe_enums.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace moetune::io;

TEST_CASE("enums: every enum spelling parses and prints back unchanged", "[io]") {
  auto round_trip = [](auto tag, auto parse) {
    std::size_t n = 0;
    for (auto const& s : spellings(tag)) {
      auto const parsed = parse(s.text);
      REQUIRE(parsed);
      CHECK(*parsed.value == s.value);
      CHECK(to_string(*parsed.value) == s.text);
      ++n;
    }
    return n;
  };
  CHECK(round_trip(ActivationType{}, parse_activation_type) == 6);
  CHECK(round_trip(TorchDtype{}, parse_torch_dtype) == 16);
  CHECK(round_trip(QuantType{}, parse_quant_type) == 8);
  CHECK(round_trip(GateMode{}, parse_gate_mode) == 2);
}

TEST_CASE("enums: values print with AITER's exact spellings", "[io]") {
  CHECK(to_string(ActivationType::silu) == "ActivationType.Silu");
  CHECK(to_string(ActivationType::no) == "ActivationType.No");
  CHECK(to_string(TorchDtype::fp4x2_e2m1fn) == "torch.float4_e2m1fn_x2");
  CHECK(to_string(TorchDtype::fp8_e4m3fnuz) == "torch.float8_e4m3fnuz");
  CHECK(to_string(TorchDtype::u32) == "torch.uint32");
  CHECK(to_string(QuantType::per_1x32) == "QuantType.per_1x32");
  CHECK(to_string(QuantType::per_tensor) == "QuantType.per_Tensor");
  CHECK(to_string(QuantType::per_128x128) == "QuantType.per_128x128");
  CHECK(to_string(GateMode::separated) == "GateMode.SEPARATED");
}

TEST_CASE("enums: an unknown spelling is rejected with the list of valid ones", "[io]") {
  auto const act = parse_activation_type("ActivationType.silu");  // wrong case
  REQUIRE_FALSE(act);
  CHECK(act.error ==
        "expected an activation type (one of ActivationType.Silu, ActivationType.Gelu, "
        "ActivationType.Swiglu, ActivationType.Situv2, ActivationType.GeluTanh, "
        "ActivationType.No), found 'ActivationType.silu'");

  auto const q = parse_quant_type("QuantType.per_token");
  REQUIRE_FALSE(q);
  CHECK(q.error ==
        "expected a quantization type (one of QuantType.No, QuantType.per_Tensor, "
        "QuantType.per_Token, QuantType.per_1x32, QuantType.per_1x128, QuantType.per_128x128, "
        "QuantType.per_256x128, QuantType.per_1024x128), "
        "found 'QuantType.per_token'");

  auto const dtype = parse_torch_dtype("dtypes.bf16");  // AITER's Python alias, not the CSV text
  REQUIRE_FALSE(dtype);
  CHECK(dtype.error.find("torch.bfloat16, torch.float16") != std::string::npos);
  CHECK(dtype.error.ends_with("found 'dtypes.bf16'"));

  CHECK_FALSE(parse_gate_mode("GateMode.interleave"));
  CHECK_FALSE(parse_torch_dtype(""));
}

TEST_CASE("enums: quantization types imply the K granularity of their scales", "[io]") {
  CHECK(k_granularity(QuantType::per_1x32) == 32);
  CHECK(k_granularity(QuantType::per_1x128) == 128);
  CHECK(k_granularity(QuantType::per_128x128) == 128);
  CHECK(k_granularity(QuantType::per_token) == 1);
  CHECK(k_granularity(QuantType::no) == 1);
}
