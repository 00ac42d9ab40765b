#pragma once
// Token sorting: groups the M*topk slots by expert and pads each expert's run to block_m,
// exactly as docs/kernel-contract.md fixes it (experts ascending, slots ascending inside an
// expert, padding value M*topk, capacity = topk*M + E*(block_m-1) rounded up to block_m).
//
// One CTA, so the result needs no cross-CTA ordering and is deterministic:
//   1. each warp counts its contiguous segment of slots per expert (hist[warp][expert]);
//   2. padded per-expert totals are scanned into run starts; each warp's offset inside an
//      expert's run is the sum of the earlier warps' counts (earlier segments = lower slots);
//   3. each warp walks its segment again in slot order and scatters, ranking equal experts
//      inside a step by lane (lower lane = lower slot).
// Limits (checked on the host): E <= sort_max_experts. Expert ids outside [0, E) are
// treated as "not routed" and dropped.
#include "moe_test_break.cuh"
#include "moetune_portability.h"

namespace moetune {

constexpr int sort_threads = 512;
constexpr int sort_max_experts = 512;
constexpr int sort_warps = sort_threads / warp_size;

__global__ void MOETUNE_LAUNCH_BOUNDS(sort_threads, 0)
    moe_sort(const i32* __restrict__ topk_ids, i32 M, i32 topk, i32 E, i32 block_m, i32 capacity,
             i32* __restrict__ sorted_slots, i32* __restrict__ block_expert, i32* __restrict__ num_blocks) {
  __shared__ i32 hist[sort_warps][sort_max_experts];
  __shared__ i32 scan[sort_max_experts];
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  int const n_slots = M * topk;
  int const seg = ((n_slots + sort_warps - 1) / sort_warps + warp_size - 1) / warp_size * warp_size;
  int const seg_begin = warp * seg;

  for (int i = tid; i < sort_warps * sort_max_experts; i += sort_threads) (&hist[0][0])[i] = 0;
  for (int i = tid; i < capacity; i += sort_threads) sorted_slots[i] = n_slots;
  for (int i = tid; i < capacity / block_m; i += sort_threads) block_expert[i] = -1;
  barrier();

  // 1. per-warp histograms
  for (int base = seg_begin; base < seg_begin + seg; base += warp_size) {
    int const s = base + lane;
    int const e = s < n_slots ? topk_ids[s] : -1;
    if (e >= 0 && e < E) atomic_add_i32(&hist[warp][e], 1);
  }
  barrier();

  // 2. padded totals, exclusive scan over experts (Hillis-Steele in LDS), per-warp offsets
  int padded = 0;
  if (tid < sort_max_experts) {
    int total = 0;
    if (tid < E)
      for (int w = 0; w < sort_warps; ++w) total += hist[w][tid];
    padded = (total + block_m - 1) / block_m * block_m;
    scan[tid] = padded;
  }
  barrier();
  for (int d = 1; d < sort_max_experts; d <<= 1) {
    int v = 0;
    if (tid < sort_max_experts && tid >= d) v = scan[tid - d];
    barrier();
    if (tid < sort_max_experts) scan[tid] += v;
    barrier();
  }
  if (tid < E) {
    int const start = scan[tid] - padded;  // inclusive -> exclusive
    int run = start;
    for (int w = 0; w < sort_warps; ++w) {
      int const c = hist[w][tid];
      hist[w][tid] = run;
      run += c;
    }
    for (int b = start / block_m; b < (start + padded) / block_m; ++b) block_expert[b] = tid;
  }
  if (tid == 0) num_blocks[0] = scan[sort_max_experts - 1] / block_m;
  barrier();

  // 3. scatter in slot order
  for (int base = seg_begin; base < seg_begin + seg; base += warp_size) {
    int const s = base + lane;
    int e = s < n_slots ? topk_ids[s] : -1;
    if (e < 0 || e >= E) e = -1;
    int rank = 0, count = 0;
    for (int j = 0; j < warp_size; ++j) {
      int const ej = shfl_idx(e, j);
      if (ej == e) {
        count += 1;
        rank += j < lane ? 1 : 0;
      }
    }
    if (e >= 0) sorted_slots[hist[warp][e] + rank] = s;
    warp_sync();  // everyone has read hist before the leader advances it
    if (e >= 0 && rank == 0) hist[warp][e] += count;
    warp_sync();
  }
  // TEST ONLY (moe_test_break.cuh): discarded unless a test asked for the bug. After the
  // barrier no thread reads topk_ids any more, so only the input-preservation gate can see it.
  if constexpr (test_break == test_break_corrupt_input) {
    barrier();
    if (tid == 0 && n_slots > 0) const_cast<i32*>(topk_ids)[0] = (topk_ids[0] + 1) % E;
  }
}

}  // namespace moetune
