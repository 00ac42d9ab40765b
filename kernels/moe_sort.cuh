#pragma once
// Token sorting: groups the M*topk slots by expert and pads each expert's run to block_m,
// exactly as docs/kernel-contract.md fixes it (experts ascending, slots ascending inside an
// expert, padding value M*topk, capacity = topk*M + E*(block_m-1) rounded up to block_m).
//
// One CTA, so the result needs no cross-CTA ordering and is deterministic:
//   1. each warp counts its contiguous segment of slots per expert (hist[warp][expert]);
//   2. padded per-expert totals are scanned into run starts (a scan per warp with shuffles,
//      then over the warps' totals: two barriers; the first version's Hillis-Steele scan in
//      LDS took eighteen); each warp's offset inside an expert's run is the sum of the earlier
//      warps' counts (earlier segments = lower slots);
//   3. each warp walks its segment again in slot order and scatters, ranking equal experts
//      inside a step by lane (lower lane = lower slot): on NVIDIA the lanes holding the same
//      expert come from one match.any, elsewhere from a loop over the lanes.
// At M = 1 the sort is on the critical path of a 30 µs MoE, at M = 512 it took 10 µs: each
// step is written for few barriers and few serial instructions.
// Limits (checked on the host): E <= sort_max_experts. Expert ids outside [0, E) are
// treated as "not routed" and dropped.
#include "moe_test_break.cuh"
#include "moetune_portability.h"

namespace moetune {

constexpr int sort_threads = 512;
constexpr int sort_max_experts = 512;
constexpr int sort_warps = sort_threads / warp_size;
constexpr int sort_batch = 8;  // warp steps of slot ids loaded at once

// The sort itself, by one CTA of sort_threads threads (moe_sort below; moe_upcast_x.cuh's
// moe_sort_upcast_x runs it in its first CTA). The caller has joined the kernel chain.
MOETUNE_DEV void sort_body(const i32* __restrict__ topk_ids, i32 M, i32 topk, i32 E, i32 block_m, i32 capacity,
                           i32* __restrict__ sorted_slots, i32* __restrict__ block_expert,
                           i32* __restrict__ num_blocks) {
  __shared__ i32 hist[sort_warps][sort_max_experts];
  __shared__ i32 warp_total[sort_warps];   // each warp's sum of padded totals
  __shared__ i32 warp_prefix[sort_warps];  // inclusive scan of warp_total
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  int const n_slots = M * topk;
  int const seg = ((n_slots + sort_warps - 1) / sort_warps + warp_size - 1) / warp_size * warp_size;
  int const seg_begin = warp * seg;

  for (int e = tid; e < E; e += sort_threads)  // only experts < E are read
    for (int w = 0; w < sort_warps; ++w) hist[w][e] = 0;
  for (int i = tid; i < capacity; i += sort_threads) sorted_slots[i] = n_slots;
  for (int i = tid; i < capacity / block_m; i += sort_threads) block_expert[i] = -1;
  barrier();

  // 1. per-warp histograms. The ids are read `sort_batch` steps at a time, all loads issued
  // before the first use: one at a time, each step waited a global load's latency (at M =
  // 4096, 48 steps per warp and phase took the sort to 52 µs).
  int const seg_end = seg_begin + seg < n_slots ? seg_begin + seg : n_slots;
  // One batch of the warp's ids from `base` (-1 past its segment), every load issued first.
  auto load_batch = [&](int base, int (&ids)[sort_batch]) {
#pragma unroll
    for (int j = 0; j < sort_batch; ++j) {
      int const s = base + j * warp_size + lane;
      ids[j] = s < seg_end ? topk_ids[s] : -1;
    }
  };
  for (int base = seg_begin; base < seg_end; base += sort_batch * warp_size) {
    int e[sort_batch];
    load_batch(base, e);
#pragma unroll
    for (int j = 0; j < sort_batch; ++j)
      if (e[j] >= 0 && e[j] < E) atomic_add_i32(&hist[warp][e[j]], 1);
  }
  barrier();

  // 2. padded totals, exclusive scan over experts (per warp by shuffles, then the warp
  // totals), per-warp offsets
  static_assert(sort_threads == sort_max_experts, "one thread per expert in the scan");
  int padded = 0;
  {
    int total = 0;
    if (tid < E)
      for (int w = 0; w < sort_warps; ++w) total += hist[w][tid];
    padded = (total + block_m - 1) / block_m * block_m;
  }
  int inclusive = padded;
  for (int d = 1; d < warp_size; d <<= 1) {
    int const v = shfl_idx(inclusive, lane >= d ? lane - d : lane);
    if (lane >= d) inclusive += v;
  }
  if (lane == warp_size - 1) warp_total[warp] = inclusive;
  barrier();
  if (warp == 0) {
    int t = lane < sort_warps ? warp_total[lane] : 0;
    for (int d = 1; d < sort_warps; d <<= 1) {
      int const v = shfl_idx(t, lane >= d ? lane - d : lane);
      if (lane >= d) t += v;
    }
    if (lane < sort_warps) warp_prefix[lane] = t;
  }
  barrier();
  inclusive += warp > 0 ? warp_prefix[warp - 1] : 0;
  if (tid < E) {
    int const start = inclusive - padded;  // inclusive -> exclusive
    int run = start;
    for (int w = 0; w < sort_warps; ++w) {
      int const c = hist[w][tid];
      hist[w][tid] = run;
      run += c;
    }
    for (int b = start / block_m; b < (start + padded) / block_m; ++b) block_expert[b] = tid;
  }
  if (tid == sort_threads - 1) num_blocks[0] = inclusive / block_m;
  barrier();

  // 3. scatter in slot order (a batch's ids loaded first, then its steps in order)
  for (int base = seg_begin; base < seg_end; base += sort_batch * warp_size) {
    int ids[sort_batch];
    load_batch(base, ids);
#pragma unroll
    for (int j = 0; j < sort_batch; ++j) {
      if (base + j * warp_size >= seg_end) break;  // the same for every lane of the warp
      int const s = base + j * warp_size + lane;
      int const e = ids[j] >= 0 && ids[j] < E ? ids[j] : -1;
      int rank = 0, count = 0;  // lanes before this one with the same expert; all lanes with it
#if defined(MOETUNE_CUDA)
      u32 peers;
      asm volatile("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(peers) : "r"(e));
      rank = __popc(peers & ((1u << lane) - 1u));
      count = __popc(peers);
#else
      for (int other = 0; other < warp_size; ++other) {
        if (shfl_idx(e, other) == e) {
          count += 1;
          rank += other < lane ? 1 : 0;
        }
      }
#endif
      if (e >= 0) sorted_slots[hist[warp][e] + rank] = s;
      warp_sync();  // everyone has read hist before the leader advances it
      if (e >= 0 && rank == 0) hist[warp][e] += count;
      warp_sync();
    }
  }
  // TEST ONLY (moe_test_break.cuh): discarded unless a test asked for the bug. After the
  // barrier no thread reads topk_ids any more, so only the input-preservation gate can see it.
  if constexpr (test_break == test_break_corrupt_input) {
    barrier();
    if (tid == 0 && n_slots > 0) const_cast<i32*>(topk_ids)[0] = (topk_ids[0] + 1) % E;
  }
}

#define MOETUNE_SORT_PARAMS                                                                                \
  const i32 *__restrict__ topk_ids, i32 M, i32 topk, i32 E, i32 block_m, i32 capacity, i32 *__restrict__ sorted_slots, \
      i32 *__restrict__ block_expert, i32 *__restrict__ num_blocks
#define MOETUNE_SORT_ARGS topk_ids, M, topk, E, block_m, capacity, sorted_slots, block_expert, num_blocks

__global__ void MOETUNE_LAUNCH_BOUNDS(sort_threads, 0) moe_sort(MOETUNE_SORT_PARAMS) {
  join_kernel_chain();  // the previous MoE's kernels may still read sorted_slots
  sort_body(MOETUNE_SORT_ARGS);
}

}  // namespace moetune
