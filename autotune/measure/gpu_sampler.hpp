#pragma once
// The Sampler on a real GPU, built on autotune/exec. UNTESTED so far: it compiles here, but
// this machine has no GPU; the first H200 run must exercise it (DESIGN.md §4 in practice).
//
// How it keeps the comparison honest:
//  - in a block, every arm (baseline, candidate, control) reads the very same DeviceInputs
//    and DeviceWeights; only the code and each arm's own pipeline scratch (sorted slots, h,
//    partials, y) differ — the control is the baseline's code in a separately built pipeline
//    with its own graph, exactly like the candidate;
//  - begin_block allocates new inputs and weights (the new ones before the old are freed, so
//    the allocator cannot hand back the same addresses) and builds and captures every arm
//    anew: placement changes between blocks and becomes noise the paired statistics see;
//    except screen blocks (BlockSpec::keep_arms, #15), which share the screen's inputs and
//    weights and keep every arm built (pipeline, loaded modules, captured and warmed graph)
//    until the tuner releases it or a block that is not kept begins;
//  - a sample is one replay of a graph of R launches, timed with events, divided by R;
//    weights rotate through copies totalling >= 4x L2 unless `hot`.
// Limits: in-process, a kernel that hangs is not caught (no watchdog: timeout is never
// reported), and after a device fault the context is lost, so later samples fail too. That is
// why `moe-tune tune` runs this class in a worker process (`moe-tune worker`, served by
// sampler_server.hpp) behind a RemoteSampler with a watchdog, unless --no-isolate.
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "autotune/exec/device_buffers.hpp"
#include "autotune/exec/moe_pipeline.hpp"
#include "autotune/exec/replay_timer.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/exec/verifier.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/moe/routing.hpp"
#include "autotune/measure/sampler.hpp"
#include "autotune/measure/test_fault.hpp"

namespace moetune::measure {

struct GpuSamplerOptions {
  int repeats = 16;                 // launches per graph replay (R)
  bool hot = false;                 // one weight copy (weights may stay in L2)
  int warmup_replays = 3;           // per graph, after capture
  moe::RoutingSpec routing;         // timing inputs' routing (uniform by default)
  std::uint64_t weight_seed = 1;    // seeded synthetic weights (and verification inputs)
  moe::Tolerance tolerance;         // atol = rtol = 0.02
  // TEST ONLY (test_fault.hpp): arms whose pair name matches fault or hang on purpose.
  std::vector<TestFault> test_faults;
};

class GpuSampler final : public Sampler {
 public:
  GpuSampler(const gpu::Device& device, search::Arch arch, exec::UnitCompiler& compiler,
             GpuSamplerOptions options = {});
  ~GpuSampler() override;

  void begin_bucket(const BucketPlan& bucket) override;
  [[nodiscard]] Preparation prepare(const TunePair& pair) override;
  [[nodiscard]] Verification quick_check(const TunePair& pair) override;
  [[nodiscard]] Verification verify(const TunePair& pair, const TunePair& baseline) override;
  void begin_block(const BlockSpec& block) override;
  [[nodiscard]] double sample_us(std::string_view arm, TimedUnit unit) override;
  void release_arm(std::string_view arm) override;
  [[nodiscard]] int repeats() const override { return m_opt.repeats; }
  // The tokens of the current block's inputs (BlockSpec::M, else the bucket's M); 0 before
  // the first block.
  [[nodiscard]] std::int64_t block_tokens() const { return m_inputs ? m_inputs->tokens() : 0; }
  // Called with each arm's label as begin_block builds it (the worker reports it, so a fault
  // or hang while building is blamed on the right arm).
  void set_build_observer(std::function<void(const std::string&)> observer) {
    m_build_observer = std::move(observer);
  }

 private:
  struct ArmState {
    std::string label;
    std::string pair_name;  // for the test-fault hook
    std::optional<std::uint64_t> delay_ns;  // Arm::delay_ns: a kept arm is reused only alike
    int repeats = 16;       // launches per replay of its graphs (BlockSpec::repeats)
    std::unique_ptr<exec::MoePipeline> pipeline;
    std::optional<gpu::GraphExec> full, sort, sort_stage1, stage2;
  };
  [[nodiscard]] std::unique_ptr<exec::MoePipeline> make_pipeline(const TunePair& pair, std::int64_t M);
  [[nodiscard]] double replay(const gpu::GraphExec& graph, int repeats);
  // calibrate's delay kernel (Arm::delay_ns), compiled on first use.
  [[nodiscard]] const jit::CompileResult& delay_unit();

  const gpu::Device& m_device;
  search::Arch m_arch;
  exec::UnitCompiler& m_compiler;
  GpuSamplerOptions m_opt;
  moe::MoeShape m_shape;  // the bucket's, tokens = M
  std::int64_t m_M = 0;
  std::int64_t m_token = 1;  // the bucket's token: its row serves M = token/2+1 ... token
  std::optional<jit::CompileOutcome> m_delay_unit;
  std::unique_ptr<exec::Verifier> m_verifier;  // per distinct shape (weights generated once)
  std::set<std::string> m_boundaries_passed;     // pairs whose boundary checks passed (this shape)
  gpu::Stream m_stream;
  exec::ReplayTimer m_timer;
  // Block state. Declared before m_arms so that graphs and pipelines go first on destruction.
  std::unique_ptr<gpu::DeviceBuffer> m_placement_pad;  // BlockSpec::placement_pad_bytes
  std::unique_ptr<exec::DeviceInputs> m_inputs;
  std::unique_ptr<exec::DeviceWeights> m_weights;
  std::vector<ArmState> m_arms;
  // The last block was kept (BlockSpec::keep_arms): its inputs, weights and arms may serve
  // the next kept block with the same units and repeats.
  bool m_kept = false;
  std::vector<TimedUnit> m_kept_units;
  int m_kept_repeats = 0;
  std::unique_ptr<TestFaultInjector> m_test_faults;  // null unless test_faults is set
  std::function<void(const std::string&)> m_build_observer;
};

}  // namespace moetune::measure
