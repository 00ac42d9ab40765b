#pragma once
// One MoE layer invocation as the tuner sees it (DESIGN.md §2): sizes, data path and the
// layout choices that change the bytes a kernel reads. Plus what the layer costs: the bytes
// that must move and the FLOPs, which the reports turn into bandwidth and TFLOP/s figures.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/moe/mx_formats.hpp"

namespace moetune::moe {

// a16w4: bf16 activations, MXFP4 weights. a8w4: MXFP8 activations and intermediate, MXFP4
// weights. bf16: everything bf16.
enum class DtypePath { a16w4, a8w4, bf16 };
// Row order of w1's gate and up projections (docs/kernel-contract.md).
enum class GateUpLayout { interleaved, separated };

[[nodiscard]] std::string_view to_string(DtypePath path);
[[nodiscard]] std::string_view to_string(GateUpLayout layout);
// Parse the names above; throw moetune::Error listing the accepted names.
[[nodiscard]] DtypePath parse_dtype_path(std::string_view text);
[[nodiscard]] GateUpLayout parse_gate_up_layout(std::string_view text);

struct MoeShape {
  std::int64_t tokens = 1;         // M
  std::int64_t hidden = 0;         // H (model_dim)
  std::int64_t inter = 0;          // I, padded (inter_dim)
  std::int64_t logical_inter = 0;  // <= I; weights past it are zero. 0 means "= inter".
  int experts = 0;                 // E
  int topk = 0;
  DtypePath dtype = DtypePath::a16w4;
  GateUpLayout gate_up = GateUpLayout::interleaved;
  bool doweight_stage1 = false;
  Fp8Flavor fp8_flavor = Fp8Flavor::ocp;  // OCP e4m3 or gfx942's e4m3fnuz; read by a8w4 only

  [[nodiscard]] std::int64_t effective_logical_inter() const {
    return logical_inter == 0 ? inter : logical_inter;
  }
  [[nodiscard]] std::int64_t slots() const { return tokens * topk; }
  friend bool operator==(const MoeShape&, const MoeShape&) = default;
};

// Every reason the shape is unusable, one readable sentence each; empty when valid.
[[nodiscard]] std::vector<std::string> validation_errors(const MoeShape& shape);
// Throws moetune::Error listing every reason when the shape is invalid.
void validate(const MoeShape& shape);
// "M=8 H=5120 I=640 (logical 576) E=384 topk=6 a16w4 interleaved doweight_stage1=0"
[[nodiscard]] std::string to_string(const MoeShape& shape);

// Physical w1 row (within one expert) of logical intermediate column j's gate / up projection.
[[nodiscard]] std::int64_t gate_row(const MoeShape& shape, std::int64_t j);
[[nodiscard]] std::int64_t up_row(const MoeShape& shape, std::int64_t j);

// ---- cost model ---------------------------------------------------------------------------

// Bytes per weight as stored: MXFP4 = half a byte plus one scale byte per 32 = 0.53125.
[[nodiscard]] double weight_bytes_per_element(DtypePath path);
// Bytes per activation / intermediate element as stored (bf16 = 2, MXFP8 = 1 + 1/32).
[[nodiscard]] double activation_bytes_per_element(DtypePath path);

// Expected number of distinct experts hit by M tokens under uniform routing:
// D(M) = E * (1 - (1 - topk/E)^M).
[[nodiscard]] double expected_experts_touched(int experts, int topk, std::int64_t tokens);

// Bytes the full MoE (sort + stage one + stage two) must move at least, by buffer.
struct MoeTraffic {
  double experts_touched = 0;     // D: the weights of these experts are read once
  double weight_bytes = 0;        // D * 3 * I * H weights (w1 and w2), incl. MX scales
  double activation_bytes = 0;    // x read once
  double intermediate_bytes = 0;  // h written by stage one and read by stage two
  double output_bytes = 0;        // y written once (bf16)
  double routing_bytes = 0;       // topk_ids + topk_weights read
  [[nodiscard]] double total() const {
    return weight_bytes + activation_bytes + intermediate_bytes + output_bytes + routing_bytes;
  }
};
// For a given number of touched experts (exact count of a concrete routing, or D(M)).
[[nodiscard]] MoeTraffic moe_traffic(const MoeShape& shape, double experts_touched);
// With D(M) for uniform routing.
[[nodiscard]] MoeTraffic expected_moe_traffic(const MoeShape& shape);
// 2 * M * topk * (2I*H + H*I): the multiply-adds both stages perform over the padded I.
[[nodiscard]] double moe_flops(const MoeShape& shape);

}  // namespace moetune::moe
