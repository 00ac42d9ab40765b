#pragma once
// A content checksum of a device buffer, computed where the buffer lives. The verifier's
// input-preservation gate must prove that no candidate wrote its weights; downloading a
// DeepSeek layer's ~2 GB of weights to hash them on the host costs about a second per
// candidate, this kernel about a millisecond.
//
// sum over 16-byte words i of mix(word_i.lo ^ i*K1) + mix(word_i.hi ^ i*K2) (mod 2^64): the
// index enters every term, so swapped or moved words change the sum; the sum is order-free,
// so the result does not depend on the grid or on atomic ordering (deterministic).
#include "moetune_portability.h"

namespace moetune {

constexpr int checksum_threads = 256;

MOETUNE_DEV u64 checksum_mix(u64 x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

// n16: number of whole 16-byte words (the host hashes any tail). Grid-stride over `grid`
// CTAs (kernels see no gridDim); one 64-bit atomic per thread.
__global__ void MOETUNE_LAUNCH_BOUNDS(checksum_threads, 0)
    moe_checksum(const u32x4* __restrict__ data, i64 n16, i32 grid, u64* __restrict__ out) {
  i64 const stride = static_cast<i64>(grid) * checksum_threads;
  u64 acc = 0;
  for (i64 i = static_cast<i64>(block_x()) * checksum_threads + thread_x(); i < n16; i += stride) {
    u32x4 const v = data[i];
    u64 const lo = (static_cast<u64>(v.y) << 32) | v.x;
    u64 const hi = (static_cast<u64>(v.w) << 32) | v.z;
    u64 const idx = static_cast<u64>(i);
    acc += checksum_mix(lo ^ (idx * 0x9E3779B97F4A7C15ull)) + checksum_mix(hi ^ (idx * 0xD1B54A32D192ED03ull));
  }
  atomic_add_u64(out, acc);
}

}  // namespace moetune
