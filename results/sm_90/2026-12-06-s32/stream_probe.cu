// Session 32, for the next GPU session (docs/performance.md item 8; not run yet): does the DRAM
// serve the draft's M = 8 stage one's weight reads below its copy rate because of their
// addresses? The default stage one (t8x64x256_w8 ... k16_tm, 240 CTAs of 8 warps) reads, per
// 256-K k-tile, eight 2-KB pieces 40 KB apart (one per 16-row fragment of the wgmma tile layout,
// autotune/moe/mxfp4_wgmma_tiles.hpp) through a cp.async ring of 3 (one k-tile ahead) with a CTA
// barrier per k-tile. This kernel does exactly those copies and nothing else, for the same grid,
// and for the same bytes laid out CTA-major (each CTA's k-tile one contiguous 16 KB), with rings
// of 3 to 5 and an optional spin per k-tile standing in for the decode. Its rate against the copy
// rate (~3.0 TB/s on an H100) says whether a CTA-major weight layout could lift stage one at
// small M, or whether the 66 % of peak that Nsight Compute measured is the loop's own pace.
//
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 -o stream_probe stream_probe.cu &&
// ./stream_probe   (prints one line per pattern, ring and spin; about 10 s).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kThreads = 256;        // 8 warps, as the default stage one
constexpr int kTileBytes = 16384;    // 128 weight rows x 256 K x 4 bits
constexpr int kPieces = 8;           // 16-row fragments per CTA (block_n 64: 64 gate + 64 up rows)
constexpr int kPieceBytes = 2048;    // one fragment's 256 K: four 64-K steps of 512 B
constexpr int kTiles = 20;           // K = 5120 / 256
constexpr int kColumnTiles = 10;     // I = 640 / block_n 64
constexpr int kExperts = 24;         // the draft's M = 8 touches ~22-24 experts (24 slots)
constexpr long long kFragmentBytes = 512LL * (5120 / 64);  // one fragment's whole K: 40 KB
constexpr long long kExpertBytes = 2LL * 640 * 5120 / 2;   // w1 of one expert: 3.3 MB

__device__ __forceinline__ void copy16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait_pending() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Byte offset of 16-byte chunk c (0..1023) of k-tile kt of CTA (tile, expert).
__device__ __forceinline__ long long chunk_offset(bool cta_major, int tile, int expert, int kt, int c) {
  if (cta_major) {
    // [expert][column tile][k-tile][16 KB]
    return ((static_cast<long long>(expert) * kColumnTiles + tile) * kTiles + kt) * kTileBytes + c * 16LL;
  }
  // The wgmma tile layout: [expert][fragment][K/64][512 B]; piece p = fragment 8 * tile + p.
  int const p = c / (kPieceBytes / 16), in_piece = c % (kPieceBytes / 16);
  long long const fragment = static_cast<long long>(tile) * kPieces + p;
  return expert * kExpertBytes + fragment * kFragmentBytes + kt * static_cast<long long>(kPieceBytes) + in_piece * 16LL;
}

template <int Stages>
__global__ void __launch_bounds__(kThreads) stream_tiles(const unsigned char* __restrict__ w, bool cta_major,
                                                          int spin_ns, unsigned* sink) {
  extern __shared__ __align__(128) unsigned char ring[];
  int const tile = blockIdx.x, expert = blockIdx.y;  // tile-major, as the default's grid
  unsigned const base = static_cast<unsigned>(__cvta_generic_to_shared(ring));
  auto issue = [&](int kt) {
    unsigned const slot = base + (kt % Stages) * kTileBytes;
    for (int c = threadIdx.x; c < kTileBytes / 16; c += kThreads)
      copy16(slot + c * 16, w + chunk_offset(cta_major, tile, expert, kt, c));
  };
  for (int t = 0; t < Stages - 2; ++t) {
    if (t < kTiles) issue(t);
    commit();
  }
  unsigned acc = 0;
  for (int kt = 0; kt < kTiles; ++kt) {
    wait_pending<Stages - 3>();  // k-tile kt landed (stages - 2 groups were in flight)
    __syncthreads();
    if (kt + Stages - 2 < kTiles) issue(kt + Stages - 2);
    commit();
    acc += reinterpret_cast<const unsigned*>(ring + (kt % Stages) * kTileBytes)[threadIdx.x];
    if (spin_ns > 0) {  // the decode and wgmmas of a k-tile, as time (~2 cycles a ns at 1.98 GHz)
      long long const t0 = clock64();
      while (clock64() - t0 < spin_ns * 2LL) {
      }
    }
  }
  if (acc == 0x12345678u) *sink = acc;  // keeps the reads
}

template <int Stages>
float time_pattern(const unsigned char* w0, const unsigned char* w1, bool cta_major, int spin_ns, unsigned* sink) {
  dim3 const grid(kColumnTiles, kExperts);
  size_t const smem = static_cast<size_t>(Stages) * kTileBytes;
  cudaFuncSetAttribute(stream_tiles<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int rep = 0; rep < 21; ++rep) {
    // Two copies, alternating, each larger than L2 (79 MB against 50 MB): every read from DRAM.
    const unsigned char* w = rep % 2 ? w1 : w0;
    cudaEventRecord(a);
    stream_tiles<Stages><<<grid, kThreads, smem>>>(w, cta_major, spin_ns, sink);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    if (rep > 0) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms[ms.size() / 2];
}

}  // namespace

int main() {
  size_t const bytes = static_cast<size_t>(kExperts) * kExpertBytes;
  unsigned char *w0 = nullptr, *w1 = nullptr;
  unsigned* sink = nullptr;
  if (cudaMalloc(&w0, bytes) != cudaSuccess || cudaMalloc(&w1, bytes) != cudaSuccess ||
      cudaMalloc(&sink, 4) != cudaSuccess) {
    std::fprintf(stderr, "stream_probe: cudaMalloc failed\n");
    return 2;
  }
  cudaMemset(w0, 1, bytes);
  cudaMemset(w1, 2, bytes);
  double const moved = static_cast<double>(kColumnTiles) * kExperts * kTiles * kTileBytes;
  std::printf("stream_probe: %d CTAs x %d threads, %.1f MB per launch, median of 20 launches\n",
              kColumnTiles * kExperts, kThreads, moved / 1e6);
  for (int spin : {0, 600, 1000}) {
    for (bool cta_major : {false, true}) {
      float const t3 = time_pattern<3>(w0, w1, cta_major, spin, sink);
      float const t4 = time_pattern<4>(w0, w1, cta_major, spin, sink);
      float const t5 = time_pattern<5>(w0, w1, cta_major, spin, sink);
      std::printf("%-24s spin %4d ns/k-tile: ring 3 %7.2f us %5.2f TB/s | ring 4 %7.2f us %5.2f TB/s | ring 5 %7.2f us %5.2f TB/s\n",
                  cta_major ? "CTA-major 16 KB" : "wgmma tiles 8 x 2 KB", spin, t3 * 1e3, moved / (t3 * 1e9),
                  t4 * 1e3, moved / (t4 * 1e9), t5 * 1e3, moved / (t5 * 1e9));
    }
  }
  cudaError_t const e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "stream_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
