// Session 40 probe (not part of the product): what the backbone's M = 1 point could cost if its
// stages were plain streams of their weights, to decide whether a token-major GEMV form (no
// sort, no shared-memory ring, no barriers, every load of a lane in flight at once) is worth
// building. Three measurements, each a CUDA graph of 16 launches replayed 11 times, median:
//   stream  S1B U T D: S1B bytes (stage one's MXFP4 weights and scales for 6 experts, or stage
//           two's) read by CTAs of T threads, each lane U independent 16-byte loads issued before
//           any is used, then D dependent opaque ALU instructions per 32-bit word standing in for
//           the decode (0 = copy only; 13 = the repacked decode's count per 8 weights + 1 FMA),
//           the weights rotated through copies >= 4x L2 so every read comes from HBM;
//   chain   N launches of an empty kernel back to back, with and without programmatic
//           dependent launch (PDL): the floor of a chain of N dependent launches.
// Build: nvcc -O3 -arch=sm_90a -o m1_stream_probe m1_stream_probe.cu
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); std::exit(1); } } while (0)

template <int U, int D>
__global__ void __launch_bounds__(256) stream(const uint4* __restrict__ w, size_t chunks, unsigned* sink) {
  size_t const base = (static_cast<size_t>(blockIdx.x) * blockDim.x) * U + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    size_t const i = base + static_cast<size_t>(u) * blockDim.x;
    v[u] = i < chunks ? __ldg(w + i) : make_uint4(0, 0, 0, 0);
  }
  unsigned acc = threadIdx.x;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    unsigned const words[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      unsigned x = words[j];
#pragma unroll
      for (int d = 0; d < D; ++d) asm("lop3.b32 %0, %0, %1, 0x5a, 0x96;" : "+r"(x) : "r"(acc));
      acc ^= x;
    }
  }
  if (acc == 0x12345678u) sink[0] = acc;  // keeps the loads; (almost) never true
}

__global__ void empty_kernel(unsigned* sink) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  if (threadIdx.x == 1000) sink[0] = 1;
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

// Median over 11 replays of a graph of 16 repetitions that `capture` queues on its stream, per
// repetition in us.
template <class Capture>
static float graph_us(Capture capture) {
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int rep = 0; rep < 16; ++rep) capture(s, rep);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> per;
  for (int r = 0; r < 11; ++r) {
    CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); per.push_back(ms * 1000.f / 16);
  }
  CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g)); CK(cudaStreamDestroy(s));
  return median(per);
}

template <int U, int D>
static void run_stream(const char* label, size_t bytes, const uint8_t* pool, size_t copies, unsigned* sink) {
  int const T = 256;
  size_t const chunks = bytes / 16;
  unsigned const grid = static_cast<unsigned>((chunks + static_cast<size_t>(T) * U - 1) / (static_cast<size_t>(T) * U));
  float const us = graph_us([&](cudaStream_t s, int l) {
    stream<U, D><<<grid, T, 0, s>>>(reinterpret_cast<const uint4*>(pool + (l % copies) * bytes), chunks, sink);
  });
  std::printf("stream %-10s bytes %9zu U %2d D %2d grid %5u x %d: %7.2f us  %5.2f TB/s\n", label, bytes, U, D, grid, T, us,
              bytes / (us * 1e-6) / 1e12);
}

static void run_chain(int n, bool pdl, unsigned* sink) {
  float const us = graph_us([&](cudaStream_t s, int) {
    for (int i = 0; i < n; ++i) {
      cudaLaunchConfig_t c = {};
      c.gridDim = dim3(132); c.blockDim = dim3(128); c.stream = s;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      at[0].val.programmaticStreamSerializationAllowed = 1;
      c.attrs = at; c.numAttrs = pdl ? 1 : 0;
      CK(cudaLaunchKernelEx(&c, empty_kernel, sink));
    }
  });
  std::printf("chain  %d launches %-6s: %6.2f us per chain\n", n, pdl ? "pdl" : "plain", us);
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  // Backbone E384 top6 H5120 I640, M = 1: six experts' weights (MXFP4 bytes + one scale byte per 32).
  size_t const s1 = 6ull * 2 * 640 * 5120 / 2 + 6ull * 2 * 640 * 5120 / 32;  // 20.9 MB
  size_t const s2 = 6ull * 5120 * 640 / 2 + 6ull * 5120 * 640 / 32;          // 10.4 MB
  size_t const pool_bytes = 5ull * p.l2CacheSize + s1;  // every rotation > 4x L2
  uint8_t* pool; CK(cudaMalloc(&pool, pool_bytes));
  CK(cudaMemset(pool, 0x5b, pool_bytes));
  unsigned* sink; CK(cudaMalloc(&sink, 64));
  size_t const c1 = pool_bytes / s1, copies = pool_bytes / s2;
  for (int rep = 0; rep < 2; ++rep) {
    run_stream<4, 0>("stage1", s1, pool, c1, sink);
    run_stream<8, 0>("stage1", s1, pool, c1, sink);
    run_stream<16, 0>("stage1", s1, pool, c1, sink);
    run_stream<4, 13>("stage1", s1, pool, c1, sink);
    run_stream<8, 13>("stage1", s1, pool, c1, sink);
    run_stream<16, 13>("stage1", s1, pool, c1, sink);
    run_stream<4, 0>("stage2", s2, pool, copies, sink);
    run_stream<8, 0>("stage2", s2, pool, copies, sink);
    run_stream<4, 13>("stage2", s2, pool, copies, sink);
    run_stream<8, 13>("stage2", s2, pool, copies, sink);
    run_stream<4, 0>("hot_stage1", s1, pool, 1, sink);  // one copy: L2-resident after the first launch
    run_stream<8, 13>("hot_stage1", s1, pool, 1, sink);
    for (int n : {1, 2, 3, 4}) { run_chain(n, false, sink); run_chain(n, true, sink); }
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
