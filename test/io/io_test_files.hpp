#pragma once
// Small helpers shared by the io tests: write a file with exact bytes, and run code that must
// throw an InputError and hand the error back for its location and message to be checked.
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/core/error.hpp"

namespace moetune::test {

inline std::filesystem::path write_text(const std::filesystem::path& dir, const std::string& name,
                                        std::string_view bytes) {
  auto const path = dir / name;
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write test file " + path.string());
  return path;
}

// Returns the InputError `f` throws; fails the test (by throwing) if it throws nothing.
template <class F>
InputError input_error_from(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  throw std::runtime_error("expected an InputError, none was thrown");
}

// A valid newest-layout tuned header and a row for it (29 columns).
inline constexpr std::string_view tuned_header =
    "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,"
    "q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,"
    "us,run_1stage,xbf16,flat,tflops,bw,_tag";
inline constexpr std::string_view untuned_header =
    "token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,"
    "doweight_stage1";

// A tuned row with a chosen token (gfx950, 256 CUs, A8W4 per_1x32).
inline std::string tuned_row(int token, std::string_view us1 = "12.0719",
                             std::string_view us2 = "8.8572", std::string_view us = "20.9291") {
  return "gfx950,256," + std::to_string(token) +
         ",7168,512,384,6,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fn,"
         "torch.float4_e2m1fn_x2,QuantType.per_1x32,1,0,32,0," +
         std::string(us1) + ",k1,0.0%," + std::string(us2) +
         ",flydsl_moe2_afp8_wfp4_bf16_t32x256x256_reduce,0.0%," + std::string(us) +
         ",0,0,0,6.31,202009.64,";
}

inline std::string untuned_row(int token, std::string_view dims = "7168,512,384,6",
                               std::string_view q_type = "QuantType.per_1x32") {
  return std::to_string(token) + "," + std::string(dims) +
         ",ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fn,torch.float4_e2m1fn_x2," +
         std::string(q_type) + ",1,0";
}

}  // namespace moetune::test

namespace moetune::test {

// `line` with the cell under `column` (named in `header`) replaced by `value`.
inline std::string with_cell(std::string_view line, std::string_view header,
                             std::string_view column, std::string_view value) {
  auto split = [](std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
      auto const comma = text.find(',', start);
      out.emplace_back(text.substr(
          start, comma == std::string_view::npos ? text.size() - start : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return out;
  };
  auto const names = split(header);
  auto cells = split(line);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == column) cells.at(i) = std::string(value);
  }
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
  return out;
}

}  // namespace moetune::test
