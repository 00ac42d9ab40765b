#pragma once
// Seeded synthetic inputs for one MoE layer, in the exact byte layouts of
// docs/kernel-contract.md, as host vectors ready to upload.
//
// Values (before quantisation): x ~ N(0, 1); w1 ~ N(0, 1/H) (std 1/sqrt(H)), so gate and up
// are O(1); w2 ~ N(0, 1/I_logical), so each expert's output row is O(1) and y, a convex
// combination over topk, is too. Normals are the Irwin-Hall approximation of random.hpp.
// Rows past logical_inter (w1) and columns past it (w2) are exactly zero.
//
// Every row has its own random stream keyed by its *logical* position (expert, gate/up,
// intermediate column; or token), so the same seed gives the same logical weights whatever
// the thread count and whatever the gate/up layout, and the same x values on every dtype path.
#include <cstdint>
#include <span>
#include <vector>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/moe/routing.hpp"

namespace moetune::moe {

// x. a16w4 and bf16: x_bf16 [M][H]. a8w4: x_codes [M][H] (e4m3 of shape.fp8_flavor) and
// x_scales [M][H/32] (e8m0). The vectors of the other path stay empty.
struct Activations {
  std::vector<std::uint16_t> x_bf16;
  std::vector<std::uint8_t> x_codes;
  std::vector<std::uint8_t> x_scales;
};

// w1 [E][2I][H] and w2 [E][H][I]. MXFP4 paths: *_codes (two e2m1 per byte along K) and
// *_scales [E][rows][K/32]. bf16 path: w1_bf16, w2_bf16. The others stay empty.
struct Weights {
  std::vector<std::uint8_t> w1_codes;
  std::vector<std::uint8_t> w1_scales;
  std::vector<std::uint8_t> w2_codes;
  std::vector<std::uint8_t> w2_scales;
  std::vector<std::uint16_t> w1_bf16;
  std::vector<std::uint16_t> w2_bf16;
};

struct Workload {
  MoeShape shape;
  std::uint64_t seed = 0;
  Activations x;
  Weights w;
  Routing routing;
};

struct WorkloadOptions {
  std::uint64_t seed = 0;
  RoutingSpec routing;   // uniform by default
  unsigned threads = 0;  // for the weights; 0 = all hardware threads
};

// The whole workload. Validates the shape (moetune::Error listing every reason).
[[nodiscard]] Workload make_workload(const MoeShape& shape, const WorkloadOptions& options = {});
// The parts on their own: changed-input replays need new activations without regenerating
// gigabytes of weights, and a new routing can be swapped in directly (workload.routing = ...).
[[nodiscard]] Activations make_activations(const MoeShape& shape, std::uint64_t seed);
[[nodiscard]] Weights make_weights(const MoeShape& shape, std::uint64_t seed, unsigned threads = 0);

// The unquantised values behind the generated data (for tests and diagnostics).
[[nodiscard]] std::vector<double> raw_x_row(const MoeShape& shape, std::uint64_t seed,
                                            std::int64_t token);

// Decoding back to the values the GPU sees. Rows are physical rows of the stored layout
// (see gate_row / up_row for w1). `out` has length H (x, w1) or I (w2).
void decode_x_row(const MoeShape& shape, const Activations& x, std::int64_t token,
                  std::span<double> out);
void decode_w1_row(const MoeShape& shape, const Weights& w, int expert, std::int64_t row,
                   std::span<double> out);
void decode_w2_row(const MoeShape& shape, const Weights& w, int expert, std::int64_t row,
                   std::span<double> out);

// Throws moetune::Error when the buffers' sizes or the routing do not match the shape: a
// hand-built or modified workload is checked before the reference trusts it.
void check_workload(const Workload& workload);

}  // namespace moetune::moe
