// Session 40 probe (not part of the product), generalising m1_gemv_probe.cu (this folder, which
// measured the backbone at M = 1) to the three shapes of issue #13 and M = 1, 2, 4, 8: the MoE as two
// token-major register-GEMV launches, A16W4 (bf16 x, MXFP4 weights in the natural layout).
//   stage one: grid (I / 8 h columns, M * topk slots); CTA = 8 gate + 8 up weight rows (one
//     16-row mma.sync A tile) of one slot, its 8 warps splitting K = H in H / 8; each lane loads
//     its two rows' 16-byte pieces (32 K, one scale byte each) of all its 128-K steps straight
//     into registers (no shared-memory ring, no barrier in the loop), decodes a word of 8 codes
//     into four bf16x2 pairs (codes j and j+4 are 16 bits apart: one shift-and-mask per pair)
//     times 2^(s-1), and multiplies on the tensor cores (m16n8k16; the K order inside a step is
//     permuted alike in A and B); the warps' sums meet in shared memory once, SiLU(gate) * up is
//     rounded to bf16 h[slot][col];
//   stage two: grid (H / 16, M); CTA = 16 rows of y for one token, warps = topk slots x parts of
//     K (5-6 steps of 128 K each); the weights loaded before the wait on stage one (programmatic
//     dependent launch), h (through L2) after it; the slots' rows times their routing weights
//     summed in shared memory and rounded to bf16 y once: no sort, no fp32 accumulator to clear,
//     no rounding launch.
// Both in the natural layout and in the wgmma tile layout the product's decode-size kernels
// read (wg_stage1 / wg_stage2 below: no second weight copy, the wgmma word decode, B straight
// from the activation).
// Timed: each stage alone and the pair, CUDA graphs of 16 MoEs (16 different expert sets, so the
// weights come from HBM), median of 11 replays; checked against a CPU reference of the same data.
// Scale bytes 120..128 only (the fast decode's range; a product needs the exact path above 128,
// as the wgmma decode has).
// Build: nvcc -O3 -arch=sm_90a -o gemv_probe gemv_probe.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); std::exit(1); } } while (0)

constexpr int H = 5120, SETS = 16;  // every shape of issue #13 has H = 5120

__device__ __forceinline__ unsigned hash32(unsigned long long i) {
  unsigned long long z = i * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<unsigned>(z ^ (z >> 31));
}
__global__ void fill_codes(uint32_t* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = hash32(i * 7919ull + seed);
}
__global__ void fill_scales(uint8_t* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<uint8_t>(120 + hash32(i * 104729ull + seed) % 9);
}

// Codes j and j+4 of word w (j = 0..3) as a bf16x2 (low = code j) reading value * 2^-126,
// times the factor 2^(s-1) in both halves: exact (2 significant bits).
template <int J>
__device__ __forceinline__ uint32_t pair_of(uint32_t w, uint32_t factor) {
  uint32_t mag = J == 0 ? (w << 6) : J == 1 ? (w << 2) : J == 2 ? (w >> 2) : (w >> 6);
  uint32_t sgn = J == 0 ? (w << 12) : J == 1 ? (w << 8) : J == 2 ? (w << 4) : w;
  uint32_t p = (mag & 0x01c001c0u) | (sgn & 0x80008000u);
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(p), "r"(factor), "r"(0x80008000u));
  return d;
}
__device__ __forceinline__ uint32_t factor_of(uint32_t scale_byte) { return ((scale_byte + 126u) << 7) * 0x10001u; }

// Loads as volatile asm: kept in program order before the (volatile) mmas, so every weight
// load of a lane is in flight before the first is used (plain __ldg let ptxas sink them).
__device__ __forceinline__ uint4 ld_weights(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ uint32_t ld_scale(const uint8_t* p) {
  uint16_t v;
  asm volatile("ld.global.nc.u8 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void mma16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// One 128-K step of a 16-row tile: lane (g, t) holds rows g and g+8's codes K [32t, 32t+32) of
// the step (wg, wh) with their scales, and the activation's bf16 K [32t, 32t+32) as 16 words.
// mma q = (word i, half): positions 2t, 2t+1 are K 8i+2half and 8i+2half+4, positions 2t+8,
// 2t+9 are K 8i+2half+1 and 8i+2half+5 (the same for every row, and B takes them alike).
__device__ __forceinline__ void step_mma(float (&c)[4], uint4 wg, uint4 wh, uint32_t sg, uint32_t sh, const uint32_t (&xw)[16]) {
  uint32_t const fg = factor_of(sg), fh = factor_of(sh);
  uint32_t const g4[4] = {wg.x, wg.y, wg.z, wg.w}, h4[4] = {wh.x, wh.y, wh.z, wh.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint32_t const pg0 = pair_of<0>(g4[i], fg), pg1 = pair_of<1>(g4[i], fg), pg2 = pair_of<2>(g4[i], fg), pg3 = pair_of<3>(g4[i], fg);
    uint32_t const ph0 = pair_of<0>(h4[i], fh), ph1 = pair_of<1>(h4[i], fh), ph2 = pair_of<2>(h4[i], fh), ph3 = pair_of<3>(h4[i], fh);
    // x words 4i..4i+3 hold K (8i, 8i+1), (8i+2, 8i+3), (8i+4, 8i+5), (8i+6, 8i+7).
    uint32_t const x0 = xw[4 * i], x1 = xw[4 * i + 1], x2 = xw[4 * i + 2], x3 = xw[4 * i + 3];
    // half 0: pairs j = 0 (K 8i, 8i+4) and j = 1 (K 8i+1, 8i+5)
    mma16816(c, pg0, ph0, pg1, ph1, __byte_perm(x0, x2, 0x5410), __byte_perm(x0, x2, 0x7632));
    // half 1: pairs j = 2 (K 8i+2, 8i+6) and j = 3 (K 8i+3, 8i+7)
    mma16816(c, pg2, ph2, pg3, ph3, __byte_perm(x1, x3, 0x5410), __byte_perm(x1, x3, 0x7632));
  }
}

constexpr int S1_WARPS = 8, S1_KW = H / S1_WARPS, S1_STEPS = S1_KW / 128;  // 640 K, 5 steps per warp

// Stage one's end: the warps' gate and up sums (token column 0: rows g and g+8 of lanes t = 0)
// meet in shared memory; SiLU(gate) * up rounded to bf16 h (8 columns from hrow), after the wait
// on the MoE before (whose stage two has then read h).
__device__ __forceinline__ void stage1_finish(float (&red)[S1_WARPS][8][2], const float (&acc)[4], int warp, int g, int t,
                                              __nv_bfloat16* hrow) {
  if (t == 0) red[warp][g][0] = acc[0], red[warp][g][1] = acc[2];
  __syncthreads();
  if (threadIdx.x < 8) {
    float gate = 0.f, up = 0.f;
#pragma unroll
    for (int w = 0; w < S1_WARPS; ++w) gate += red[w][threadIdx.x][0], up += red[w][threadIdx.x][1];
    float const v = gate / (1.f + __expf(-gate)) * up;
    asm volatile("griddepcontrol.wait;" ::: "memory");
    hrow[threadIdx.x] = __float2bfloat16_rn(v);
  }
}

// Stage two's end: every warp's 16 rows times its slot's routing weight, summed over the warps
// in shared memory and rounded to bf16 y once (16 rows from yrow).
template <int Warps>
__device__ __forceinline__ void stage2_finish(float (&red)[Warps][16], const float (&acc)[4], float wt, int warp, int g, int t,
                                              __nv_bfloat16* yrow) {
  if (t == 0) red[warp][g] = acc[0] * wt, red[warp][g + 8] = acc[2] * wt;
  __syncthreads();
  if (threadIdx.x < 16) {
    float v = 0.f;
#pragma unroll
    for (int w = 0; w < Warps; ++w) v += red[w][threadIdx.x];
    yrow[threadIdx.x] = __float2bfloat16_rn(v);
  }
}

template <int I>
__global__ void __launch_bounds__(256) gemv_stage1(const uint8_t* __restrict__ w1, const uint8_t* __restrict__ s1,
                                                   const __nv_bfloat16* __restrict__ x, const int* __restrict__ ids,
                                                   __nv_bfloat16* __restrict__ h, int topk) {
  asm volatile("griddepcontrol.launch_dependents;");
  __shared__ float red[S1_WARPS][8][2];
  int const warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  int const slot = blockIdx.y, j0 = blockIdx.x * 8;
  int const e = ids[slot];  // an input: no wait needed to read it
  size_t const rg = size_t(e) * 2 * I + j0 + g, ru = size_t(e) * 2 * I + I + j0 + g;
  int const kb = warp * S1_KW + 32 * t;
  uint4 wg[S1_STEPS], wu[S1_STEPS];
  uint32_t sg[S1_STEPS], su[S1_STEPS];
#pragma unroll
  for (int c = 0; c < S1_STEPS; ++c) {
    int const k = kb + 128 * c;
    wg[c] = ld_weights(w1 + (rg * H + k) / 2);
    wu[c] = ld_weights(w1 + (ru * H + k) / 2);
    sg[c] = ld_scale(s1 + rg * (H / 32) + k / 32);
    su[c] = ld_scale(s1 + ru * (H / 32) + k / 32);
  }
  const __nv_bfloat16* const xt = x + size_t(slot / topk) * H;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int c = 0; c < S1_STEPS; ++c) {
    uint32_t xw[16];
    const uint4* xp = reinterpret_cast<const uint4*>(xt + kb + 128 * c);
#pragma unroll
    for (int q = 0; q < 4; ++q) { uint4 v = __ldg(xp + q); xw[4 * q] = v.x; xw[4 * q + 1] = v.y; xw[4 * q + 2] = v.z; xw[4 * q + 3] = v.w; }
    step_mma(acc, wg[c], wu[c], sg[c], su[c], xw);
  }
  stage1_finish(red, acc, warp, g, t, h + size_t(slot) * I + j0);
}

// Stage two: warps = TOPK slots x WPS parts of I, SPW 128-K steps each.
template <int I, int TOPK>
struct S2 {
  static constexpr int steps = I / 128, wps = (steps + 5) / 6, spw = steps / wps, warps = TOPK * wps;
  static_assert(steps % wps == 0, "whole steps per warp");
};

template <int I, int TOPK>
__global__ void __launch_bounds__(S2<I, TOPK>::warps * 32) gemv_stage2(const uint8_t* __restrict__ w2, const uint8_t* __restrict__ s2,
                                                        const __nv_bfloat16* __restrict__ h, const int* __restrict__ ids,
                                                        const float* __restrict__ wts, __nv_bfloat16* __restrict__ y) {
  using P = S2<I, TOPK>;
  asm volatile("griddepcontrol.launch_dependents;");
  __shared__ float red[P::warps][16];
  int const warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  int const token = blockIdx.y, slot = token * TOPK + warp / P::wps, k0 = (warp % P::wps) * P::spw * 128;
  int const n0 = blockIdx.x * 16, e = ids[slot];
  size_t const ra = size_t(e) * H + n0 + g, rb = ra + 8;
  uint4 wa[P::spw], wb[P::spw];
  uint32_t sa[P::spw], sb[P::spw];
#pragma unroll
  for (int c = 0; c < P::spw; ++c) {  // the weights before the wait: they depend on no kernel
    int const k = k0 + 128 * c + 32 * t;
    wa[c] = ld_weights(w2 + (ra * I + k) / 2);
    wb[c] = ld_weights(w2 + (rb * I + k) / 2);
    sa[c] = ld_scale(s2 + ra * (I / 32) + k / 32);
    sb[c] = ld_scale(s2 + rb * (I / 32) + k / 32);
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");  // stage one's h
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int c = 0; c < P::spw; ++c) {
    uint32_t xw[16];
    // h through L2 (ld.global.cg): stage one wrote it, and an L1 line of the MoE before is stale.
    const uint4* xp = reinterpret_cast<const uint4*>(h + size_t(slot) * I + k0 + 128 * c + 32 * t);
#pragma unroll
    for (int q = 0; q < 4; ++q) { uint4 v = __ldcg(xp + q); xw[4 * q] = v.x; xw[4 * q + 1] = v.y; xw[4 * q + 2] = v.z; xw[4 * q + 3] = v.w; }
    step_mma(acc, wa[c], wb[c], sa[c], sb[c], xw);
  }
  stage2_finish(red, acc, wts[slot], warp, g, t, y + size_t(token) * H + n0);
}

// ---- The same two launches reading the wgmma tile layout (autotune/moe/mxfp4_wgmma_tiles.hpp) ----
// Per expert, fragment f (16 rows: stage one gate rows of h columns 8f.. then their up rows,
// stage two rows 16f..) and 64-K block kb: lane (g, q)'s 16 bytes are four wgmma words, word s
// the k16 step K0 = 64 kb + 16 s, its pairs 0..3 (row g, K0+2q..), (row g+8, K0+2q..), (row g,
// K0+8+2q..), (row g+8, K0+8+2q..): mma.sync m16n8k16's a0..a3 as they are. Scales: 4 bytes per
// (fragment, kb, g): rows g, g+8 of 32-K block 2kb, then of block 2kb+1. B comes straight from
// the activation (K0+2q.., K0+8+2q..), no permutation.
__device__ __forceinline__ uint32_t wg_pattern(uint32_t w, int p) {  // kernels/mx_decode.cuh's e2m1x2_wgmma_pattern
  constexpr uint32_t mask = 0x81c081c0u;
  return p == 0 ? (w & mask)
       : p == 1 ? (__funnelshift_l(w, w, 10) & mask)
       : p == 2 ? ((w << 4) & mask)
                : ((w << 6) & 0x80c080c0u) | ((w >> 2) & 0x01000100u);
}
__device__ __forceinline__ uint32_t bmul(uint32_t a, uint32_t f) {
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(f), "r"(0x80008000u));
  return d;
}
__device__ __forceinline__ uint32_t ld_word(const void* p) {
  uint32_t v;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
// One 64-K block of a fragment: four k16 mmas; xa points at the activation's bf16 K0 = 64 kb.
template <bool Cg>
__device__ __forceinline__ void kb_mma(float (&c)[4], uint4 w, uint32_t sc, const __nv_bfloat16* xa, int q) {
  uint32_t const fg0 = factor_of(sc & 0xffu), fh0 = factor_of((sc >> 8) & 0xffu);
  uint32_t const fg1 = factor_of((sc >> 16) & 0xffu), fh1 = factor_of(sc >> 24);
  uint32_t const ws[4] = {w.x, w.y, w.z, w.w};
  const uint32_t* xw = reinterpret_cast<const uint32_t*>(xa) + q;  // bf16 pair (2q, 2q+1)
#pragma unroll
  for (int st = 0; st < 4; ++st) {
    uint32_t const fg = st < 2 ? fg0 : fg1, fh = st < 2 ? fh0 : fh1;
    uint32_t const b0 = Cg ? __ldcg(xw + 8 * st) : __ldg(xw + 8 * st), b1 = Cg ? __ldcg(xw + 8 * st + 4) : __ldg(xw + 8 * st + 4);
    mma16816(c, bmul(wg_pattern(ws[st], 0), fg), bmul(wg_pattern(ws[st], 1), fh), bmul(wg_pattern(ws[st], 2), fg),
             bmul(wg_pattern(ws[st], 3), fh), b0, b1);
  }
}

constexpr int S1_KB = H / 64 / S1_WARPS;  // 10 blocks of 64 K per warp

template <int I>
__global__ void __launch_bounds__(256) wg_stage1(const uint8_t* __restrict__ w1, const uint8_t* __restrict__ s1,
                                                 const __nv_bfloat16* __restrict__ x, const int* __restrict__ ids,
                                                 __nv_bfloat16* __restrict__ h, int topk) {
  asm volatile("griddepcontrol.launch_dependents;");
  __shared__ float red[S1_WARPS][8][2];
  int const warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  int const slot = blockIdx.y, f = blockIdx.x, e = ids[slot];
  size_t const frag = size_t(e) * (2 * I / 16) + f;  // the expert's fragments, then this one
  int const kb0 = warp * S1_KB;
  uint4 w[S1_KB];
  uint32_t sc[S1_KB];
#pragma unroll
  for (int c = 0; c < S1_KB; ++c) {
    size_t const blk = frag * (H / 64) + kb0 + c;
    w[c] = ld_weights(w1 + (blk * 32 + lane) * 16);
    sc[c] = ld_word(s1 + (blk * 8 + g) * 4);
  }
  const __nv_bfloat16* const xt = x + size_t(slot / topk) * H;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int c = 0; c < S1_KB; ++c) kb_mma<false>(acc, w[c], sc[c], xt + 64 * (kb0 + c), q);
  stage1_finish(red, acc, warp, g, q, h + size_t(slot) * I + 8 * f);
}

template <int I, int TOPK>
__global__ void __launch_bounds__(S2<I, TOPK>::warps * 32) wg_stage2(const uint8_t* __restrict__ w2, const uint8_t* __restrict__ s2,
                                                      const __nv_bfloat16* __restrict__ h, const int* __restrict__ ids,
                                                      const float* __restrict__ wts, __nv_bfloat16* __restrict__ y) {
  using P = S2<I, TOPK>;
  constexpr int kbs = 2 * P::spw;  // 64-K blocks per warp
  asm volatile("griddepcontrol.launch_dependents;");
  __shared__ float red[P::warps][16];
  int const warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  int const token = blockIdx.y, slot = token * TOPK + warp / P::wps, kb0 = (warp % P::wps) * kbs;
  int const f = blockIdx.x, e = ids[slot];
  size_t const frag = size_t(e) * (H / 16) + f;
  uint4 w[kbs];
  uint32_t sc[kbs];
#pragma unroll
  for (int c = 0; c < kbs; ++c) {  // the weights before the wait: they depend on no kernel
    size_t const blk = frag * (I / 64) + kb0 + c;
    w[c] = ld_weights(w2 + (blk * 32 + lane) * 16);
    sc[c] = ld_word(s2 + (blk * 8 + g) * 4);
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");  // stage one's h
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int c = 0; c < kbs; ++c) kb_mma<true>(acc, w[c], sc[c], h + size_t(slot) * I + 64 * (kb0 + c), q);
  stage2_finish(red, acc, wts[slot], warp, g, q, y + size_t(token) * H + 16 * f);
}

// Host: an expert's tiles back to the natural codes ([rows][K/2]) and scales ([rows][K/32]).
static int wg_bit(int p, int field, int hi) {  // field: 0 sign, 1 e1, 2 e0, 3 m (mxfp4_repack.hpp's table)
  static const int pos[4][4] = {{15, 8, 7, 6}, {5, 30, 29, 28}, {11, 4, 3, 2}, {9, 10, 1, 0}};
  return (pos[p][field] + 16 * hi) % 32;
}
static void tiles_to_natural(const std::vector<uint8_t>& tc, const std::vector<uint8_t>& ts, int rows, int K, bool stage1, int I,
                             std::vector<uint8_t>& nc, std::vector<uint8_t>& ns) {
  nc.assign(size_t(rows) * K / 2, 0);
  ns.assign(size_t(rows) * K / 32, 0);
  auto row_of = [&](int f, int r) { return stage1 ? (r < 8 ? 8 * f + r : I + 8 * f + r - 8) : 16 * f + r; };
  for (int f = 0; f < rows / 16; ++f)
    for (int kb = 0; kb < K / 64; ++kb) {
      size_t const blk = size_t(f) * (K / 64) + kb;
      for (int lane = 0; lane < 32; ++lane) {
        int const g = lane / 4, q = lane % 4;
        for (int st = 0; st < 4; ++st) {
          uint32_t w;
          std::memcpy(&w, &tc[(blk * 32 + lane) * 16 + 4 * st], 4);
          for (int p = 0; p < 4; ++p)
            for (int hi = 0; hi < 2; ++hi) {
              unsigned code = 0;
              for (int fl = 0; fl < 4; ++fl) code |= ((w >> wg_bit(p, fl, hi)) & 1u) << (3 - fl);
              int const r = row_of(f, (p & 1) ? g + 8 : g), k = 64 * kb + 16 * st + ((p & 2) ? 8 : 0) + 2 * q + hi;
              nc[(size_t(r) * K + k) / 2] |= static_cast<uint8_t>(code << (4 * (k & 1)));
            }
        }
      }
      for (int g = 0; g < 8; ++g)
        for (int j = 0; j < 4; ++j)
          ns[size_t(row_of(f, (j & 1) ? g + 8 : g)) * (K / 32) + 2 * kb + (j >> 1)] = ts[(blk * 8 + g) * 4 + j];
    }
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

struct Bufs {
  uint8_t *w1, *s1, *w2, *s2;
  __nv_bfloat16 *x, *h, *y;
  int* ids;     // [SETS][M * topk]
  float* wts;   // [SETS][M * topk]
};

template <int I, int TOPK, bool WG>
static void launch(int which, const Bufs& b, int M, int set, cudaStream_t s) {
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.stream = s; c.attrs = at; c.numAttrs = 1;
  int const slots = M * TOPK;
  if (which & 1) {
    c.gridDim = dim3(I / 8, slots); c.blockDim = dim3(256);
    CK(cudaLaunchKernelEx(&c, WG ? wg_stage1<I> : gemv_stage1<I>, (const uint8_t*)b.w1, (const uint8_t*)b.s1, (const __nv_bfloat16*)b.x,
                          (const int*)(b.ids + set * slots), b.h, TOPK));
  }
  if (which & 2) {
    c.gridDim = dim3(H / 16, M); c.blockDim = dim3(S2<I, TOPK>::warps * 32);
    CK(cudaLaunchKernelEx(&c, WG ? wg_stage2<I, TOPK> : gemv_stage2<I, TOPK>, (const uint8_t*)b.w2, (const uint8_t*)b.s2, (const __nv_bfloat16*)b.h,
                          (const int*)(b.ids + set * slots), (const float*)(b.wts + set * slots), b.y));
  }
}

template <int I, int TOPK, bool WG>
static float time_graph(int which, const Bufs& b, int M) {
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int l = 0; l < SETS; ++l) launch<I, TOPK, WG>(which, b, M, l, s);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, z; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&z));
  std::vector<float> per;
  for (int r = 0; r < 12; ++r) {
    CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(z, s));
    CK(cudaEventSynchronize(z));
    float ms; CK(cudaEventElapsedTime(&ms, a, z));
    if (r > 0) per.push_back(ms * 1000.f / SETS);
  }
  CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g)); CK(cudaStreamDestroy(s));
  return median(per);
}

static float bf(uint16_t v) { uint32_t u = uint32_t(v) << 16; float f; std::memcpy(&f, &u, 4); return f; }
static float e2m1(unsigned c) {
  static const float mag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  return (c & 8) ? -mag[c & 7] : mag[c & 7];
}
static uint16_t to_bf(float f) {  // round to nearest even
  uint32_t u; std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

static std::vector<float> decode_rows(const std::vector<uint8_t>& codes, const std::vector<uint8_t>& scales, int rows, int K) {
  std::vector<float> w(size_t(rows) * K);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < K; ++k) {
      uint8_t const by = codes[(size_t(r) * K + k) / 2];
      w[size_t(r) * K + k] = e2m1(k & 1 ? by >> 4 : by & 15) * std::ldexp(1.f, int(scales[size_t(r) * (K / 32) + k / 32]) - 127);
    }
  return w;
}

template <int I, int TOPK, bool WG>
static bool run_shape(const char* name, int E) {
  size_t const w1b = size_t(E) * 2 * I * H / 2, s1b = size_t(E) * 2 * I * H / 32;
  size_t const w2b = size_t(E) * H * I / 2, s2b = size_t(E) * H * I / 32;
  int const max_m = 8;
  Bufs b;
  CK(cudaMalloc(&b.w1, w1b)); CK(cudaMalloc(&b.s1, s1b)); CK(cudaMalloc(&b.w2, w2b)); CK(cudaMalloc(&b.s2, s2b));
  CK(cudaMalloc(&b.x, max_m * H * 2)); CK(cudaMalloc(&b.h, max_m * TOPK * I * 2)); CK(cudaMalloc(&b.y, max_m * H * 2));
  CK(cudaMalloc(&b.ids, SETS * max_m * TOPK * 4)); CK(cudaMalloc(&b.wts, SETS * max_m * TOPK * 4));
  fill_codes<<<1024, 256>>>(reinterpret_cast<uint32_t*>(b.w1), w1b / 4, 1);
  fill_codes<<<1024, 256>>>(reinterpret_cast<uint32_t*>(b.w2), w2b / 4, 2);
  fill_scales<<<1024, 256>>>(b.s1, s1b, 3);
  fill_scales<<<1024, 256>>>(b.s2, s2b, 4);
  CK(cudaDeviceSynchronize());
  srand(40);
  std::vector<uint16_t> xh(max_m * H);
  for (auto& v : xh) v = to_bf((rand() / float(RAND_MAX)) * 2.f - 1.f);
  CK(cudaMemcpy(b.x, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
  bool all_ok = true;
  for (int M : {1, 2, 4, 8}) {
    int const slots = M * TOPK;
    std::vector<int> ids(SETS * slots);
    std::vector<float> wts(SETS * slots);
    for (int s = 0; s < SETS; ++s)
      for (int tk = 0; tk < M; ++tk) {  // each token: TOPK distinct experts, weights summing to 1
        std::vector<int> perm(E);
        for (int i = 0; i < E; ++i) perm[i] = i;
        int* id = &ids[s * slots + tk * TOPK];
        float* wt = &wts[s * slots + tk * TOPK];
        for (int i = 0; i < TOPK; ++i) { std::swap(perm[i], perm[i + rand() % (E - i)]); id[i] = perm[i]; }
        float sum = 0;
        for (int i = 0; i < TOPK; ++i) sum += (wt[i] = 0.1f + rand() / float(RAND_MAX));
        for (int i = 0; i < TOPK; ++i) wt[i] /= sum;
      }
    CK(cudaMemcpy(b.ids, ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.wts, wts.data(), wts.size() * 4, cudaMemcpyHostToDevice));
    // Correctness: set 0 against a CPU reference (h rounded to bf16 as the kernel rounds it).
    launch<I, TOPK, WG>(3, b, M, 0, 0);
    CK(cudaDeviceSynchronize());
    std::vector<uint16_t> yg(M * H), hg(slots * I);
    CK(cudaMemcpy(yg.data(), b.y, yg.size() * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hg.data(), b.h, hg.size() * 2, cudaMemcpyDeviceToHost));
    double max_err_h = 0, max_err_y = 0, ymax = 0;
    std::vector<float> yr(M * H, 0.f);
    int const checked = std::min(M, 2);  // tokens checked (the reference's time grows with M)
    for (int sl = 0; sl < checked * TOPK; ++sl) {
      int const e = ids[sl], tk = sl / TOPK;
      std::vector<uint8_t> c1(size_t(2) * I * H / 2), sc1(size_t(2) * I * H / 32), c2(size_t(H) * I / 2), sc2(size_t(H) * I / 32);
      CK(cudaMemcpy(c1.data(), b.w1 + size_t(e) * 2 * I * H / 2, c1.size(), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(sc1.data(), b.s1 + size_t(e) * 2 * I * H / 32, sc1.size(), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(c2.data(), b.w2 + size_t(e) * H * I / 2, c2.size(), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(sc2.data(), b.s2 + size_t(e) * H * I / 32, sc2.size(), cudaMemcpyDeviceToHost));
      if (WG) {  // the tiles back to the natural layout, then the same reference
        std::vector<uint8_t> n1, m1, n2, m2;
        tiles_to_natural(c1, sc1, 2 * I, H, true, I, n1, m1);
        tiles_to_natural(c2, sc2, H, I, false, I, n2, m2);
        c1.swap(n1), sc1.swap(m1), c2.swap(n2), sc2.swap(m2);
      }
      std::vector<float> const w1 = decode_rows(c1, sc1, 2 * I, H), w2 = decode_rows(c2, sc2, H, I);
      std::vector<float> hr(I);
      for (int j = 0; j < I; ++j) {
        double gt = 0, up = 0;
        for (int k = 0; k < H; ++k) gt += double(w1[size_t(j) * H + k]) * bf(xh[tk * H + k]), up += double(w1[size_t(I + j) * H + k]) * bf(xh[tk * H + k]);
        hr[j] = bf(to_bf(float(gt / (1.0 + std::exp(-gt)) * up)));
        max_err_h = std::max(max_err_h, double(std::fabs(bf(hg[sl * I + j]) - hr[j]) / (std::fabs(hr[j]) + 1e-2)));
      }
      for (int n = 0; n < H; ++n) {
        double a = 0;
        for (int k = 0; k < I; ++k) a += double(w2[size_t(n) * I + k]) * hr[k];
        yr[tk * H + n] += float(a * wts[sl]);
      }
    }
    for (float v : yr) ymax = std::max(ymax, double(std::fabs(v)));
    for (int n = 0; n < checked * H; ++n) max_err_y = std::max(max_err_y, double(std::fabs(bf(yg[n]) - yr[n])));
    bool const ok = max_err_h < 0.02 && max_err_y < 0.02 * ymax + 1e-3;
    all_ok = all_ok && ok;
    std::printf("%s M=%d check (first %d tokens): h max rel err %.4g, y max abs err %.4g (|y| max %.4g): %s\n", name, M, checked, max_err_h, max_err_y, ymax,
                ok ? "PASS" : "FAIL");
    for (int rep = 0; rep < 2; ++rep) {
      float const t1 = time_graph<I, TOPK, WG>(1, b, M), t2 = time_graph<I, TOPK, WG>(2, b, M), t3 = time_graph<I, TOPK, WG>(3, b, M);
      double const by1 = slots * (2.0 * I * H / 2 + 2.0 * I * H / 32), by2 = slots * (double(H) * I / 2 + double(H) * I / 32);
      std::printf("%s M=%d round %d: stage one %6.2f us (%.2f TB/s)  stage two %6.2f us (%.2f TB/s)  MoE (both, PDL) %6.2f us\n",
                  name, M, rep, t1, by1 / t1 * 1e-6, t2, by2 / t2 * 1e-6, t3);
    }
  }
  for (void* p : {(void*)b.w1, (void*)b.s1, (void*)b.w2, (void*)b.s2, (void*)b.x, (void*)b.h, (void*)b.y, (void*)b.ids, (void*)b.wts})
    CK(cudaFree(p));
  return all_ok;
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
  bool ok = true;
  for (bool wg : {false, true}) {
    std::printf("== weights in the %s layout\n", wg ? "wgmma tile" : "natural");
    ok = (wg ? run_shape<640, 6, true>("backbone E384 top6 I640", 384) : run_shape<640, 6, false>("backbone E384 top6 I640", 384)) && ok;
    ok = (wg ? run_shape<640, 3, true>("draft E128 top3 I640", 128) : run_shape<640, 3, false>("draft E128 top3 I640", 128)) && ok;
    ok = (wg ? run_shape<2304, 6, true>("EP E96 top6 I2304", 96) : run_shape<2304, 6, false>("EP E96 top6 I2304", 96)) && ok;
  }
  return ok ? 0 : 1;
}
