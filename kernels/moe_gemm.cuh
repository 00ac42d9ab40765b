#pragma once
// The grouped-GEMM main loop shared by stage one and stage two.
//
// One CTA computes C[block_m][nv] = A_tile · W_rows^T for one sorted block (one expert):
//   * A rows are gathered by slot (stage one: x[slot / topk]; stage two: h[slot]) into LDS,
//     a k-tile of block_k at a time; padding rows (slot == -1 here) are zeros, never loaded.
//     stages == 2 prefetches the next A k-tile into registers while the current one computes.
//   * Weight rows are read straight from global memory in 16-byte pieces (each lane owns
//     32*kpack consecutive K of one row, see mma_paths.cuh), all of a warp's fragments issued
//     before the first is used, decoded MXFP4 -> bf16 once, in registers.
//   * The result goes to an fp32 tile in LDS for the stage's epilogue.
#include "moe_config.cuh"

namespace moetune {

struct GemmArgs {
  const u8* a;         // activation rows (bf16 or fp8 codes)
  const u8* a_scales;  // a8w4: e8m0 per 32 K of each row
  const u8* w;         // this expert's weight rows (MXFP4 codes or bf16)
  const u8* w_scales;  // this expert's e8m0 scales
  const i32* row_src;  // LDS: source row of each tile row, -1 = padding
  i32 K;               // reduction length (H for stage one, I for stage two)
  i32 n0;              // first virtual weight row of this CTA (stage one: first h column)
  i32 I;               // stage one: intermediate size (gate/up row mapping)
  i32 n_rows;          // stage two: weight rows (H)
  i32 k_begin, k_end;  // K range of this CTA (split-K), multiples of 32
};

// This CTA's sorted block and the first column of its tile: the grid is (blocks, tiles), or
// (tiles, blocks) tile-major (MoeConfig::tile_major).
template <class Cfg>
MOETUNE_DEV int grid_sorted_block() {
  return static_cast<int>(Cfg::tile_major ? block_y() : block_x());
}
template <class Cfg>
MOETUNE_DEV int grid_column0() {
  return static_cast<int>(Cfg::tile_major ? block_x() : block_y()) * Cfg::block_n;
}

// The block's row table, in LDS after the A and C tiles: for each of the block_m rows of
// sorted block `blk`, the source row of the gather — slot / divisor (stage one gathers token
// rows of x: divisor topk; stage two gathers slot rows of h: divisor 1) — or -1 for padding.
// Ends with a barrier, so every thread sees the whole table.
template <class Cfg>
MOETUNE_DEV i32* load_block_rows(u8* smem, const i32* sorted_slots, int blk, int n_slots, int divisor) {
  i32* rows = reinterpret_cast<i32*>(smem + (Cfg::a_bytes > Cfg::c_bytes ? Cfg::a_bytes : Cfg::c_bytes));
  for (int r = static_cast<int>(thread_x()); r < Cfg::block_m; r += Cfg::threads) {
    int const s = sorted_slots[blk * Cfg::block_m + r];
    rows[r] = (s >= 0 && s < n_slots) ? s / divisor : -1;
  }
  barrier();
  return rows;
}

// Physical weight row of a virtual row of this CTA, or -1 when past the matrix.
template <class Cfg>
MOETUNE_DEV int weight_row(const GemmArgs& g, int v) {
  if (Cfg::stage == 1) {
    int const j = g.n0 + (v >> 1);  // h column; virtual rows alternate gate, up
    if (j >= g.I) return -1;
    int const up = v & 1;
    return Cfg::gate_separated ? (up ? g.I + j : j) : 2 * j + up;
  } else {
    int const r = g.n0 + v;
    return r < g.n_rows ? r : -1;
  }
}

// Raw weight fragment of one lane: kpack 16-byte MXFP4 pieces (+ scale bytes), or 4*kpack
// 16-byte bf16 pieces.
template <class Cfg>
struct WeightFrag {
  static constexpr int pieces = Cfg::w_bf16 ? 4 * Cfg::kpack : Cfg::kpack;
  u32x4 raw[pieces];
  u32 scale[Cfg::kpack];
};

template <class Cfg>
MOETUNE_DEV void load_weight_frag(const GemmArgs& g, int row, int k_run, WeightFrag<Cfg>& f) {
#pragma unroll
  for (int p = 0; p < Cfg::kpack; ++p) {
    int const k = k_run + 32 * p;
    bool const ok = row >= 0 && k < g.k_end;
    if (Cfg::w_bf16) {
      const u32x4* src = reinterpret_cast<const u32x4*>(
          g.w + (static_cast<u64>(row) * g.K + k) * 2);
#pragma unroll
      for (int q = 0; q < 4; ++q) f.raw[4 * p + q] = ok ? src[q] : u32x4{0, 0, 0, 0};
      f.scale[p] = 127;
    } else {
      f.raw[p] = ok ? *reinterpret_cast<const u32x4*>(g.w + static_cast<u64>(row) * (g.K / 2) + k / 2)
                    : u32x4{0, 0, 0, 0};
      f.scale[p] = ok ? static_cast<u32>(g.w_scales[static_cast<u64>(row) * (g.K / 32) + k / 32]) : 127u;
    }
  }
}

// Decoded weight run of a lane: 32*kpack bf16 as bf16x2 words, in K order.
template <class Cfg>
MOETUNE_DEV void decode_weight_frag(const WeightFrag<Cfg>& f, u32 (&b)[16 * Cfg::kpack]) {
#pragma unroll
  for (int p = 0; p < Cfg::kpack; ++p) {
    if (Cfg::w_bf16) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        b[16 * p + 4 * q + 0] = f.raw[4 * p + q].x;
        b[16 * p + 4 * q + 1] = f.raw[4 * p + q].y;
        b[16 * p + 4 * q + 2] = f.raw[4 * p + q].z;
        b[16 * p + 4 * q + 3] = f.raw[4 * p + q].w;
      }
    } else {
      u32 d[16];
      decode_mxfp4_16B(f.raw[p], f.scale[p], d);
#pragma unroll
      for (int i = 0; i < 16; ++i) b[16 * p + i] = d[i];
    }
  }
}

// ---- A tile: global -> registers -> LDS ------------------------------------------------------
template <class Cfg>
struct ATileRegs {
  u32x4 v[Cfg::a_vecs_per_thread];
  u32 s[Cfg::a_fp8 ? Cfg::a_vecs_per_thread : 1];  // a8w4 decode: scale byte of each vector
  u32 raw_s[Cfg::a_scales_per_thread > 0 ? Cfg::a_scales_per_thread : 1];
};

template <class Cfg>
MOETUNE_DEV void load_a_tile(const GemmArgs& g, int k0, ATileRegs<Cfg>& r) {
  constexpr int per_row = Cfg::block_k / Cfg::a_vec_elems;
  constexpr int elem_bytes = Cfg::a_fp8 ? 1 : 2;
  int const tid = static_cast<int>(thread_x());
#pragma unroll
  for (int i = 0; i < Cfg::a_vecs_per_thread; ++i) {
    int const idx = tid + i * Cfg::threads;
    int const row = idx / per_row;
    int const k = k0 + (idx % per_row) * Cfg::a_vec_elems;
    int const src = (idx < Cfg::a_vecs) ? g.row_src[row] : -1;
    bool const ok = src >= 0 && k < g.k_end;
    r.v[i] = ok ? *reinterpret_cast<const u32x4*>(g.a + (static_cast<u64>(src) * g.K + k) * elem_bytes)
                : u32x4{0, 0, 0, 0};
    if (Cfg::a_fp8) r.s[i] = ok ? static_cast<u32>(g.a_scales[static_cast<u64>(src) * (g.K / 32) + k / 32]) : 127u;
  }
  if (Cfg::a_raw_fp8) {
    constexpr int spr = Cfg::block_k / 32;
#pragma unroll
    for (int i = 0; i < Cfg::a_scales_per_thread; ++i) {
      int const idx = tid + i * Cfg::threads;
      int const row = idx / spr;
      int const k = k0 + (idx % spr) * 32;
      int const src = (idx < Cfg::a_scales) ? g.row_src[row] : -1;
      r.raw_s[i] = (src >= 0 && k < g.k_end)
                       ? static_cast<u32>(g.a_scales[static_cast<u64>(src) * (g.K / 32) + k / 32])
                       : 127u;
    }
  }
}

template <class Cfg>
MOETUNE_DEV void store_a_tile(u8* smem, const ATileRegs<Cfg>& r) {
  constexpr int per_row = Cfg::block_k / Cfg::a_vec_elems;
  int const tid = static_cast<int>(thread_x());
#pragma unroll
  for (int i = 0; i < Cfg::a_vecs_per_thread; ++i) {
    int const idx = tid + i * Cfg::threads;
    if (idx >= Cfg::a_vecs) break;
    int const row = idx / per_row;
    int const col = (idx % per_row) * Cfg::a_vec_elems;
    if (!Cfg::a_fp8) {
      *reinterpret_cast<u32x4*>(smem + row * Cfg::a_row_bytes + col * 2) = r.v[i];
    } else if (Cfg::a_raw_fp8) {
      *reinterpret_cast<u32x4*>(smem + row * Cfg::a_row_bytes + col) = r.v[i];
    } else {
      // MXFP8 -> bf16 (exact), so the bf16 matrix paths serve A8W4 too.
      float const s = e8m0_to_f32(r.s[i]);
      u32 const w[4] = {r.v[i].x, r.v[i].y, r.v[i].z, r.v[i].w};
      u32 o[8];
#pragma unroll
      for (int q = 0; q < 4; ++q) fp8x4_to_bf16x4<Cfg::fp8>(w[q], s, o[2 * q], o[2 * q + 1]);
      u32x4* dst = reinterpret_cast<u32x4*>(smem + row * Cfg::a_row_bytes + col * 2);
      dst[0] = u32x4{o[0], o[1], o[2], o[3]};
      dst[1] = u32x4{o[4], o[5], o[6], o[7]};
    }
  }
  if (Cfg::a_raw_fp8) {
    constexpr int spr = Cfg::block_k / 32;
    u8* scales = smem + Cfg::block_m * Cfg::a_row_bytes;
#pragma unroll
    for (int i = 0; i < Cfg::a_scales_per_thread; ++i) {
      int const idx = tid + i * Cfg::threads;
      if (idx < Cfg::a_scales) scales[(idx / spr) * spr + idx % spr] = static_cast<u8>(r.raw_s[i]);
    }
  }
}

// ---- The main loop ---------------------------------------------------------------------------
// The weight fragments of one chunk (block of K every lane covers once), all n fragments.
template <class Cfg>
MOETUNE_DEV void load_weight_chunk(const GemmArgs& g, const int (&wrow)[Cfg::nt], int k_run,
                                   WeightFrag<Cfg> (&wf)[Cfg::nt]) {
#pragma unroll
  for (int j = 0; j < Cfg::nt; ++j) load_weight_frag<Cfg>(g, wrow[j], k_run, wf[j]);
}

// acc += A(tile columns a_col.. of this lane's run) x W(chunk), every m and n fragment.
template <class Cfg>
MOETUNE_DEV void mma_chunk(const u8* smem, int lane, int warp_m, int a_col,
                           const WeightFrag<Cfg> (&wf)[Cfg::nt],
                           float (&acc)[Cfg::mt][Cfg::nt][Cfg::mma::ACC]) {
  using T = typename Cfg::mma;
  constexpr int P = Cfg::path;
#pragma unroll
  for (int j = 0; j < Cfg::nt; ++j) {
    if constexpr (T::scaled) {
#pragma unroll
      for (int i = 0; i < Cfg::mt; ++i) {
        int const r = warp_m * Cfg::warp_rows + i * T::MH + a_row<P>(lane);
        const u32x4* ap = reinterpret_cast<const u32x4*>(smem + r * Cfg::a_row_bytes + a_col);
        u32x4 const a0 = ap[0], a1 = ap[1];
        u32 const a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        u32 const sa = smem[Cfg::block_m * Cfg::a_row_bytes + r * (Cfg::block_k / 32) + a_col / 32];
        mfma_scale_f8f4<T::ACC>(acc[i][j], a, wf[j].raw[0], sa, wf[j].scale[0]);
      }
    } else {
      u32 b[16 * Cfg::kpack];
      decode_weight_frag<Cfg>(wf[j], b);
#pragma unroll
      for (int s = 0; s < Cfg::steps; ++s) {
        if constexpr (P == path_fma) {
          float const b0 = bf16_to_f32(static_cast<u16>(b[2 * s] & 0xffffu));
          float const b1 = bf16_to_f32(static_cast<u16>(b[2 * s] >> 16));
          float const b2 = bf16_to_f32(static_cast<u16>(b[2 * s + 1] & 0xffffu));
          float const b3 = bf16_to_f32(static_cast<u16>(b[2 * s + 1] >> 16));
#pragma unroll
          for (int i = 0; i < Cfg::mt; ++i) {
            int const r = warp_m * Cfg::warp_rows + i;
            u32x2 const a = *reinterpret_cast<const u32x2*>(smem + r * Cfg::a_row_bytes + (a_col + 4 * s) * 2);
            float x = acc[i][j][0];
            x += bf16_to_f32(static_cast<u16>(a.x & 0xffffu)) * b0;
            x += bf16_to_f32(static_cast<u16>(a.x >> 16)) * b1;
            x += bf16_to_f32(static_cast<u16>(a.y & 0xffffu)) * b2;
            x += bf16_to_f32(static_cast<u16>(a.y >> 16)) * b3;
            acc[i][j][0] = x;
          }
        } else {
#pragma unroll
          for (int i = 0; i < Cfg::mt; ++i) {
            int const r = warp_m * Cfg::warp_rows + i * T::MH + a_row<P>(lane);
            u32x2 const lo = *reinterpret_cast<const u32x2*>(smem + r * Cfg::a_row_bytes + (a_col + 4 * s) * 2);
            u32x2 hi = lo;
            if (P == path_sm80)
              hi = *reinterpret_cast<const u32x2*>(smem + (r + 8) * Cfg::a_row_bytes + (a_col + 4 * s) * 2);
            mma_bf16_step<P>(acc[i][j], lo, hi, b[2 * s], b[2 * s + 1]);
          }
        }
      }
    }
  }
}

// Accumulators (tokens on the MMA's M side, warp tile warp_m x warp_n) -> the fp32 tile
// C[block_m][c_stride] in LDS, reusing the main loop's buffers: barriers before (readers of
// those buffers are done) and after (the epilogue sees the whole tile).
template <class Cfg, int P>
MOETUNE_DEV void store_accumulators(u8* smem, const float (&acc)[Cfg::mt][Cfg::nt][MmaTraits<P>::ACC], int lane,
                                    int warp_m, int warp_n) {
  using T = MmaTraits<P>;
  barrier();
  float* ct = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int i = 0; i < Cfg::mt; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::nt; ++j)
#pragma unroll
      for (int a = 0; a < T::ACC; ++a) {
        int rr, cc;
        acc_coord<P>(lane, a, rr, cc);
        int const row = warp_m * Cfg::warp_rows + i * T::MH + rr;
        int const col = (warp_n * Cfg::nt + j) * T::FW + cc;
        ct[row * Cfg::c_stride + col] = acc[i][j][a];
      }
  barrier();
}

// stages == 3: the weights of a whole k-tile, all chunks, held in registers.
template <class Cfg>
struct WeightTile {
  WeightFrag<Cfg> f[Cfg::chunks][Cfg::nt];
};

template <class Cfg>
MOETUNE_DEV void load_weight_tile(const GemmArgs& g, const int (&wrow)[Cfg::nt], int k0, int kg,
                                  WeightTile<Cfg>& t) {
#pragma unroll
  for (int c = 0; c < Cfg::chunks; ++c) load_weight_chunk<Cfg>(g, wrow, k0 + c * Cfg::chunk + kg * Cfg::run, t.f[c]);
}

// One k-tile of the stages == 3 pipeline: publish the A tile loaded one tile ago, issue the
// next tile's A and weight loads (they travel while this tile computes), compute this tile
// from weights that were issued one whole tile earlier.
template <class Cfg>
MOETUNE_DEV void pipelined_tile(const GemmArgs& g, u8* smem, int k0, int lane, int warp_m, int kg,
                                const int (&wrow)[Cfg::nt], ATileRegs<Cfg>& ar, const WeightTile<Cfg>& cur,
                                WeightTile<Cfg>& next, float (&acc)[Cfg::mt][Cfg::nt][Cfg::mma::ACC]) {
  barrier();  // previous tile's readers are done
  store_a_tile<Cfg>(smem, ar);
  barrier();
  if (k0 + Cfg::block_k < g.k_end) {
    load_a_tile<Cfg>(g, k0 + Cfg::block_k, ar);
    load_weight_tile<Cfg>(g, wrow, k0 + Cfg::block_k, kg, next);
  }
#pragma unroll
  for (int c = 0; c < Cfg::chunks; ++c) mma_chunk<Cfg>(smem, lane, warp_m, c * Cfg::chunk + kg * Cfg::run, cur.f[c], acc);
}

// acc[mt][nt][ACC]; on return the tile is in LDS as fp32 C[block_m][c_stride] (after a barrier).
//   stages 1: A tile loaded after the previous tile computed; weights loaded chunk by chunk.
//   stages 2: the next A tile is prefetched into registers while this one computes.
//   stages 3: the next A tile *and* the next tile's weights are prefetched (double-buffered
//             in registers), so a whole tile of weight bytes is in flight per warp at all times.
template <class Cfg>
MOETUNE_DEV void gemm_tile(const GemmArgs& g, u8* smem) {
  using T = typename Cfg::mma;
  constexpr int P = Cfg::path;
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  int const warp_m = warp / Cfg::warps_n;
  int const warp_n = warp % Cfg::warps_n;
  int const kg = frag_kgroup<P>(lane);
  int const frow = frag_row<P>(lane);

  float acc[Cfg::mt][Cfg::nt][T::ACC];
#pragma unroll
  for (int i = 0; i < Cfg::mt; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::nt; ++j)
#pragma unroll
      for (int a = 0; a < T::ACC; ++a) acc[i][j][a] = 0.0f;

  int wrow[Cfg::nt];
#pragma unroll
  for (int j = 0; j < Cfg::nt; ++j) wrow[j] = weight_row<Cfg>(g, (warp_n * Cfg::nt + j) * T::FW + frow);

  ATileRegs<Cfg> ar;
  load_a_tile<Cfg>(g, g.k_begin, ar);
  if constexpr (Cfg::stages == 3) {
    WeightTile<Cfg> w0, w1;
    load_weight_tile<Cfg>(g, wrow, g.k_begin, kg, w0);
    // Unrolled by two so both register buffers keep static names.
    for (int k0 = g.k_begin; k0 < g.k_end; k0 += 2 * Cfg::block_k) {
      pipelined_tile<Cfg>(g, smem, k0, lane, warp_m, kg, wrow, ar, w0, w1, acc);
      if (k0 + Cfg::block_k >= g.k_end) break;
      pipelined_tile<Cfg>(g, smem, k0 + Cfg::block_k, lane, warp_m, kg, wrow, ar, w1, w0, acc);
    }
  } else {
    for (int k0 = g.k_begin; k0 < g.k_end; k0 += Cfg::block_k) {
      barrier();  // previous tile's readers are done
      store_a_tile<Cfg>(smem, ar);
      barrier();
      bool const more = k0 + Cfg::block_k < g.k_end;
      if (Cfg::stages > 1 && more) load_a_tile<Cfg>(g, k0 + Cfg::block_k, ar);

#pragma unroll 1
      for (int c = 0; c < Cfg::block_k; c += Cfg::chunk) {
        WeightFrag<Cfg> wf[Cfg::nt];
        load_weight_chunk<Cfg>(g, wrow, k0 + c + kg * Cfg::run, wf);
        mma_chunk<Cfg>(smem, lane, warp_m, c + kg * Cfg::run, wf, acc);
      }
      if (Cfg::stages == 1 && more) load_a_tile<Cfg>(g, k0 + Cfg::block_k, ar);
    }
  }

  store_accumulators<Cfg, P>(smem, acc, lane, warp_m, warp_n);
}

}  // namespace moetune
