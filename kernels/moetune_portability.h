#pragma once
// moetune_portability.h — the only "runtime" a moe-tune kernel sees.
//
// Kernels are compiled by four front ends, none of which may see a host or vendor header:
//   * NVRTC / nvcc (CUDA):      __global__, threadIdx, __syncthreads, shuffles are built in.
//   * hipRTC (HIP 5.2 here):    pre-includes HIP's device declarations (__global__, threadIdx,
//                               __syncthreads, int types...), so we must not redefine them.
//   * clang-22 -x hip -nogpuinc: nothing at all is predefined except the attributes and the
//                               __builtin_amdgcn_* builtins.
// So every kernel uses only the names below (moetune::thread_x(), moetune::barrier(), ...),
// which map to builtins that exist in all three AMD modes, and to CUDA's intrinsics on NVIDIA.
// Integer types are our own (u32, i32...) in namespace moetune: hipRTC already declares
// uint32_t and friends in the global namespace, and we must not clash with them.

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__NVCC__)
#define MOETUNE_CUDA 1
#elif defined(__HIP__) || defined(__HIPCC_RTC__) || defined(__AMDGCN__)
#define MOETUNE_AMD 1
#else
#error "moetune kernels need a CUDA or HIP device compiler"
#endif

// Device-pass detection (the host pass of a single-source compile sees no device builtins).
#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__)
#define MOETUNE_DEVICE_PASS 1
#elif defined(MOETUNE_AMD) && defined(__AMDGCN__)
#define MOETUNE_DEVICE_PASS 1
#endif

// Architecture families for the matrix paths.
#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MOETUNE_SM80_PLUS 1  // mma.sync.m16n8k16 bf16
#endif
#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define MOETUNE_SM89_PLUS 1  // mma.sync.m16n8k32 e4m3 (fp8 x fp8 -> fp32)
#endif
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || \
    defined(__gfx950__)
#define MOETUNE_GFX9_MFMA_BF16_1K 1  // v_mfma_f32_{16x16x16,32x32x8}bf16_1k
#endif
#if defined(__gfx950__)
#define MOETUNE_GFX950 1  // v_mfma_scale_f32_*_f8f6f4
#endif

// ---- Keywords ------------------------------------------------------------------------------
// clang -nogpuinc defines none of the CUDA keywords; hipRTC and CUDA define all of them.
#if defined(MOETUNE_AMD) && !defined(__HIPCC_RTC__) && !defined(__global__)
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#endif
#if defined(MOETUNE_AMD) && !defined(__forceinline__)
#define __forceinline__ inline __attribute__((always_inline))
#endif

#define MOETUNE_DEV __device__ __forceinline__

// Occupancy hint: NVIDIA reads `waves` as minimum resident CTAs per SM, AMD as the
// amdgpu-waves-per-eu lower bound (DESIGN.md §3). waves == 0 means "no hint".
#if defined(MOETUNE_CUDA)
#define MOETUNE_LAUNCH_BOUNDS(threads, waves) __launch_bounds__((threads), ((waves) > 0 ? (waves) : 1))
#else
#define MOETUNE_LAUNCH_BOUNDS(threads, waves)                 \
  __attribute__((amdgpu_flat_work_group_size(1, (threads)), \
                 amdgpu_waves_per_eu(((waves) > 0 ? (waves) : 1))))
#endif

namespace moetune {

// ---- Fixed-width integers (no <cstdint> under NVRTC / -nogpuinc) ---------------------------
typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
static_assert(sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8, "integer widths");

// 16-byte vector used for every wide global load/store (aligned so the compiler emits one
// 128-bit access: LDG.128 / global_load_dwordx4).
struct alignas(16) u32x4 {
  u32 x, y, z, w;
};
struct alignas(8) u32x2 {
  u32 x, y;
};
// Four floats read or written as one 16-byte access (LDS.128 / ds_read_b128).
struct alignas(16) f32x4 {
  float x, y, z, w;
};

// ---- Wave geometry ---------------------------------------------------------------------------
#if defined(MOETUNE_CUDA)
constexpr int warp_size = 32;
#else
constexpr int warp_size = 64;  // gfx9 (CDNA) is wave64 only
#endif

// ---- Indices (kernels know their block size at compile time, so no blockDim/gridDim) -----
#if defined(MOETUNE_CUDA)
MOETUNE_DEV u32 thread_x() { return threadIdx.x; }
MOETUNE_DEV u32 block_x() { return blockIdx.x; }
MOETUNE_DEV u32 block_y() { return blockIdx.y; }
MOETUNE_DEV u32 block_z() { return blockIdx.z; }
MOETUNE_DEV u32 lane_id() { return threadIdx.x & 31u; }
#else
MOETUNE_DEV u32 thread_x() { return __builtin_amdgcn_workitem_id_x(); }
MOETUNE_DEV u32 block_x() { return __builtin_amdgcn_workgroup_id_x(); }
MOETUNE_DEV u32 block_y() { return __builtin_amdgcn_workgroup_id_y(); }
MOETUNE_DEV u32 block_z() { return __builtin_amdgcn_workgroup_id_z(); }
MOETUNE_DEV u32 lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
#endif

// ---- Barriers ------------------------------------------------------------------------------
// CTA-wide barrier that also orders shared and global memory among the CTA's threads.
MOETUNE_DEV void barrier() {
#if defined(MOETUNE_CUDA)
  __syncthreads();
#else
  // s_barrier alone orders nothing; the release/acquire fences at workgroup scope make the
  // LDS and global writes before the barrier visible after it (what HIP's __syncthreads does).
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
#endif
}

// barrier() that also returns whether any thread of the CTA passed `p` true (bar.red.or), so a
// CTA-wide decision costs no second barrier. CUDA only: the one caller (the staged main loop's
// fragment decode) is an sm_90 kernel; the template keeps other targets compiling until used.
template <int Unused = 0>
MOETUNE_DEV bool barrier_any(bool p) {
#if defined(MOETUNE_CUDA)
  return __syncthreads_or(p ? 1 : 0) != 0;
#else
  static_assert(Unused != 0, "barrier_any is CUDA-only (sm_90 staged main loop)");
  return p;
#endif
}

// barrier() that also returns how many threads of the CTA passed `p` true (bar.red.popc).
// CUDA only, like barrier_any (its caller is the sm_90a wgmma main loop).
template <int Unused = 0>
MOETUNE_DEV int barrier_count(bool p) {
#if defined(MOETUNE_CUDA)
  return __syncthreads_count(p ? 1 : 0);
#else
  static_assert(Unused != 0, "barrier_count is CUDA-only (sm_90a wgmma main loop)");
  return p ? 1 : 0;
#endif
}

// ---- Launch overlap (CUDA programmatic dependent launch, sm_90+) ---------------------------
// The MoE's kernels are launched so that each may start while the previous one drains
// (gpu::LaunchOrder::early_start): its CTAs become resident and wait here, so the launch and
// the CTAs' start-up no longer sit between two kernels (five kernels at M = 1). Every MoE
// kernel calls this before it reads or writes global memory: it returns once the previous
// kernel on the stream has completed and its writes are visible, and at once when the kernel
// was launched without overlap (or on targets without it). Calling it in every kernel keeps
// the chain transitive: a kernel that skipped it could finish before its predecessor, and its
// successor would then wait on it alone.
MOETUNE_DEV void wait_for_previous_kernel() {
#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// Lets the next kernel's CTAs be scheduled once every CTA of this one has called it (or
// exited). Where it is called matters: the next kernel's CTAs are placed into whatever slots
// are free at that moment and wait there. The one-CTA sort and the small reduce kernel call
// it at once (the next kernel then spreads over the whole GPU while they run); the stage
// kernels call it after their main loop, before the epilogue (session 12: called at their
// start, stage two's CTAs crowded into the SMs stage one left free and were badly spread
// when it began: EP M = 1 59.7 -> 69.4 us). Always after wait_for_previous_kernel(), so at
// most two kernels of the chain are resident at once.
MOETUNE_DEV void allow_next_kernel_start() {
#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// Both, in that order: the first statement of the sort and the reduce kernel.
MOETUNE_DEV void join_kernel_chain() {
  wait_for_previous_kernel();
  allow_next_kernel_start();
}

// Orders shared-memory accesses among the lanes of one warp/wavefront (all lanes take part).
MOETUNE_DEV void warp_sync() {
#if defined(MOETUNE_CUDA)
  __syncwarp();
#else
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#endif
}

// ---- Shuffles (full warp/wave participates) ---------------------------------------------
MOETUNE_DEV i32 shfl_idx(i32 v, int src_lane) {
#if defined(MOETUNE_CUDA)
  return __shfl_sync(0xffffffffu, v, src_lane);
#else
  return __builtin_amdgcn_ds_bpermute(src_lane << 2, v);
#endif
}
MOETUNE_DEV i32 shfl_xor(i32 v, int mask) {
#if defined(MOETUNE_CUDA)
  return __shfl_xor_sync(0xffffffffu, v, mask);
#else
  return __builtin_amdgcn_ds_bpermute(static_cast<int>((lane_id() ^ static_cast<u32>(mask)) << 2), v);
#endif
}
MOETUNE_DEV float shfl_xor(float v, int mask) {
  return __builtin_bit_cast(float, shfl_xor(__builtin_bit_cast(i32, v), mask));
}
// Butterfly exchange among the Lanes aligned lanes of one group (Lanes a power of two below
// 32, mask < Lanes): only the group's lanes need take part, so groups of a warp may diverge
// (an epilogue whose rows skip padding slots).
template <int Lanes>
MOETUNE_DEV float shfl_xor_in_group(float v, int mask) {
  static_assert(Lanes > 1 && Lanes < 32 && (Lanes & (Lanes - 1)) == 0, "a power-of-two group within a warp");
#if defined(MOETUNE_CUDA)
  u32 const group = ((1u << Lanes) - 1u) << (lane_id() & ~static_cast<u32>(Lanes - 1));
  return __shfl_xor_sync(group, v, mask);
#else
  return shfl_xor(v, mask);  // ds_bpermute: reads the source lane, whoever else is active
#endif
}

// ---- Global atomics ----------------------------------------------------------------------
MOETUNE_DEV u32 atomic_cas(u32* p, u32 expected, u32 desired) {
#if defined(MOETUNE_CUDA)
  return atomicCAS(p, expected, desired);
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;  // on failure updated to the current value; on success unchanged
#endif
}
// Shared-memory counter increment (order-independent uses only).
MOETUNE_DEV void atomic_add_i32(i32* p, i32 v) {
#if defined(MOETUNE_CUDA)
  atomicAdd(p, v);
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
MOETUNE_DEV void atomic_add_u64(u64* p, u64 v) {
#if defined(MOETUNE_CUDA)
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
MOETUNE_DEV void atomic_add_f32(float* p, float v) {
#if defined(MOETUNE_CUDA)
  atomicAdd(p, v);
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
// Four adjacent floats (p 16-byte aligned): on sm_90 one vector reduction, so the L2 performs
// one 16-byte atomic instead of four 4-byte ones (the atomic stage two's epilogue adds
// M x topk x H floats: 15.7 M at backbone M = 512). Elsewhere four scalar adds.
MOETUNE_DEV void atomic_add_f32x4(float* p, float a, float b, float c, float d) {
#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
#else
  atomic_add_f32(p, a);
  atomic_add_f32(p + 1, b);
  atomic_add_f32(p + 2, c);
  atomic_add_f32(p + 3, d);
#endif
}

// ---- Small math ------------------------------------------------------------------------
MOETUNE_DEV float exp_f32(float x) {
#if defined(MOETUNE_CUDA)
  return __expf(x);
#else
  // llvm.exp.f32: the AMDGPU backend expands it onto v_exp_f32 with no device library
  // (__builtin_amdgcn_exp2f is missing from HIP 5.2's clang 15).
  return __builtin_expf(x);
#endif
}
#if defined(MOETUNE_CUDA)
// NVRTC knows the CUDA math functions but not GCC's __builtin_ spellings of them.
MOETUNE_DEV float fabs_f32(float x) { return fabsf(x); }
MOETUNE_DEV float fmax_f32(float a, float b) { return fmaxf(a, b); }
#else
MOETUNE_DEV float fabs_f32(float x) { return __builtin_fabsf(x); }
MOETUNE_DEV float fmax_f32(float a, float b) { return __builtin_fmaxf(a, b); }
#endif
MOETUNE_DEV float rcp_f32(float x) { return 1.0f / x; }
// Round to nearest, ties to even (the current rounding mode).
MOETUNE_DEV float rint_f32(float x) {
#if defined(MOETUNE_CUDA)
  return rintf(x);
#else
  return __builtin_rintf(x);
#endif
}
// Stops the kernel: reached only by a matrix path compiled for the wrong arch.
MOETUNE_DEV void trap_kernel() {
#if defined(MOETUNE_CUDA)
  __trap();
#else
  __builtin_trap();
#endif
}

// ---- bf16 / fp32 bit conversions ---------------------------------------------------------
MOETUNE_DEV float bf16_to_f32(u16 b) { return __builtin_bit_cast(float, static_cast<u32>(b) << 16); }
// Round to nearest even (the contract's rule); NaN stays a quiet NaN.
MOETUNE_DEV u16 f32_to_bf16(float f) {
  u32 u = __builtin_bit_cast(u32, f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<u16>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<u16>(u >> 16);
}
MOETUNE_DEV u32 pack_bf16x2(float lo, float hi) {
  return static_cast<u32>(f32_to_bf16(lo)) | (static_cast<u32>(f32_to_bf16(hi)) << 16);
}
// 2^e for an e8m0 byte (b = 127 + e), built directly in the exponent field. b = 0 is 2^-127,
// a subnormal in fp32; it never multiplies anything but exact MX values, so flushing it would
// change results — build it exactly.
MOETUNE_DEV float e8m0_to_f32(u32 b) {
  return b == 0 ? __builtin_bit_cast(float, 0x00400000u) : __builtin_bit_cast(float, b << 23);
}

}  // namespace moetune
