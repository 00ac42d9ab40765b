#pragma once
// Token sorting: groups the M*topk slots by expert and pads each expert's run to block_m,
// exactly as docs/kernel-contract.md fixes it (experts ascending, slots ascending inside an
// expert, padding value M*topk, capacity = topk*M + E*(block_m-1) rounded up to block_m).
//
// sort_ctas_for(M*topk) CTAs (one up to sort_one_cta_slots slots), each owning one contiguous
// chunk of slots. No CTA waits on another, so the result needs no cross-CTA ordering and is
// deterministic:
//   1. each warp counts its contiguous segment of the CTA's chunk per expert
//      (hist[warp][expert]); with several CTAs, every CTA also counts the slots of the chunks
//      before its own and after it (before[e], after[e]): all of topk_ids, read in 16-byte
//      vectors, so that each CTA knows every expert's total and its own chunk's offset in the
//      expert's run without a word from the others;
//   2. padded per-expert totals are scanned into run starts (a scan per warp with shuffles,
//      then over the warps' totals: two barriers; the first version's Hillis-Steele scan in
//      LDS took eighteen); each warp's offset inside an expert's run is the expert's run start
//      plus the earlier chunks' count plus the earlier warps' counts (earlier = lower slots);
//   3. each warp walks its segment again in slot order and scatters, ranking equal experts
//      inside a step by lane (lower lane = lower slot): on NVIDIA the lanes holding the same
//      expert come from one match.any, elsewhere from a loop over the lanes;
//   4. the padding: one CTA pads the whole capacity before step 1 and scatters over it; with
//      several, CTA e % ctas writes expert e's padding entries and block ids after its
//      scatter, and the CTAs share the capacity past the runs.
// At M = 1 the sort is on the critical path of a 30 µs MoE, at M = 512 it took 10 µs: each
// step is written for few barriers and few serial instructions. One CTA took 39.4 µs at
// backbone M = 4096 and 140.7 at M = 16384 (H100, session 30: 2.4 % of the MoE), its warps'
// scatter serial in slot order; several CTAs split that scatter, each paying one read of all
// the ids instead (11.3 and 18.7 µs).
// Limits (checked on the host): E <= sort_max_experts. Expert ids outside [0, E) are
// treated as "not routed" and dropped.
#include "moe_test_break.cuh"
#include "moetune_portability.h"

namespace moetune {

constexpr int sort_threads = 512;
constexpr int sort_max_experts = 512;
constexpr int sort_warps = sort_threads / warp_size;
constexpr int sort_batch = 8;  // warp steps of slot ids loaded at once
constexpr int sort_vec_batch = 8;  // 16-byte vectors of ids each thread loads at once (other chunks)
// The sort's CTA count for n_slots slots: one CTA up to sort_one_cta_slots, then one per
// sort_chunk_slots, at most sort_max_ctas (fewer than an H100's or MI300X's SMs). Each extra
// CTA reads all the ids, so below about 4096 slots one CTA is faster (session 30, H100: EP
// M = 512, 3072 slots, 7.1 us in one CTA, 8.5 in two). The host sizes the grid with the same
// rule (moe::sort_ctas, autotune/moe/sorting.hpp; a unit test compares the constants).
constexpr int sort_one_cta_slots = 4096;
constexpr int sort_chunk_slots = 2048;
constexpr int sort_max_ctas = 128;
MOETUNE_DEV int sort_ctas_for(int n_slots) {
  if (n_slots <= sort_one_cta_slots) return 1;
  int const c = (n_slots + sort_chunk_slots - 1) / sort_chunk_slots;
  return c > sort_max_ctas ? sort_max_ctas : c;
}

// Adds the routed slots of [a, b) to counts[expert] (shared), all threads of the CTA taking
// part: the ids in 16-byte vectors where topk_ids is so aligned, sort_vec_batch of them per
// thread loaded before the first is counted (each CTA of a multi-CTA sort reads all the ids
// once, so this read is what the extra CTAs cost), the ends one id at a time.
MOETUNE_DEV void count_slots(const i32* __restrict__ topk_ids, int a, int b, i32 E, i32* counts) {
  int const tid = static_cast<int>(thread_x());
  auto count = [&](i32 e) {
    if (e >= 0 && e < E) atomic_add_i32(&counts[e], 1);
  };
  bool const vectors = (reinterpret_cast<unsigned long long>(topk_ids) & 15ull) == 0;
  int const head_end = vectors ? ((a + 3) / 4 * 4 < b ? (a + 3) / 4 * 4 : b) : b;
  for (int s = a + tid; s < head_end; s += sort_threads) count(topk_ids[s]);
  if (!vectors) return;
  int const v0 = head_end / 4, v1 = b / 4;  // whole vectors [v0, v1)
  const u32x4* const ids4 = reinterpret_cast<const u32x4*>(topk_ids);
  for (int base = v0; base < v1; base += sort_vec_batch * sort_threads) {
    u32x4 v[sort_vec_batch];
#pragma unroll
    for (int j = 0; j < sort_vec_batch; ++j) {
      int const i = base + j * sort_threads + tid;
      v[j] = i < v1 ? ids4[i] : u32x4{~0u, ~0u, ~0u, ~0u};
    }
#pragma unroll
    for (int j = 0; j < sort_vec_batch; ++j) {
      count(static_cast<i32>(v[j].x));
      count(static_cast<i32>(v[j].y));
      count(static_cast<i32>(v[j].z));
      count(static_cast<i32>(v[j].w));
    }
  }
  int const tail = v1 * 4 > head_end ? v1 * 4 : head_end;
  for (int s = tail + tid; s < b; s += sort_threads) count(topk_ids[s]);
}

// The sort's shared memory, declared by the kernel: the one-CTA form's (exactly what the
// one-CTA sort had before session 30) and the several-CTA form's, which adds the other chunks'
// counts. A kernel that may run either form (moe_sort_multi) declares the larger.
template <bool Multi>
struct SortShared {
  i32 hist[sort_warps][sort_max_experts];
  i32 warp_total[sort_warps];   // each warp's sum of padded totals
  i32 warp_prefix[sort_warps];  // inclusive scan of warp_total
};
template <>
struct SortShared<true> : SortShared<false> {
  i32 before[sort_max_experts];  // slots of the chunks before this CTA's, per expert
  i32 after[sort_max_experts];   // and after it
  i32 used_blocks;               // sorted blocks in use (all experts' padded runs)
};

// The sort's part of CTA `cta` of `ctas` (sort_ctas_for(M * topk); the kernels below and
// moe_upcast_x.cuh's run it in their first CTAs). The caller has joined the kernel chain.
// Multi: ctas > 1. The one-CTA form compiles without the other chunks' counts and the division
// of the slots into chunks: with them in its code (ctas a run-time 1), the sort at backbone
// M = 1 took 2.9 instead of 2.5 µs (session 30, H100), and M = 1 is where the sort is on the
// MoE's critical path.
template <bool Multi, class Shared>
MOETUNE_DEV void sort_body(Shared& sh, const i32* __restrict__ topk_ids, i32 M, i32 topk, i32 E, i32 block_m,
                           i32 capacity, i32* __restrict__ sorted_slots, i32* __restrict__ block_expert,
                           i32* __restrict__ num_blocks, int cta, int ctas) {
  if constexpr (!Multi) cta = 0, ctas = 1;
  auto& hist = sh.hist;
  auto& warp_total = sh.warp_total;
  auto& warp_prefix = sh.warp_prefix;
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  int const n_slots = M * topk;
  // This CTA's chunk [c0, c1) (whole warp steps), then each warp's segment of it.
  int const chunk = Multi ? ((n_slots + ctas - 1) / ctas + warp_size - 1) / warp_size * warp_size : n_slots;
  int const c0 = !Multi ? 0 : cta * chunk < n_slots ? cta * chunk : n_slots;
  int const c1 = !Multi ? n_slots : c0 + chunk < n_slots ? c0 + chunk : n_slots;
  int const seg = ((c1 - c0 + sort_warps - 1) / sort_warps + warp_size - 1) / warp_size * warp_size;
  int const seg_begin = c0 + warp * seg;

  for (int e = tid; e < E; e += sort_threads) {  // only experts < E are read
    for (int w = 0; w < sort_warps; ++w) hist[w][e] = 0;
    if constexpr (Multi) sh.before[e] = 0, sh.after[e] = 0;
  }
  // One CTA pads the whole capacity first and scatters over it (its barriers order the two;
  // the stores drain while it counts). Several CTAs cannot: a CTA's padding could land after
  // another's scatter. They write exactly the padding entries, after their scatter (below).
  if constexpr (!Multi) {
    for (int i = tid; i < capacity; i += sort_threads) sorted_slots[i] = n_slots;
    for (int i = tid; i < capacity / block_m; i += sort_threads) block_expert[i] = -1;
  }
  barrier();

  // 1. per-warp histograms. The ids are read `sort_batch` steps at a time, all loads issued
  // before the first use: one at a time, each step waited a global load's latency (at M =
  // 4096, 48 steps per warp and phase took the sort to 52 µs).
  int const seg_end = seg_begin + seg < c1 ? seg_begin + seg : c1;
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
  if constexpr (Multi) {
    count_slots(topk_ids, 0, c0, E, sh.before);
    count_slots(topk_ids, c1, n_slots, E, sh.after);
  }
  barrier();

  // 2. padded totals, exclusive scan over experts (per warp by shuffles, then the warp
  // totals), per-warp offsets
  static_assert(sort_threads == sort_max_experts, "one thread per expert in the scan");
  int padded = 0, total = 0;
  if (tid < E) {
    if constexpr (Multi) total = sh.before[tid] + sh.after[tid];
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
  int const start = inclusive - padded;  // inclusive -> exclusive (this thread's expert's run)
  if (tid < E) {
    int run = start;
    if constexpr (Multi) run += sh.before[tid];
    for (int w = 0; w < sort_warps; ++w) {
      int const c = hist[w][tid];
      hist[w][tid] = run;
      run += c;
    }
    if constexpr (!Multi)
      for (int b = start / block_m; b < (start + padded) / block_m; ++b) block_expert[b] = tid;
  }
  if (tid == sort_threads - 1) {
    if constexpr (Multi) sh.used_blocks = inclusive / block_m;
    if (cta == 0) num_blocks[0] = inclusive / block_m;
  }
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
  // 4. several CTAs: the padding entries, after the scatter (stores only, so no CTA waits on
  // them): CTA e % ctas writes expert e's padding slots and block ids, and the CTAs share the
  // capacity past the runs (padding slots, block id -1).
  if constexpr (Multi) {
    if (tid < E && tid % ctas == cta) {
      for (int i = start + total; i < start + padded; ++i) sorted_slots[i] = n_slots;
      for (int b = start / block_m; b < (start + padded) / block_m; ++b) block_expert[b] = tid;
    }
    for (int i = sh.used_blocks * block_m + cta * sort_threads + tid; i < capacity; i += ctas * sort_threads)
      sorted_slots[i] = n_slots;
    for (int b = sh.used_blocks + cta * sort_threads + tid; b < capacity / block_m; b += ctas * sort_threads)
      block_expert[b] = -1;
  }
  // TEST ONLY (moe_test_break.cuh): discarded unless a test asked for the bug. After the
  // barrier no thread of this CTA reads topk_ids any more, so where one CTA sorts (the break
  // test's shape) only the input-preservation gate can see it; with several, another CTA may
  // still count the changed id and the sort gate fail too.
  if constexpr (test_break == test_break_corrupt_input) {
    barrier();
    if (cta == 0 && tid == 0 && n_slots > 0) const_cast<i32*>(topk_ids)[0] = (topk_ids[0] + 1) % E;
  }
}

#define MOETUNE_SORT_PARAMS                                                                                \
  const i32 *__restrict__ topk_ids, i32 M, i32 topk, i32 E, i32 block_m, i32 capacity, i32 *__restrict__ sorted_slots, \
      i32 *__restrict__ block_expert, i32 *__restrict__ num_blocks
#define MOETUNE_SORT_ARGS topk_ids, M, topk, E, block_m, capacity, sorted_slots, block_expert, num_blocks

// Two kernels, the host's launch plan naming one by the M it plans for (search/render.cpp):
// moe_sort, one CTA, where that M's slots fit one CTA; moe_sort_multi, sort_ctas_for(M * topk)
// CTAs, beyond. Why two: a kernel holding both forms takes the larger form's registers and LDS
// (52 registers and 37 KB against 39 and 32.9 KB), and with it backbone M = 1 took 27.5 instead
// of 27.0 µs (session 30, H100), its sort the same 2.5-2.6 µs: presumably the stage one's CTAs
// placed beside the sort while it runs (not profiled; this two-kernel form not timed yet).
// The runtime plans a bucket at its largest M and runs it for smaller ones too, so
// moe_sort_multi also takes an M whose slots fit one CTA (its grid's other CTAs return).

// The sort's share of a sort launch (moe_sort, moe_sort_multi and moe_upcast_x.cuh's two): CTA
// block_x() sorts if it is one of the sort's CTAs, which come first. Returns how many that is:
// 1 in the one-CTA form; sort_ctas_for(M * topk) in the several-CTA form, whose grid may hold
// more (planned for a larger M): the one-CTA body where the M needs no more.
template <bool Multi>
MOETUNE_DEV int sort_launch_part(MOETUNE_SORT_PARAMS) {
  __shared__ SortShared<Multi> sh;
  int const ctas = Multi ? sort_ctas_for(M * topk) : 1;
  int const cta = static_cast<int>(block_x());
  if (ctas == 1) {
    if (cta == 0) sort_body<false>(sh, MOETUNE_SORT_ARGS, 0, 1);
  } else if constexpr (Multi) {
    if (cta < ctas) sort_body<true>(sh, MOETUNE_SORT_ARGS, cta, ctas);
  }
  return ctas;
}

// Grid: one CTA of sort_threads.
__global__ void MOETUNE_LAUNCH_BOUNDS(sort_threads, 0) moe_sort(MOETUNE_SORT_PARAMS) {
  join_kernel_chain();  // the previous MoE's kernels may still read sorted_slots
  sort_launch_part<false>(MOETUNE_SORT_ARGS);
}

// Grid: at least sort_ctas_for(M * topk) CTAs of sort_threads; the CTAs past it return.
__global__ void MOETUNE_LAUNCH_BOUNDS(sort_threads, 0) moe_sort_multi(MOETUNE_SORT_PARAMS) {
  join_kernel_chain();
  sort_launch_part<true>(MOETUNE_SORT_ARGS);
}

}  // namespace moetune
