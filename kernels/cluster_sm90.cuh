#pragma once
// Thread-block clusters (sm_90): the CTAs of one cluster run at the same time on one GPC and
// can read each other's shared memory (distributed shared memory). Stage one's split-K
// (kernels/moe_stage1.cuh, Cfg::ksplit > 1) uses them to add the K-range partial sums of its
// `ksplit` CTAs without a global workspace, counters or another launch: each CTA leaves its
// fp32 C tile in its own LDS, the cluster barrier publishes them, each CTA reads all of them
// for its share of the epilogue, and a second barrier keeps every tile alive until read.
// Elsewhere (HIP, NVIDIA before sm_90) the validity rules never select split-K stage one;
// these wrappers trap there and the cluster-shape attribute is empty.
#include "moetune_portability.h"

#if defined(MOETUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MOETUNE_SM90_CLUSTERS 1
#endif

// The compile-time cluster shape of a kernel (launched with any grid whose dims it divides).
#if defined(MOETUNE_CUDA)
#define MOETUNE_CLUSTER_DIMS(x, y, z) __cluster_dims__((x), (y), (z))
#else
#define MOETUNE_CLUSTER_DIMS(x, y, z)
#endif

namespace moetune {

#if defined(MOETUNE_SM90_CLUSTERS)
// Every thread of every CTA of the cluster: the shared-memory writes before it (release) are
// visible to the reads after it (acquire) in any CTA of the cluster.
MOETUNE_DEV void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The shared::cluster address of `local` (this CTA's shared-window address) in CTA `rank`.
MOETUNE_DEV u32 cluster_map_shared(u32 local, u32 rank) {
  u32 out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(local), "r"(rank));
  return out;
}
MOETUNE_DEV f32x4 load_cluster_f32x4(u32 addr) {
  f32x4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
#else
MOETUNE_DEV void cluster_barrier() { trap_kernel(); }
MOETUNE_DEV u32 cluster_map_shared(u32 local, u32) { trap_kernel(); return local; }
MOETUNE_DEV f32x4 load_cluster_f32x4(u32) {
  trap_kernel();
  return f32x4{0, 0, 0, 0};
}
#endif

// The fp32 C tiles of the Ranks CTAs of a split-K cluster (each at the same offset of its own
// shared memory): sum4(i) is floats i..i+3 (16-byte aligned) added over the ranks in rank
// order, so every CTA that reads an element gets the same sum.
template <int Ranks>
struct ClusterTileSum {
  u32 base[Ranks];  // shared::cluster address of each rank's tile
  MOETUNE_DEV explicit ClusterTileSum(const float* tile) {
#if defined(MOETUNE_CUDA)
    u32 const local = static_cast<u32>(__cvta_generic_to_shared(tile));
#else
    u32 const local = 0;
    (void)tile;
#endif
#pragma unroll
    for (int r = 0; r < Ranks; ++r) base[r] = cluster_map_shared(local, static_cast<u32>(r));
  }
  MOETUNE_DEV f32x4 sum4(int i) const {
    f32x4 s = load_cluster_f32x4(base[0] + 4u * static_cast<u32>(i));
#pragma unroll
    for (int r = 1; r < Ranks; ++r) {
      f32x4 const v = load_cluster_f32x4(base[r] + 4u * static_cast<u32>(i));
      s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    return s;
  }
};

}  // namespace moetune
