/* moe-tune runtime: run a two-stage fused MoE layer with the rows of moe-tune's tuned tables.
 *
 * An engine creates one context per GPU, loads its tuned tables (AITER's fMoE CSV schema),
 * prepares each MoE layer once (rows resolved, kernels compiled or read from the code cache,
 * weights put in the layouts the kernels read) and then calls moetune_forward() per layer and
 * step on its own stream. moetune_forward() allocates nothing, never synchronises the host and
 * never compiles, so it can be captured into a CUDA/HIP graph. docs/runtime.md has the rules.
 *
 * Every function returns a moetune_status; on failure moetune_last_error() holds the message
 * (per thread, until the next failing call on that thread). Buffers are device pointers of the
 * context's GPU in the layouts of docs/kernel-contract.md.
 *
 * Threads: a context may be used from several threads. Preparing layers is serialised inside
 * the context; moetune_forward() on a prepared layer is safe from any number of threads at
 * once (each call with its own workspace). The calling thread must have the context's GPU
 * current (torch does this for a tensor's device; otherwise call moetune_context_make_current
 * once per thread).
 */
#ifndef MOETUNE_MOETUNE_H
#define MOETUNE_MOETUNE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MOETUNE_API __attribute__((visibility("default")))

/* Bumped whenever a declaration below changes incompatibly (the Python package checks it). */
#define MOETUNE_ABI_VERSION 1

typedef enum moetune_status {
  MOETUNE_OK = 0,
  MOETUNE_ERROR_NULL_POINTER = 1,     /* a required pointer argument is NULL */
  MOETUNE_ERROR_INVALID_ARGUMENT = 2, /* an out-of-range value (tokens, sizes, enums) */
  MOETUNE_ERROR_DTYPE = 3,            /* a data path the call cannot serve */
  MOETUNE_ERROR_SHAPE = 4,            /* a layer shape the kernels cannot run */
  MOETUNE_ERROR_DEVICE = 5,           /* no usable GPU, an unknown arch, a foreign layer */
  MOETUNE_ERROR_TABLE = 6,            /* a tuned table that cannot be read or clashes */
  MOETUNE_ERROR_COMPILE = 7,          /* the default configuration itself did not compile */
  MOETUNE_ERROR_WORKSPACE = 8,        /* workspace missing, too small or misaligned */
  MOETUNE_ERROR_GPU = 9,              /* a GPU runtime call failed (the message names it) */
  MOETUNE_ERROR_INTERNAL = 10         /* anything else; the message says what */
} moetune_status;

/* The data paths (docs/kernel-contract.md). */
typedef enum moetune_dtype {
  MOETUNE_DTYPE_A16W4 = 0, /* bf16 activations, MXFP4 weights (e2m1 codes + e8m0 per 1x32) */
  MOETUNE_DTYPE_A8W4 = 1,  /* MXFP8 activations (e4m3 codes + e8m0 per 1x32), MXFP4 weights */
  MOETUNE_DTYPE_BF16 = 2   /* bf16 activations and weights */
} moetune_dtype;

/* Workspace pointers must be aligned to this many bytes (any torch allocation is). */
#define MOETUNE_WORKSPACE_ALIGNMENT 256

typedef struct moetune_context moetune_context;
typedef struct moetune_layer moetune_layer;

/* One MoE layer's geometry. Gate and up rows of w1 are interleaved (AITER's fMoE layout),
 * activation SiLU, output bf16. */
typedef struct moetune_layer_desc {
  int64_t hidden;          /* model_dim (H) */
  int64_t inter;           /* inter_dim (I), as the weights are stored (padded) */
  int32_t experts;         /* E: experts held by this GPU (the table's `expert`) */
  int32_t topk;
  moetune_dtype dtype;
  int32_t doweight_stage1; /* 1: the routing weight is applied in stage one */
  int64_t max_tokens;      /* the largest M forward will be called with */
  const char* tag;         /* the table's _tag column to match; NULL or "" for none */
} moetune_layer_desc;

/* The layer's weights, device pointers in AITER's natural layout, owned by the caller and
 * kept alive as long as the layer. MXFP4 paths: w1 codes [E][2I][H/2], w1_scales [E][2I][H/32],
 * w2 codes [E][H][I/2], w2_scales [E][H][I/32] (e8m0, not shuffled). bf16: w1 [E][2I][H],
 * w2 [E][H][I], scales NULL. Kernels that read the repacked MXFP4 layout (name token `_rp`)
 * get a copy the layer owns, made once in moetune_layer_prepare. */
typedef struct moetune_layer_weights {
  const void* w1;
  const void* w1_scales;
  const void* w2;
  const void* w2_scales;
} moetune_layer_weights;

/* One call of the layer. `tokens` may be anything from 0 (nothing is launched) to the
 * layer's max_tokens. */
typedef struct moetune_forward_args {
  const void* hidden_states;  /* [M][H]: bf16 (a16w4, bf16) or e4m3 codes (a8w4) */
  const void* hidden_scales;  /* a8w4: e8m0 [M][H/32]; NULL otherwise */
  const int32_t* topk_ids;    /* [M][topk], distinct experts per token, each in [0, E) */
  const float* topk_weights;  /* [M][topk] */
  void* output;               /* [M][H] bf16, written in full */
  int64_t tokens;             /* M */
  void* workspace;            /* moetune_workspace_size(layer, M) bytes, aligned */
  size_t workspace_bytes;
  void* stream;               /* CUstream / hipStream_t; NULL = the legacy default stream */
} moetune_forward_args;

MOETUNE_API int moetune_abi_version(void);
/* The message of the last failing call on this thread ("" if none). Valid until the next
 * moetune call on this thread. */
MOETUNE_API const char* moetune_last_error(void);
MOETUNE_API const char* moetune_status_name(moetune_status status);

/* Opens GPU `device_ordinal` (CUDA: its primary context, the one torch uses). `cache_dir`:
 * the compiled-kernel cache, NULL for moe-tune's default ($XDG_CACHE_HOME/moe-tune). */
MOETUNE_API moetune_status moetune_context_create(int device_ordinal, const char* cache_dir,
                                                  moetune_context** out);
/* Destroys the context; every layer prepared from it must be destroyed first. NULL is a
 * no-op. */
MOETUNE_API void moetune_context_destroy(moetune_context* context);
/* Makes the context's GPU current on the calling thread. */
MOETUNE_API moetune_status moetune_context_make_current(const moetune_context* context);
/* The device as rows are matched against it: arch ("sm_90", "gfx942", ...) and CU/SM count. */
MOETUNE_API moetune_status moetune_context_device(const moetune_context* context,
                                                  const char** arch, int* compute_units);
/* Reads a tuned fMoE table with moe-tune's strict reader. Several tables may be loaded; a key
 * (gfx, cu_num, the key columns, _tag) defined by two of them is refused. Layers prepared
 * before the call keep the rows they resolved. */
MOETUNE_API moetune_status moetune_context_load_table(moetune_context* context, const char* path);

/* Resolves every row for the layer (one per power of two up to max_tokens, as AITER looks
 * them up), compiles or loads from the cache each kernel pair (a row whose kernels do not
 * exist, do not fit the layer or do not compile is replaced by the default configuration,
 * and the report says why), prepares the repacked weights where a kernel needs them, and
 * returns the layer. May take seconds to minutes (compiles, a weight download); never call it
 * inside a graph capture. */
MOETUNE_API moetune_status moetune_layer_prepare(moetune_context* context,
                                                 const moetune_layer_desc* desc,
                                                 const moetune_layer_weights* weights,
                                                 moetune_layer** out);
MOETUNE_API void moetune_layer_destroy(moetune_layer* layer);
/* What prepare did, as JSON: per bucket the row used (file:line) or the default and why, the
 * kernel names, whether each compiled or came from the cache, the repacked bytes. The string
 * lives as long as the layer. */
MOETUNE_API const char* moetune_layer_report(const moetune_layer* layer);
/* Workspace bytes forward needs for `tokens` tokens (the most for any M up to it). */
MOETUNE_API moetune_status moetune_workspace_size(const moetune_layer* layer, int64_t tokens,
                                                  size_t* bytes);
/* Which configuration forward uses for `tokens` tokens: the bucket's token count (M rounded
 * up to a power of two), the stage kernel names (pointers valid as long as the layer) and
 * whether a tuned row supplied them (1) or the default did (0). */
MOETUNE_API moetune_status moetune_layer_selection(const moetune_layer* layer, int64_t tokens,
                                                   int64_t* bucket_tokens,
                                                   const char** kernel_name1,
                                                   const char** kernel_name2, int* from_row);

/* Enqueues sort, stage one and stage two on args->stream. */
MOETUNE_API moetune_status moetune_forward(const moetune_layer* layer,
                                           const moetune_forward_args* args);

/* A planned forward: for an engine that runs a layer again and again with the same buffers
 * (the same pointers and M) without capturing its step into a graph itself. Create captures
 * the layer's launches for `args` (checked as moetune_forward checks them; args->stream is not
 * kept) into a graph and instantiates it: it allocates and must not be called inside a graph
 * capture. Each launch is then one graph launch on `stream` (host ~1.2 us on the H200 against
 * ~11 us for moetune_forward's four kernel launches); into a stream being captured it
 * enqueues moetune_forward's launches instead (a graph cannot be launched into a capture).
 * Launches of one plan run one after another. The layer and the buffers must outlive the
 * plan. docs/runtime.md has the rules. */
typedef struct moetune_forward_plan moetune_forward_plan;
MOETUNE_API moetune_status moetune_forward_plan_create(const moetune_layer* layer,
                                                       const moetune_forward_args* args,
                                                       moetune_forward_plan** out);
MOETUNE_API moetune_status moetune_forward_plan_launch(const moetune_forward_plan* plan,
                                                       void* stream);
/* NULL is a no-op. */
MOETUNE_API void moetune_forward_plan_destroy(moetune_forward_plan* plan);

#ifdef __cplusplus
}
#endif

#endif /* MOETUNE_MOETUNE_H */
