#pragma once
// The sort and A8W4's activations upcast to bf16, in one launch: the first launch of an A8W4
// stage one that reads x in bf16 (`_xb`, KernelConfig::x_bf16). Its first sort_ctas_for(M *
// topk) CTAs sort (moe_sort.cuh's sort_body); the upcast_ctas after them write xb[M][H] = e4m3
// code x 2^scale as bf16, the MXFP8 activations' values (exact: 4 significant bits, and bf16
// has fp32's exponent range; only values below bf16's smallest subnormal, scale exponents
// under about -117, round to zero, as the register main loop's per-CTA upcast in moe_gemm.cuh
// does).
// Why: the A8W4 wgmma stage one multiplies e4m3 codes per k32 step into scratch sums it scales
// in fp32 (144-146 registers at 64 tokens, one CTA per SM; backbone M = 4096 stage one 2153 us
// against A16W4's 1076, session 20). With x in bf16 the stage one is the A16W4 main loop and
// only its epilogue quantises h as A8W4's does. The upcast reads x once per MoE (at backbone
// M = 4096 21 MB in, 42 MB out) in CTAs beside the sort's, so it costs no launch of its own.
// Each upcast CTA joins the kernel chain first like the sort: the previous MoE's stage one may
// still read xb. The stage one waits for this whole grid (wait_for_previous_kernel) before
// its main loop reads xb.
#include "moe_sort.cuh"
#include "mx_decode.cuh"

namespace moetune {

// One upcast CTA's share: 16 codes (a 16-byte load) and their block's scale per thread and
// step, 16 bf16 out (two 16-byte stores); groups of 16 from `first`, every `step`-th.
template <int Fp8>
MOETUNE_DEV void upcast_x_share(const u8* __restrict__ x, const u8* __restrict__ x_scales, u8* __restrict__ xb,
                                i64 groups, i64 first, i64 step) {
  for (i64 g = first; g < groups; g += step) {
    u32x4 const codes = reinterpret_cast<const u32x4*>(x)[g];
    float const s = e8m0_to_f32(x_scales[g / 2]);  // 32 codes per scale: two groups
    u32 o[8];
    fp8x4_to_bf16x4<Fp8>(codes.x, s, o[0], o[1]);
    fp8x4_to_bf16x4<Fp8>(codes.y, s, o[2], o[3]);
    fp8x4_to_bf16x4<Fp8>(codes.z, s, o[4], o[5]);
    fp8x4_to_bf16x4<Fp8>(codes.w, s, o[6], o[7]);
    u32x4* dst = reinterpret_cast<u32x4*>(xb) + 2 * g;
    dst[0] = u32x4{o[0], o[1], o[2], o[3]};
    dst[1] = u32x4{o[4], o[5], o[6], o[7]};
  }
}

// Grid: 1 + upcast_ctas CTAs of sort_threads (moe_sort_upcast_x: the one-CTA sort in CTA 0) or
// at least sort_ctas_for(M * topk) + upcast_ctas (moe_sort_multi_upcast_x: the sort's CTAs
// first; the host plans both like moe_sort and moe_sort_multi, moe_sort.cuh). x: [M][H] codes,
// x_scales: [M][H/32], H % 32 == 0. Upcast CTA u takes groups u, u + upcast_ctas, ... of 512
// threads; a CTA past the sort's and the upcast's (a grid planned for a larger M) returns.
// upcast_cta: the upcast's share, CTA u = block_x() - sort_ctas (the sort's CTAs came first).
template <int Fp8>
MOETUNE_DEV void upcast_cta(const u8* __restrict__ x, const u8* __restrict__ x_scales, u8* __restrict__ xb, i32 M,
                            i32 H, i32 upcast_ctas, int sort_ctas) {
  int const u = static_cast<int>(block_x()) - sort_ctas;
  if (u < 0 || u >= upcast_ctas) return;
  i64 const groups = static_cast<i64>(M) * H / 16;
  upcast_x_share<Fp8>(x, x_scales, xb, groups, static_cast<i64>(u) * sort_threads + thread_x(),
                      static_cast<i64>(upcast_ctas) * sort_threads);
}

template <int Fp8>
__global__ void MOETUNE_LAUNCH_BOUNDS(sort_threads, 0)
    moe_sort_upcast_x(MOETUNE_SORT_PARAMS, const u8* __restrict__ x, const u8* __restrict__ x_scales,
                      u8* __restrict__ xb, i32 H, i32 upcast_ctas) {
  join_kernel_chain();  // the previous MoE's kernels may still read sorted_slots and xb
  upcast_cta<Fp8>(x, x_scales, xb, M, H, upcast_ctas, sort_launch_part<false>(MOETUNE_SORT_ARGS));
}

template <int Fp8>
__global__ void MOETUNE_LAUNCH_BOUNDS(sort_threads, 0)
    moe_sort_multi_upcast_x(MOETUNE_SORT_PARAMS, const u8* __restrict__ x, const u8* __restrict__ x_scales,
                            u8* __restrict__ xb, i32 H, i32 upcast_ctas) {
  join_kernel_chain();
  upcast_cta<Fp8>(x, x_scales, xb, M, H, upcast_ctas, sort_launch_part<true>(MOETUNE_SORT_ARGS));
}

}  // namespace moetune

// Explicit instantiation (hipRTC and clang-22 emit only instantiated kernels): both forms.
#define MOETUNE_INSTANTIATE_SORT_UPCAST_X(FP8)                                                                   \
  template __global__ void moetune::moe_sort_upcast_x<FP8>(                                                      \
      const moetune::i32*, moetune::i32, moetune::i32, moetune::i32, moetune::i32, moetune::i32, moetune::i32*, \
      moetune::i32*, moetune::i32*, const moetune::u8*, const moetune::u8*, moetune::u8*, moetune::i32, moetune::i32); \
  template __global__ void moetune::moe_sort_multi_upcast_x<FP8>(                                                \
      const moetune::i32*, moetune::i32, moetune::i32, moetune::i32, moetune::i32, moetune::i32, moetune::i32*, \
      moetune::i32*, moetune::i32*, const moetune::u8*, const moetune::u8*, moetune::u8*, moetune::i32, moetune::i32)
