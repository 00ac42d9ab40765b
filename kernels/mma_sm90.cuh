#pragma once
// NVIDIA matrix and atomic primitives in inline PTX (no cuda_bf16.h: kernels see no vendor
// header). Compiled only in the CUDA device pass; elsewhere the wrappers are never called.
#include "moetune_portability.h"

namespace moetune {

// D = A(16x16, row) * B(16x8, col) + D, bf16 inputs, fp32 accumulators.
// a0: (row g, k 2q..2q+1) a1: (row g+8, same k) a2: (row g, k 2q+8..) a3: (row g+8, k 2q+8..)
// b0: (k 2q..2q+1, col g) b1: (k 2q+8.., col g); g = lane/4, q = lane%4.
MOETUNE_DEV void mma_m16n8k16_bf16(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
#if defined(MOETUNE_SM80_PLUS)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  (void)d, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
  trap_kernel();
#endif
}

// D = A(16x32, row) * B(32x8, col), e4m3 inputs, fp32 result (C = 0: the callers scale each
// 32-K partial sum before adding it). Four codes per register, the lowest K in the low byte:
// a0: (row g, k 4q..4q+3) a1: (row g+8, same k) a2: (row g, k 16+4q..) a3: (row g+8, k 16+4q..)
// b0: (k 4q..4q+3, col g) b1: (k 16+4q.., col g); d as for m16n8k16. sm_89 and later.
MOETUNE_DEV void mma_m16n8k32_e4m3(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
#if defined(MOETUNE_SM89_PLUS)
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.0f));
#else
  (void)d, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
  trap_kernel();
#endif
}

// Four 8x8 b16 matrices from LDS: lane l gives the address of row (l & 7) of matrix l / 8;
// register i receives matrix i in the mma fragment layout (row l / 4, columns 2(l % 4)..+1).
MOETUNE_DEV void ldmatrix_x4(u32 (&r)[4], const u8* p) {
#if defined(MOETUNE_SM80_PLUS)
  u32 const a = static_cast<u32>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
#else
  (void)r, (void)p;
  trap_kernel();
#endif
}

}  // namespace moetune
