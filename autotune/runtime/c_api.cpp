// The C API of include/moetune/moetune.h over RuntimeContext and PreparedLayer: every
// exception becomes a status code and a per-thread message; nothing escapes into C.
#include <memory>
#include <new>
#include <string>

#include <fmt/format.h>

#include "autotune/runtime/c_api_handles.hpp"
#include "autotune/runtime/runtime_context.hpp"
#include "autotune/runtime/runtime_error.hpp"
#include "moetune/moetune.h"

namespace {

using moetune::runtime::ErrorKind;
using moetune::runtime::RuntimeError;

thread_local std::string last_error;

moetune_status status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::null_pointer: return MOETUNE_ERROR_NULL_POINTER;
    case ErrorKind::invalid_argument: return MOETUNE_ERROR_INVALID_ARGUMENT;
    case ErrorKind::dtype: return MOETUNE_ERROR_DTYPE;
    case ErrorKind::shape: return MOETUNE_ERROR_SHAPE;
    case ErrorKind::device: return MOETUNE_ERROR_DEVICE;
    case ErrorKind::table: return MOETUNE_ERROR_TABLE;
    case ErrorKind::compile: return MOETUNE_ERROR_COMPILE;
    case ErrorKind::workspace: return MOETUNE_ERROR_WORKSPACE;
    case ErrorKind::gpu: return MOETUNE_ERROR_GPU;
    case ErrorKind::internal: return MOETUNE_ERROR_INTERNAL;
  }
  return MOETUNE_ERROR_INTERNAL;
}

moetune_status failure(moetune_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

// Runs `body`; an exception becomes its status and message.
template <class Body>
moetune_status guarded(const char* function, Body&& body) {
  try {
    body();
    return MOETUNE_OK;
  } catch (const RuntimeError& e) {
    return failure(status_of(e.kind()), fmt::format("{}: {}", function, e.what()));
  } catch (const moetune::GpuError& e) {
    return failure(MOETUNE_ERROR_GPU, fmt::format("{}: {}", function, e.what()));
  } catch (const std::bad_alloc&) {
    return failure(MOETUNE_ERROR_INTERNAL, fmt::format("{}: out of host memory", function));
  } catch (const std::exception& e) {
    return failure(MOETUNE_ERROR_INTERNAL, fmt::format("{}: {}", function, e.what()));
  } catch (...) {
    return failure(MOETUNE_ERROR_INTERNAL, fmt::format("{}: unknown exception", function));
  }
}

void require(const void* pointer, const char* name) {
  if (pointer == nullptr) {
    throw RuntimeError(ErrorKind::null_pointer, fmt::format("{} is NULL", name));
  }
}

moetune::moe::DtypePath dtype_path(moetune_dtype dtype) {
  switch (dtype) {
    case MOETUNE_DTYPE_A16W4: return moetune::moe::DtypePath::a16w4;
    case MOETUNE_DTYPE_A8W4: return moetune::moe::DtypePath::a8w4;
    case MOETUNE_DTYPE_BF16: return moetune::moe::DtypePath::bf16;
  }
  throw RuntimeError(ErrorKind::dtype,
                     fmt::format("dtype {} is none of MOETUNE_DTYPE_A16W4 (0), _A8W4 (1), "
                                 "_BF16 (2)",
                                 static_cast<int>(dtype)));
}

}  // namespace

extern "C" {

int moetune_abi_version(void) { return MOETUNE_ABI_VERSION; }

const char* moetune_last_error(void) { return last_error.c_str(); }

const char* moetune_status_name(moetune_status status) {
  switch (status) {
    case MOETUNE_OK: return "MOETUNE_OK";
    case MOETUNE_ERROR_NULL_POINTER: return "MOETUNE_ERROR_NULL_POINTER";
    case MOETUNE_ERROR_INVALID_ARGUMENT: return "MOETUNE_ERROR_INVALID_ARGUMENT";
    case MOETUNE_ERROR_DTYPE: return "MOETUNE_ERROR_DTYPE";
    case MOETUNE_ERROR_SHAPE: return "MOETUNE_ERROR_SHAPE";
    case MOETUNE_ERROR_DEVICE: return "MOETUNE_ERROR_DEVICE";
    case MOETUNE_ERROR_TABLE: return "MOETUNE_ERROR_TABLE";
    case MOETUNE_ERROR_COMPILE: return "MOETUNE_ERROR_COMPILE";
    case MOETUNE_ERROR_WORKSPACE: return "MOETUNE_ERROR_WORKSPACE";
    case MOETUNE_ERROR_GPU: return "MOETUNE_ERROR_GPU";
    case MOETUNE_ERROR_INTERNAL: return "MOETUNE_ERROR_INTERNAL";
  }
  return "MOETUNE_ERROR_UNKNOWN";
}

moetune_status moetune_context_create(int device_ordinal, const char* cache_dir,
                                      moetune_context** out) {
  return guarded("moetune_context_create", [&] {
    require(out, "out");
    *out = nullptr;
    auto context = std::make_unique<moetune_context>();
    context->impl = std::make_unique<moetune::runtime::RuntimeContext>(
        device_ordinal, cache_dir == nullptr ? std::filesystem::path{} : cache_dir);
    *out = context.release();
  });
}

void moetune_context_destroy(moetune_context* context) { delete context; }

moetune_status moetune_context_make_current(const moetune_context* context) {
  return guarded("moetune_context_make_current", [&] {
    require(context, "context");
    context->impl->device().make_current();
  });
}

moetune_status moetune_context_device(const moetune_context* context, const char** arch,
                                      int* compute_units) {
  return guarded("moetune_context_device", [&] {
    require(context, "context");
    if (arch != nullptr) *arch = context->impl->identity().arch.c_str();
    if (compute_units != nullptr) *compute_units = context->impl->identity().compute_units;
  });
}

moetune_status moetune_context_load_table(moetune_context* context, const char* path) {
  return guarded("moetune_context_load_table", [&] {
    require(context, "context");
    require(path, "path");
    context->impl->load_table(path);
  });
}

moetune_status moetune_layer_prepare(moetune_context* context, const moetune_layer_desc* desc,
                                     const moetune_layer_weights* weights, moetune_layer** out) {
  return guarded("moetune_layer_prepare", [&] {
    require(out, "out");
    *out = nullptr;
    require(context, "context");
    require(desc, "desc");
    require(weights, "weights");
    moetune::runtime::LayerSpec spec;
    spec.shape.hidden = desc->hidden;
    spec.shape.inter = desc->inter;
    spec.shape.experts = desc->experts;
    spec.shape.topk = desc->topk;
    spec.shape.dtype = dtype_path(desc->dtype);
    spec.shape.doweight_stage1 = desc->doweight_stage1 != 0;
    spec.max_tokens = desc->max_tokens;
    spec.tag = desc->tag == nullptr ? "" : desc->tag;
    moetune::runtime::LayerWeights w{weights->w1, weights->w1_scales, weights->w2,
                                     weights->w2_scales};
    auto layer = std::make_unique<moetune_layer>();
    layer->impl = context->impl->prepare(spec, w);
    layer->device = &context->impl->device();
    *out = layer.release();
  });
}

void moetune_layer_destroy(moetune_layer* layer) { delete layer; }

const char* moetune_layer_report(const moetune_layer* layer) {
  return layer == nullptr ? "" : layer->impl->report_json().c_str();
}

moetune_status moetune_workspace_size(const moetune_layer* layer, int64_t tokens, size_t* bytes) {
  return guarded("moetune_workspace_size", [&] {
    require(layer, "layer");
    require(bytes, "bytes");
    *bytes = layer->impl->workspace_bytes(tokens);
  });
}

moetune_status moetune_layer_selection(const moetune_layer* layer, int64_t tokens,
                                       int64_t* bucket_tokens, const char** kernel_name1,
                                       const char** kernel_name2, int* from_row) {
  return guarded("moetune_layer_selection", [&] {
    require(layer, "layer");
    auto const& b = layer->impl->bucket(tokens);
    if (bucket_tokens != nullptr) *bucket_tokens = b.choice.tokens;
    if (kernel_name1 != nullptr) *kernel_name1 = b.stage1_name.c_str();
    if (kernel_name2 != nullptr) *kernel_name2 = b.stage2_name.c_str();
    if (from_row != nullptr) {
      *from_row = b.choice.source == moetune::runtime::ChoiceSource::tuned_row ? 1 : 0;
    }
  });
}

moetune_status moetune_forward(const moetune_layer* layer, const moetune_forward_args* args) {
  return guarded("moetune_forward", [&] {
    require(layer, "layer");
    require(args, "args");
    layer->impl->forward(*args);
  });
}

moetune_status moetune_forward_plan_create(const moetune_layer* layer,
                                           const moetune_forward_args* args,
                                           moetune_forward_plan** out) {
  return guarded("moetune_forward_plan_create", [&] {
    require(out, "out");
    *out = nullptr;
    require(layer, "layer");
    require(args, "args");
    auto plan = std::make_unique<moetune_forward_plan>();
    plan->impl = std::make_unique<moetune::runtime::ForwardPlan>(*layer->impl, *layer->device, *args);
    *out = plan.release();
  });
}

moetune_status moetune_forward_plan_launch(const moetune_forward_plan* plan, void* stream) {
  return guarded("moetune_forward_plan_launch", [&] {
    require(plan, "plan");
    plan->impl->launch(stream);
  });
}

void moetune_forward_plan_destroy(moetune_forward_plan* plan) { delete plan; }

}  // extern "C"
