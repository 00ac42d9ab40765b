#pragma once
// The C API's opaque handles (include/moetune/moetune.h) as the library defines them: for the
// C API itself and for tests and benchmarks that reach past it to the C++ objects (never
// installed; an engine sees only the opaque types).
#include <memory>

#include "autotune/runtime/forward_plan.hpp"
#include "autotune/runtime/prepared_layer.hpp"
#include "autotune/runtime/runtime_context.hpp"
#include "moetune/moetune.h"

struct moetune_context {
  std::unique_ptr<moetune::runtime::RuntimeContext> impl;
};

struct moetune_layer {
  std::unique_ptr<moetune::runtime::PreparedLayer> impl;
  const moetune::gpu::Device* device = nullptr;  // the context's, which outlives the layer
};

struct moetune_forward_plan {
  std::unique_ptr<moetune::runtime::ForwardPlan> impl;
};
