#pragma once
// Hopper warpgroup MMA (wgmma, sm_90a) in inline PTX: the asynchronous m64nNk16 bf16 and
// m64nNk32 e4m3 products with the A operand in registers and B in shared memory, their fence,
// commit and wait, and the shared-memory descriptor of a 128-byte-swizzled K-major B tile.
// Compiled into the CUDA device pass for sm_90a only (NVRTC targets sm_90a for every sm_90
// unit: autotune/jit/nvrtc_compiler.cpp); elsewhere every wrapper is a trap and the validity
// rules never select the wgmma main loop.
//
// Register layouts (PTX ISA, "wgmma register fragments"): warp w of the warpgroup holds rows
// 16w..16w+15 of the 64-row A and D tiles; lane (g = lane / 4, q = lane % 4):
//   A bf16 (k16):  a0 (row g, k 2q..2q+1)  a1 (row g+8, k 2q..)  a2 (row g, k 2q+8..)  a3 (row g+8, k 2q+8..)
//   A e4m3 (k32):  a0 (row g, k 4q..4q+3)  a1 (row g+8, same k)  a2 (row g, k 16+4q..) a3 (row g+8, k 16+4q..)
//   D fp32:        d[4j + 0..1] (row g, columns 8j + 2q, +1)   d[4j + 2..3] (row g+8, same columns)
// The operand lists are spelled out per N (inline PTX takes no variadic register lists).
#include "moetune_portability.h"

#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MOETUNE_SM90A 1  // wgmma, setmaxnreg
#endif

namespace moetune {

// Descriptor of a K-major operand tile in shared memory with the 128-byte swizzle: rows of 128
// bytes (64 bf16 or 128 fp8 of K), 16-byte chunk c of row r stored at chunk c ^ (r % 8), 8-row
// atoms of 1024 bytes (1024-aligned) stacked along N. Fields: start address >> 4 (bits 0-13),
// leading-dimension offset (unused for swizzled K-major tiles: 1), stride between 8-row atoms
// 1024 >> 4 (bits 32-45), base offset 0, swizzle mode 1 = 128 B (bits 62-63). A k-step inside
// a row advances the start address by its bytes (32 per k16 bf16 step or k32 fp8 step).
// As two words: the low one holds the start address and the leading offset; the high one
// (stride and swizzle) is the same for every tile, so a descriptor is its low word and a
// constant (wgmma_desc_from_low; moe_wgmma_gemm.cuh's warp_uniform_desc says why that matters).
constexpr u32 kWgmmaSw128DescHigh = (1024u >> 4) | (1u << 30);  // stride 1024 >> 4, swizzle mode 1
MOETUNE_DEV u32 wgmma_desc_sw128_low(u32 smem_addr) { return ((smem_addr & 0x3ffffu) >> 4) | (1u << 16); }
MOETUNE_DEV u64 wgmma_desc_from_low(u32 low) { return (static_cast<u64>(kWgmmaSw128DescHigh) << 32) | low; }
MOETUNE_DEV u64 wgmma_desc_sw128(u32 smem_addr) { return wgmma_desc_from_low(wgmma_desc_sw128_low(smem_addr)); }

#if defined(MOETUNE_SM90A)
// Orders this warp's earlier register and shared-memory writes before the next wgmma reads
// them (every warp of the warpgroup issues it).
MOETUNE_DEV void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
MOETUNE_DEV void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most Pending committed groups of this warpgroup are still running.
template <int Pending>
MOETUNE_DEV void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// Keeps the compiler from moving accesses of a register across a wgmma boundary.
MOETUNE_DEV void wgmma_fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
MOETUNE_DEV void wgmma_fence_operand(u32& r) { asm volatile("" : "+r"(r)::"memory"); }
// Makes this thread's generic-proxy shared-memory writes (cp.async, st.shared) visible to the
// async proxy the tensor cores read through; before the barrier that publishes them.
MOETUNE_DEV void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
#else
MOETUNE_DEV void wgmma_fence() { trap_kernel(); }
MOETUNE_DEV void wgmma_commit() { trap_kernel(); }
template <int Pending>
MOETUNE_DEV void wgmma_wait() { trap_kernel(); }
MOETUNE_DEV void wgmma_fence_operand(float&) {}
MOETUNE_DEV void wgmma_fence_operand(u32&) {}
MOETUNE_DEV void fence_proxy_async_shared() {}
#endif

// D(64 x N) (+)= A(64 x 16, registers) * B(16 x N, descriptor), bf16 in, fp32 accumulators;
// accumulate == 0 overwrites D. And the e4m3 form (k32). D is read and written ("+f") even
// when overwritten: then each D register is one register across a loop's iterations, where a
// write-only D became a copy at the back edge that read a group still running (ptxas
// serialises the pipeline then, warning C7513).
template <int N>
struct WgmmaBf16;
template <int N>
struct WgmmaE4m3;

#if defined(MOETUNE_SM90A)
// One asm statement per N, shared by the bf16 and the e4m3 forms (the register lists are the
// same; only the instruction and its trailing immediates differ).
#define MOETUNE_WGMMA_N8(INSTR, TAIL)                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n" INSTR " "                          \
               "{%0, %1, %2, %3}, "                                                              \
               "{%4, %5, %6, %7}, %8, " TAIL ";\n}\n"                                              \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])  \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(accumulate))
#define MOETUNE_WGMMA_N16(INSTR, TAIL)                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n" INSTR " "                          \
               "{%0, %1, %2, %3, %4, %5, %6, %7}, "                                                              \
               "{%8, %9, %10, %11}, %12, " TAIL ";\n}\n"                                              \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])  \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(accumulate))
#define MOETUNE_WGMMA_N32(INSTR, TAIL)                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n" INSTR " "                          \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "                                                              \
               "{%16, %17, %18, %19}, %20, " TAIL ";\n}\n"                                              \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])  \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(accumulate))
#define MOETUNE_WGMMA_N64(INSTR, TAIL)                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" INSTR " "                          \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "                                                              \
               "{%32, %33, %34, %35}, %36, " TAIL ";\n}\n"                                              \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),  \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),  \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])  \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(accumulate))
#define MOETUNE_WGMMA_N128(INSTR, TAIL)                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" INSTR " "                          \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "                                                              \
               "{%64, %65, %66, %67}, %68, " TAIL ";\n}\n"                                              \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),  \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),  \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),  \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),  \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),  \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),  \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])  \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(accumulate))

template <>
struct WgmmaBf16<8> {
  MOETUNE_DEV static void mma(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N8("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", "p, 1, 1, 0");
  }
};
template <>
struct WgmmaE4m3<8> {
  MOETUNE_DEV static void mma(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N8("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", "p, 1, 1");
  }
};
template <>
struct WgmmaBf16<16> {
  MOETUNE_DEV static void mma(float (&d)[8], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N16("wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16", "p, 1, 1, 0");
  }
};
template <>
struct WgmmaE4m3<16> {
  MOETUNE_DEV static void mma(float (&d)[8], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N16("wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3", "p, 1, 1");
  }
};
template <>
struct WgmmaBf16<32> {
  MOETUNE_DEV static void mma(float (&d)[16], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N32("wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16", "p, 1, 1, 0");
  }
};
template <>
struct WgmmaE4m3<32> {
  MOETUNE_DEV static void mma(float (&d)[16], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N32("wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3", "p, 1, 1");
  }
};
template <>
struct WgmmaBf16<64> {
  MOETUNE_DEV static void mma(float (&d)[32], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N64("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "p, 1, 1, 0");
  }
};
template <>
struct WgmmaE4m3<64> {
  MOETUNE_DEV static void mma(float (&d)[32], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N64("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", "p, 1, 1");
  }
};
template <>
struct WgmmaBf16<128> {
  MOETUNE_DEV static void mma(float (&d)[64], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N128("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "p, 1, 1, 0");
  }
};
template <>
struct WgmmaE4m3<128> {
  MOETUNE_DEV static void mma(float (&d)[64], u32 a0, u32 a1, u32 a2, u32 a3, u64 desc, int accumulate) {
    MOETUNE_WGMMA_N128("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", "p, 1, 1");
  }
};
#else
template <int N>
struct WgmmaBf16 {
  MOETUNE_DEV static void mma(float (&)[N / 2], u32, u32, u32, u32, u64, int) { trap_kernel(); }
};
template <int N>
struct WgmmaE4m3 {
  MOETUNE_DEV static void mma(float (&)[N / 2], u32, u32, u32, u32, u64, int) { trap_kernel(); }
};
#endif  // MOETUNE_SM90A

}  // namespace moetune
