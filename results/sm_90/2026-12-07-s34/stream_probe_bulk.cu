// Session 34, for the next GPU session (not run: no device machine came). Session 33 ran
// ../2026-12-06-s32/stream_probe.cu on an H200: the draft M = 8 stage one's 240 CTAs, copying
// their weights by per-thread 16-byte cp.async and doing nothing else, stream 2.8-3.3 TB/s,
// and a spin per k-tile standing in for the decode takes them to 2.2-2.9. docs/performance.md
// item 1 names the form that might stream more with fewer instructions: one bulk copy
// (cp.async.bulk, the TMA engine) per k-tile for all of a CTA's weights, completing on an
// mbarrier, so no thread issues 64 copies per k-tile and the ring's depth is bytes the engine
// keeps in flight. This probe times that form on the same bytes (CTA-major, one contiguous 16 KB
// per k-tile), rings of 3 to 5, with the same spins, on the same grid (z = 1) and with each
// column tile's k-tiles split over two CTAs (z = 2: 480 CTAs, the split over K that
// ../2026-12-06-s33/unlanded_split_k_global.patch makes possible without a cluster).
// Compare its lines with stream_probe.cu's "CTA-major 16 KB" lines of the same run.
//
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 -o stream_probe_bulk stream_probe_bulk.cu
// && ./stream_probe_bulk   (one line per split, spin and ring; about 10 s).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

constexpr int kThreads = 256;          // 8 warps, as the default stage one
constexpr int kTileBytes = 16384;      // 128 weight rows x 256 K x 4 bits
constexpr int kTiles = 20;             // K = 5120 / 256
constexpr int kColumnTiles = 10;       // I = 640 / block_n 64
constexpr int kExperts = 24;           // the draft's M = 8 touches ~22-24 experts
constexpr long long kExpertBytes = 2LL * 640 * 5120 / 2;  // w1 of one expert: 3.3 MB

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
// One arrival that also announces the bytes the bulk copy will complete on this barrier.
__device__ __forceinline__ void arrive_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void wait_phase(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done bra wait_%=;\n}"
      ::"r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk_copy(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

// Grid (column tiles, experts, splits): CTA (tile, expert, z) streams k-tiles z * per_cta ..
// (z + 1) * per_cta - 1 of its column tile, Stages - 1 of them in flight, thread 0 issuing.
template <int Stages>
__global__ void __launch_bounds__(kThreads) stream_bulk(const unsigned char* __restrict__ w, int per_cta, int spin_ns,
                                                         unsigned* sink) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long full[Stages];
  int const tile = blockIdx.x, expert = blockIdx.y, first = blockIdx.z * per_cta;
  const unsigned char* const src = w + ((static_cast<long long>(expert) * kColumnTiles + tile) * kTiles) * kTileBytes;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) barrier_init(smem_addr(&full[s]));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the inits, seen by the copy engine
  }
  __syncthreads();
  auto issue = [&](int i) {  // k-tile i of this CTA into slot i % Stages
    unsigned const bar = smem_addr(&full[i % Stages]);
    arrive_expect(bar, kTileBytes);
    bulk_copy(smem_addr(ring + (i % Stages) * kTileBytes), src + static_cast<long long>(first + i) * kTileBytes,
              kTileBytes, bar);
  };
  if (threadIdx.x == 0)
    for (int i = 0; i < Stages - 1 && i < per_cta; ++i) issue(i);
  unsigned acc = 0;
  for (int i = 0; i < per_cta; ++i) {
    wait_phase(smem_addr(&full[i % Stages]), (i / Stages) & 1);
    acc += reinterpret_cast<const unsigned*>(ring + (i % Stages) * kTileBytes)[threadIdx.x];
    if (spin_ns > 0) {  // the decode and wgmmas of a k-tile, as time (~2 cycles a ns)
      long long const t0 = clock64();
      while (clock64() - t0 < spin_ns * 2LL) {
      }
    }
    __syncthreads();  // every thread is done with slot (i - 1) % Stages, which the next copy fills
    if (threadIdx.x == 0 && i + Stages - 1 < per_cta) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the reads above before the copy's writes
      issue(i + Stages - 1);
    }
  }
  if (acc == 0x12345678u) *sink = acc;  // keeps the reads
}

// Median of 20 timed launches (one untimed first), the weights alternating between two copies
// each larger than L2 (79 MB against 50-60 MB), so every read comes from DRAM: session 32's
// method, so its lines and these compare.
template <class Launch>
float median_launch_ms(Launch&& launch) {
  cudaEvent_t ev[2];
  for (cudaEvent_t& e : ev) cudaEventCreate(&e);
  std::vector<float> ms(21);
  for (int rep = 0; rep < 21; ++rep) {
    cudaEventRecord(ev[0]);
    launch(rep % 2);
    cudaEventRecord(ev[1]);
    cudaEventSynchronize(ev[1]);
    cudaEventElapsedTime(&ms[rep], ev[0], ev[1]);
  }
  for (cudaEvent_t e : ev) cudaEventDestroy(e);
  ms.erase(ms.begin());
  std::nth_element(ms.begin(), ms.begin() + 10, ms.end());
  return ms[10];
}

template <int Stages>
float time_bulk(unsigned char* const (&copies)[2], int splits, int spin_ns, unsigned* sink) {
  auto const smem = Stages * kTileBytes;
  cudaFuncSetAttribute(stream_bulk<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  return median_launch_ms([&](int which) {
    stream_bulk<Stages><<<dim3(kColumnTiles, kExperts, splits), kThreads, smem>>>(copies[which], kTiles / splits,
                                                                                   spin_ns, sink);
  });
}

}  // namespace

int main() {
  auto const bytes = static_cast<size_t>(kExperts) * kExpertBytes;
  unsigned char* copies[2] = {nullptr, nullptr};
  unsigned* sink = nullptr;
  bool ok = cudaMalloc(&sink, sizeof(unsigned)) == cudaSuccess;
  for (int c = 0; c < 2 && ok; ++c) ok = cudaMalloc(&copies[c], bytes) == cudaSuccess && cudaMemset(copies[c], c + 1, bytes) == cudaSuccess;
  if (!ok) {
    std::fprintf(stderr, "stream_probe_bulk: no device memory for two %zu-byte copies\n", bytes);
    return 2;
  }
  double const mb = 1e-6 * kColumnTiles * kExperts * kTiles * kTileBytes;
  std::printf("stream_probe_bulk: %d column tiles of 8 warps, %.1f MB a launch, median of 20 launches\n",
              kColumnTiles * kExperts, mb);
  for (int splits : {1, 2}) {
    for (int spin : {0, 600, 1000}) {
      float const t[3] = {time_bulk<3>(copies, splits, spin, sink), time_bulk<4>(copies, splits, spin, sink),
                          time_bulk<5>(copies, splits, spin, sink)};
      std::printf("bulk 16 KB per k-tile, %3d CTAs, spin %4d ns:", kColumnTiles * kExperts * splits, spin);
      for (int r = 0; r < 3; ++r) std::printf("  ring %d %7.2f us %5.2f TB/s", r + 3, t[r] * 1e3, mb / (t[r] * 1e3));
      std::printf("\n");
    }
  }
  if (cudaError_t const e = cudaDeviceSynchronize(); e != cudaSuccess) {
    std::fprintf(stderr, "stream_probe_bulk: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
