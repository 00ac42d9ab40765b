#pragma once
// A forward with fixed buffers (moetune_forward_plan_*, docs/runtime.md "Planned forward"):
// one layer's launches for one call's pointers and M, captured once into a graph on a stream
// of the plan's own and instantiated, so that each later call is one graph launch. On the
// H200 that is ~1.2 us of host time per layer against ~11 us for the four kernel launches of
// moetune_forward (results/sm_90/2026-12-03-h200-s17/p1), for an engine that calls a layer
// again and again with the same tensors (its own buffers, the same M) without capturing a
// graph of its step itself.
//
// A graph cannot be launched into a stream that is itself being captured (an engine capturing
// its step): there the plan enqueues the layer's kernel launches instead, which the engine's
// graph then holds; launches on the caller's stream are then exactly moetune_forward's.
#include "autotune/gpu/gpu.hpp"
#include "autotune/runtime/prepared_layer.hpp"
#include "moetune/moetune.h"

namespace moetune::runtime {

class ForwardPlan {
 public:
  // Checks `call` as forward does (tokens, pointers, workspace; its stream is not kept), then
  // captures and instantiates. Allocates and may take tens of microseconds: never inside a
  // graph capture. The layer and every buffer `call` names must outlive the plan.
  ForwardPlan(const PreparedLayer& layer, const gpu::Device& device, const moetune_forward_args& call);

  // The planned forward on `stream` (NULL: the legacy default stream). Launches of one plan
  // run one after another (they share its workspace), as a graph's launches do.
  void launch(void* stream) const;

  [[nodiscard]] std::int64_t tokens() const { return m_call.tokens; }

 private:
  const PreparedLayer* m_layer;
  const gpu::Device* m_device;
  moetune_forward_args m_call;
  gpu::GraphExec m_graph;  // not valid for tokens == 0: nothing to run
};

}  // namespace moetune::runtime
