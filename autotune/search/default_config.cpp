#include "autotune/search/default_config.hpp"

#include <algorithm>
#include <optional>

#include "autotune/search/render.hpp"
#include "autotune/search/validity.hpp"

namespace moetune::search {

namespace {

// The knobs the sm_90 main loops below share on both stages.
void both_stages(DefaultConfigs& d, int block_m, bool swapped, bool staged) {
  for (auto* s : {&d.stage1, &d.stage2}) {
    s->swap_ab = swapped;
    s->staged = staged;
    s->block_m = block_m;
    s->kpack = 1;
    s->nonkdim = 16;
    s->ksplit = 1;
  }
}

// The heuristic above suits the usual shapes; for unusual dims (a reduction shorter than
// block_k, a width the tile does not fit) step down to the nearest valid tile, in a fixed
// order, so that the baseline exists for every shape the tool accepts: shorter block_k first,
// then narrower block_n, then the FMA fallback with its smallest tile.
// The repacked MXFP4 layout with an occupancy hint, for one stage of an sm_90 default: taken
// where the rules accept it (the LDS must allow `waves` CTAs per SM), else the stage stays as
// it was. Returns whether it was taken.
bool prefer_repacked(KernelConfig& c, int waves, Arch arch, const moe::MoeShape& shape) {
  KernelConfig trial = c;
  trial.repacked = true;
  trial.waves = waves;
  if (check_config(trial, arch, shape)) return false;
  c = trial;
  return true;
}

// The sm_90a wgmma pair for `per_expert` tokens per expert (kernels/moe_wgmma_gemm.cuh), or
// nullopt where the rules refuse it for this shape (K not in 64s; A8W4: in 128s and whole
// k-tiles). Measured on the H200 (results/sm_90/2026-12-02-h200-s10/probes/p5) against the
// session-9 default: backbone M = 64 / 512 / 4096 589 / 1037 / 3479 -> 485 / 858 / 2324 us,
// draft M = 8 / 64 / 512 / 4096 74 / 263 / 394 / 1681 -> 64 / 216 / 338 / 1085, EP M = 8 / 64 /
// 512 / 4096 315 / 862 / 1667 / 7325 -> 275 / 657 / 1084 / 5742, A8W4 backbone M = 64 / 512
// 685 / 1094 -> 481 / 919 (M = 4096 3948 -> 3933). 8-token blocks below 3 tokens per expert,
// 16-token blocks below 16, then 64-token blocks (32-token ones were never the fastest); two
// warpgroups per CTA (each token row brought into LDS serves 128 weight rows: 858 vs 887 us
// at backbone M = 512, 533 vs 558 at M = 64), rings of 4 k-tiles (6 lost to the occupancy
// their LDS costs: 933 vs 858).
// Session 11 (results/sm_90/2026-12-02-h200-s11: the 16-bucket tune, then probe_d's bench of
// what it found): A16W4 keeps 8-token blocks up to 6 tokens per expert, and their stage one
// takes one warpgroup of 32 weight rows (4 warps, block_n 32) instead of two of 64: backbone
// M = 4 / 8 / 64 / 192 / 320 66.1 / 113.0 / 489.0 / 787.3 (16-token) / 832.8 (16-token) ->
// 65.2 / 109.7 / 474.9 / 706.3 / 786.8 us; draft M = 8 / 64 / 192 64.4 / 216.4 / 290.5 ->
// 63.3 / 209.7 / 263.4; EP M = 1 / 8 / 64 64.4 / 276.2 / 692.7 -> 63.7 / 260.1 / 646.0 (at 8
// and 12 tokens per expert the 16-token pair stays ahead: backbone M = 512 861.5 vs 1023.0,
// draft M = 320 301.7 vs 344.8). Twice the CTAs per expert where few tokens leave most SMs
// idle. A8W4 keeps the thresholds it was measured with (8-token blocks below 3).
// Session 12 (results/sm_90/2026-12-02-h200-s12/overlap_a, a8w4_low_*): A8W4's 8-token blocks
// take the one-warpgroup stage one too, with 128-K tiles: backbone M = 1 / 4 / 8 48.5 (fragment
// decode) / 88.0 (fragment decode) / 108.4 (two warpgroups) -> 32.5 / 61.8 / 105.4 us, draft
// 45.2 / 55.5 / 58.4 -> 31.0 / 39.8 / 59.6, EP 84.6 / 155.3 / 267.0 -> 59.2 / 151.1 / 248.4.
std::optional<DefaultConfigs> wgmma_default(const DefaultConfigs& base, double per_expert, Arch arch,
                                            const moe::MoeShape& shape) {
  bool const a16w4 = shape.dtype == DtypePath::a16w4;
  // A16W4 from 128 tokens per expert where I is long (stage two reduces 16 or more 128-K
  // k-tiles): 128-token blocks on three warpgroups (below, session 29).
  bool const long_stage2_k = shape.inter >= 16 * 128;
  bool const three_warpgroups = a16w4 && per_expert >= 128 && long_stage2_k;
  int const bm = per_expert < (a16w4 ? 6 : 3) ? 8 : per_expert < 16 ? 16 : three_warpgroups ? 128 : 64;
  DefaultConfigs d = base;
  both_stages(d, bm, false, false);
  for (KernelConfig* s : {&d.stage1, &d.stage2}) {
    s->wgmma = true;
    s->fragment_decode = false;
    s->repacked = false;
    s->warps = 8;
    s->block_n = wgmma_block_n(s->stage, s->warps);
    s->block_k = 128;
    s->stages = 4;
    s->waves = 0;
    s->stage2_mode = Stage2Mode::atomic;
  }
  if (bm == 8) {
    d.stage1.warps = 4;
    d.stage1.block_n = 32;
  }
  if (bm < 64) d.stage1.block_k = 256;  // fewer, longer k-tiles where the MMAs are short
  // A8W4's one-warpgroup 8-token stage one: 128-K tiles (session 12's a8w4_low: backbone
  // M = 8 105.4 us with them; two warpgroups 108.4 with 256-K tiles, 105.2 with 128-K).
  if (!a16w4 && bm == 8) d.stage1.block_k = 128;
  if (check_config(d.stage1, arch, shape)) d.stage1.block_k = 128;  // A8W4: whole k-tiles
  if (check_config(d.stage1, arch, shape) || check_config(d.stage2, arch, shape)) return std::nullopt;
  // Session 15 (results/sm_90/2026-12-03-h200-s15, p1 and p2, A16W4): with session 14's k loop
  // the small blocks gain from more CTAs per SM over deeper rings. From 0.15 tokens per expert
  // (from 4 since session 39, below) the 8-token stage one takes two warpgroups again with a
  // ring of 3 (48 registers, 3 CTAs per SM; ring of 4: 110 registers, 2), and from 0.1 its
  // stage two waves 4 with a ring of 3 (53 instead of 78 registers, 4 CTAs per SM instead of
  // 3): backbone M = 64 456 -> 425 us, draft M = 8 / 64 59.3 / 201.3 -> 56.3 / 184.0, EP
  // M = 8 / 64 243.3 / 621.8 -> 230.0 / 571.7 (means of two rounds). Below those, the
  // one-warpgroup stage one and the unbounded stage two stay ahead: backbone M = 8 (0.125)
  // stage one 62.9 vs 68-70 us, EP M = 1 (0.0625) stage two 20.2 vs 22.5, draft M = 1 7.0 vs
  // 8.5. The 16-token pair takes rings of 3 in both stages: backbone M = 512 stage one 481 ->
  // 446 us, draft M = 256 / 512 162 / 180 -> 152 / 171, stage two 1-3 % (311 -> 309, 120.7 ->
  // 117.3); the 64-token pair too (p3, M = 4096, the same 108 registers, 75 instead of 100 KB
  // of LDS per CTA): backbone / draft / EP 2231 / 1060 / 5633 -> 2194 / 1015 / 5291 us. A8W4
  // keeps its kernels as measured in session 12 (its k loop and launch bound differ).
  // Each stage takes its change only where the rules accept it for this shape.
  // Session 18 (results/sm_90/2026-12-04-h200-s18/p3, two rounds in swapped order): the
  // kernels whose 64-K decode ptxas serialises for want of registers (C7511 / C7512: the
  // 8-token two-warpgroup stage one at 48 registers, the 8- and 16-token stage two at 53-55)
  // take the k16 decode, which keeps their wgmmas asynchronous at as few registers: stage two
  // backbone M = 8 / 64 / 512 36.8 / 177.1 / 303.9 -> 34.8 / 161.8 / 292.8 us, draft M = 64
  // 73.5 -> 68.9, EP M = 8 85.7 -> 82.2; stage one backbone M = 64 263.4 -> 251.6, draft 109.0
  // -> 106.4, EP M = 8 144.6 -> 140.9. Where the 64-K form is not serialised it stays: the
  // one-warpgroup 8-token stage one (M = 1 / 8 17.0 / 62.0 -> 17.7 / 64.4 with k16), the
  // 16-token stage one (M = 512 469 -> 486), the 64-token pair (M = 4096 +1 %) and the
  // unbounded 8-token stage two of M = 1 (8.7 -> 8.9).
  // Session 20 (results/sm_90/2026-12-04-h200-s20/p1, p2): Nsight Compute put EP M = 4096's
  // 64-token stage one at 2 CTAs of 8 warps per SM (25 % occupancy; both the 108 registers
  // and the 76 KB ring allowed no more), the tensor pipe 46 % and the issue slots 51 % busy,
  // its warps waiting on fixed-latency dependencies, dispatch, L1TEX and the k-tile barrier.
  // With the ring's token rows and weight parts apart (moe_config.cuh) three CTAs fit in LDS,
  // and with the k16 decode ptxas holds 80 registers under a launch bound of 3 (waves 3):
  // 37.5 % occupancy. Whole MoE, two rounds where measured twice: EP M = 512 993.7 / 987.5
  // -> 947.4 / 945.3 us, M = 4096 5174 / 5225 -> 5119 / 5157; draft M = 4096 955.5 -> 902.8;
  // backbone M = 4096 2072 -> 1951, M = 16384 6885 -> 6450. (The k16 decode alone, two CTAs,
  // was level or slower: 998.8, 5259, 964.6, 2087, 6949.)
  // Session 24 (results/sm_90/2026-12-05-s24, H100; p1-p3, two rounds in reverse order where
  // named): the bounded 8-token stage two (from 0.1 tokens per expert) takes one warpgroup
  // (block_n 64: twice the CTAs of 4 warps, each with its own ring) instead of two. At I = 640
  // (p3, default -> one warpgroup, us): backbone M = 8 / 64 / 128 108.8 / 517.4 / 683.3 ->
  // 107.4 / 515.1 / 677.6 (round 2: 108.3 / 519.3 / 683.4 -> 107.9 / 513.8 / 677.8), draft
  // 60.4 / 224.0 / 273.3 -> 59.5 / 220.5 / 271.1 (60.4 / 221.9 / 273.4 -> 59.5 / 221.3 /
  // 270.8): about 1 %, every pair. Where stage two reduces a long K (EP's I = 2304: a CTA's 18
  // 128-K k-tiles in a row) it also splits K in 2 (grid z, atomic) from 0.2 tokens per expert:
  // EP M = 4 / 8 / 32 / 64 (p3) 174.0 / 291.3 / 605.5 / 662.9 -> 162.1 / 279.6 / 595.2 / 658.6
  // (174.3 / 290.7 / 607.5 / 662.9 -> 162.0 / 280.9 / 595.2 / 658.5), M = 16 (p2) 437.4 / 436.2
  // -> 434.3 / 434.5. At M = 2 (0.125) the split lost (p2: 99.5 -> 101.3; one warpgroup
  // unsplit 99.3), two warpgroups split gained less (167.2 at M = 4) and lost from M = 16;
  // at I = 640 (5 k-tiles) every split of the stage two lost (backbone M = 2 40.7 -> 44.4 at
  // ks2, 50.9 at ks5, p1): a split repeats each CTA's set-up and adds its atomics, so it pays
  // only where the K loop is long. Below 0.1 (the unbounded 8-token stage two) one warpgroup
  // won and lost by turns in p1's single round, so it stays as it was. (The 16-token stage two
  // as one warpgroup gained about 1 % too, p4: backbone M = 512 896.1 / 893.2 -> 884.6 /
  // 885.6, draft M = 512 339.2 / 339.2 -> 335.1 / 335.0, EP M = 128 739.9 / 740.5 -> 737.2 /
  // 736.3. Measured after that session's last [gpu] suite run, it was taken in session 26,
  // whose [gpu] suite passed with it: 2380 assertions, results/sm_90/2026-12-05-s26/c1_gpu.)
  // Session 27 (results/sm_90/2026-12-06-s27/c2_st4_s1w4, H100, two rounds in reverse order, whole
  // MoE, us): the 16-token stage one takes a ring of 4 again from 7 tokens per expert. Since
  // session 20's ring layout the rings of 3 and 4 both hold 2 CTAs per SM (114 registers; in
  // session 15, before it, the ring of 3 won on the H200 by the occupancy), and the fourth
  // k-tile in flight pays: backbone M = 512 (8 per expert) 891.6 / 888.2 -> 886.2 / 883.8, EP
  // M = 128 (8) 737.6 / 737.7 -> 730.8 / 730.5, draft M = 512 (12) 336.4 / 335.6 -> 325.7 /
  // 324.8; at 6 per expert (draft M = 256) level (292.8 / 292.8 -> 292.7 / 295.1), so below 7
  // the ring of 3 stays.
  // Session 39 (results/sm_90/2026-12-07-s39, H100, two rounds in reverse order, us): since
  // session 38's warp-uniform descriptor the one-warpgroup 8-token stage one (the 64-K form,
  // ring of 4: the form below 0.15) runs 225 instructions per 16 wgmmas where the two-warpgroup
  // k16 form runs ~280, and it is ahead up to 4 tokens per expert: stage one backbone M = 64 (1
  // per expert) 311.8 / 311.3 -> 299.8 / 299.7, draft M = 64 (1.5) 134.7 / 135.2 -> 133.3 /
  // 133.2; at EP M = 64 (4) level (408.0 / 409.4 -> 407.4 / 406.7), where the two warpgroups
  // stay. The two-warpgroup 64-K form (ring of 4, 110 registers, 2 CTAs per SM) was between
  // them (302.6 / 305.1 at backbone M = 64), and 128-K k-tiles in the 64-K form (78 registers,
  // 3 CTAs of 8 warps or 6 of 4) lost (338.5 / 339.7 and 326.7 / 326.6). The stage twos in the
  // 64-K form lost at 8 and 16 tokens (backbone M = 64 164.7 / 165.6 -> 185.1 / 185.6, M = 512
  // 304.4 / 303.9 -> 359.6-373.8 on 256-K k-tiles or a launch bound of 5): they keep the k16
  // decode at 8-10 CTAs per SM.
  if (a16w4) {
    constexpr double one_warpgroup_stage1_below = 4.0;
    KernelConfig s1 = d.stage1, s2 = d.stage2;
    if (bm == 8 && per_expert >= one_warpgroup_stage1_below)
      s1.warps = 8, s1.block_n = 64, s1.stages = 3, s1.wgmma_k16 = true;
    if (bm == 8 && per_expert >= 0.1) s2.waves = 4, s2.stages = 3, s2.wgmma_k16 = true;
    if ((bm == 8 && per_expert >= 0.1) || bm == 16) s2.warps = 4, s2.block_n = 64;
    if (bm == 8 && per_expert >= 0.2 && long_stage2_k) s2.ksplit = 2;
    if (bm >= 16) s1.stages = s2.stages = 3;
    if (bm == 16 && per_expert >= 7) s1.stages = 4;
    if (bm == 16) s2.wgmma_k16 = true;
    if (bm == 64) {
      for (KernelConfig* s : {&s1, &s2}) s->wgmma_k16 = true, s->waves = 3;
    }
    // Session 29 (results/sm_90/2026-12-06-s29, H100, two rounds in reverse order, whole MoE,
    // us). With the tile-major grid the 64-token pair no longer waits on DRAM (Nsight Compute,
    // EP M = 4096: stage one DRAM 19.9 % and L2 63.8 %, stage two 35.3 % / 57.8 %) but on
    // issue: the tensor pipe 50 % / 47 % busy, the issue slots 58.5 %, 10.1 cycles between a
    // warp's instructions at 6 warps per scheduler, each weight decoded once per 64 tokens.
    // 128-token blocks decode it once per 128 tokens; on two warpgroups (140 registers, one
    // 8-warp CTA per SM) too few warps hide the latency, on three (12 warps, 192 / 384 weight
    // rows per CTA, 124 registers, one CTA per SM) the pair took EP (I = 2304) M = 4096 (256
    // tokens per expert) from 4509.0 / 4548.2 to 4193.6 / 4205.1 (stage one 2886 -> 2586; two
    // warpgroups: 4398.7 / 4388.0), M = 2048 (128) from 2425.9 / 2421.2 to 2331.9 / 2330.3
    // (stage one 1538 -> 1433, stage two 864 -> 878) and M = 8192 (512) from 8536.9 / 8567.1
    // to 7778.9 / 7827.3; A8W4's twin (below) at EP M = 4096 4447.1 / 4499.8 -> 4221.6 /
    // 4259.0. At I = 640 it lost at every M measured: backbone M = 4096 (64) 1870.2 / 1878.5 ->
    // 2141.2 / 2141.7, M = 8192 (128) 3229.8 / 3220.5 -> 3508.1 / 3515.6, M = 16384 (256)
    // 6022.9 / 6019.4 -> 6391.5 / 6371.7, draft M = 8192 (192) 1639.1 / 1634.8 -> 1693.8 /
    // 1693.8, A8W4's twin on the backbone at M = 8192 3250.2 / 3246.8 -> 3586.0 / 3576.7: its
    // stage two ran 5-20 % slower there (five 128-K k-tiles per CTA, so one CTA per SM runs its
    // copies and its epilogue unhidden) while its stage one was level at 128 tokens per expert
    // and 6 % faster at 256 (3131.6 -> 2955.2); both stages read one sort, so they share the
    // block. A ring of 4 lost everywhere (EP M = 2048 2479.4 / 2486.6). Hence 128 tokens per
    // expert and the long I of the split stage two's rule (16 or more 128-K k-tiles).
    if (bm == 128) {
      for (KernelConfig* s : {&s1, &s2}) {
        s->wgmma_k16 = true, s->waves = 0, s->warps = 12;
        s->block_n = wgmma_block_n(s->stage, s->warps);
      }
    }
    // Session 35 (results/sm_90/2026-12-07-s35, H100, two rounds in reverse order, whole MoE,
    // us; tokens per expert in brackets): from 72 to under 120 tokens per expert most experts
    // fill a 64-token block and part of a second, so their w1 is decoded twice; the 128-token
    // stage one on three warpgroups (above) decodes it once, and the 64-token stage two reads
    // its sort in halves (`_hs`, sort_halves), since the 128-token stage two loses at I = 640.
    // Backbone M = 5120 (80) 2307.3 / 2308.1 -> 2209.7 / 2209.0, M = 6144 (96) 2498.4 / 2512.5
    // -> 2424.9 / 2420.7; draft M = 3072 (72) 763.5 / 762.2 -> 731.1 / 732.2, M = 4096 (96)
    // 880.4 / 888.0 -> 859.3 / 847.8; EP M = 1536 (96) 1939.2 / 1937.7 -> 1794.4 / 1791.7.
    // Outside the range it lost or was level: backbone M = 4096 (64) 1840.4 / 1839.0 -> 1912.9
    // / 1916.3, M = 8192 (128) 3188.8 / 3184.2 -> 3228.9 / 3236.9, M = 16384 (256) 5834.0 /
    // 5835.3 -> 5770.0 / 5797.3; draft M = 5120 (120) 1026.4 / 1029.1 -> 1035.2 / 1032.5, M =
    // 8192 (192) 1611.2 / 1624.3 -> 1619.7 / 1600.5; EP M = 4096 (256), against the 128-token
    // pair, 4062.1 / 4098.4 -> 4247.7 / 4232.7. Both stages or neither (one sort).
    if (bm == 64 && per_expert >= 72 && per_expert < 120) {
      KernelConfig h1 = s1, h2 = s2;
      h1.block_m = 128, h1.warps = 12, h1.waves = 0;
      h1.block_n = wgmma_block_n(h1.stage, h1.warps);
      h2.sort_halves = true;
      if (!check_config(h1, arch, shape) && !check_config(h2, arch, shape) && !pair_violation(h1, h2)) s1 = h1, s2 = h2;
    }
    if (!check_config(s1, arch, shape)) d.stage1 = s1;
    if (!check_config(s2, arch, shape)) d.stage2 = s2;
  }
  // Session 26 (results/sm_90/2026-12-05-s26/c4_a8s2, H100, two rounds in reverse order,
  // whole MoE, us): A8W4's 8-token stage two (its own e4m3 kernel, below 3 tokens per expert)
  // takes one warpgroup too, as A16W4's did in session 24: two warpgroups -> one, backbone
  // M = 8 106.0 / 105.8 -> 104.0 / 104.3, M = 64 496.1 / 495.9 -> 488.9 / 489.9; draft M = 8
  // 59.4 / 59.4 -> 58.4 / 58.5, M = 64 217.9 / 217.9 -> 213.9 / 215.0; EP M = 1 (0.0625 tokens
  // per expert) 57.6 / 57.3 -> 56.1 / 56.6, M = 8 274.2 / 274.7 -> 269.2 / 270.0, M = 32 578.4
  // -> 574.4 (one round). At EP M = 4 it lost 0.7 % (181.0 / 180.9 -> 182.2 / 182.2; split over
  // K in 2 it gained 1 %: 179.6 / 179.0, but not at M = 8 or 32, so no split is taken). Below
  // 0.06 tokens per expert (backbone and draft M = 1) it was not measured and stays.
  if (!a16w4 && bm == 8 && per_expert >= 0.06) {
    KernelConfig s2 = d.stage2;
    s2.warps = 4, s2.block_n = 64;
    if (!check_config(s2, arch, shape)) d.stage2 = s2;
  }
  return d;
}

// Stage one's CTAs for M tokens' reached experts (one sorted block each at decode sizes) and
// its column tiles of block_n h columns.
std::int64_t stage1_ctas(std::int64_t reached_experts, const moe::MoeShape& shape, int block_n) {
  return reached_experts * ((shape.inter + block_n - 1) / block_n);
}

// Stage one split over K in a cluster (ksplit, kernels/moe_stage1.cuh) where the A16W4
// one-warpgroup 8-token wgmma stage one has few CTAs: `ctas` of them (the experts M tokens
// reach times its column tiles) hold one warp per scheduler, and each warp decodes its whole
// K in a row (Nsight Compute, backbone M = 1: 120 CTAs, 3.2 cycles between a warp's issues,
// 6 % achieved occupancy, DRAM 22 %; a deeper copy ring changed nothing, 16.8 -> 17.1 us).
// The largest of 4 and 2 that keeps ctas x ksplit within 528 (four such CTAs per SM of a
// 132-SM H200) is taken. Session 19 (results/sm_90/2026-12-04-h200-s19, p2 and p3; whole MoE,
// us): backbone M = 1 (120 CTAs) ks4 28.5 / 28.3 -> 25.8 / 25.6 (ks2 27.0, ks8 31.0); M = 2
// (240) ks2 39.9 / 40.0 -> 38.9 / 38.9 (ks4 42.9); draft M = 2 (120) ks4 28.1 -> 26.1, M = 4
// (240) ks2 38.4 -> 36.7 (ks4 40.3); at 432 (EP M = 1) and 480 (backbone M = 4) every split
// was slower (EP 55.9 -> 60.5 with ks2, backbone M = 4 59.8 -> 65.0). A8W4's stage one (128-K
// tiles, p4, two rounds) gains from ks4 only up to one CTA per SM: draft M = 1 (60 CTAs)
// 29.4 / 30.3 -> 24.2 / 23.9, M = 2 (120) 32.9 / 32.9 -> 32.3 / 32.3, backbone M = 1 (120)
// 31.9 / 33.3 -> 32.1 / 32.1; ks2 at 240 CTAs lost (backbone M = 2 40.9 -> 43.0, draft M = 4
// 40.3 -> 42.6), so A8W4 takes ks4 at most 132 CTAs and no ks2.
void split_stage1_k(DefaultConfigs& d, std::int64_t reached_experts, Arch arch, const moe::MoeShape& shape) {
  KernelConfig& s1 = d.stage1;
  if (!s1.wgmma || s1.block_m != 8 || s1.warps != 4) return;
  bool const a8w4 = s1.dtype == DtypePath::a8w4;
  std::int64_t const ctas = stage1_ctas(reached_experts, shape, s1.block_n);
  for (int const ks : {4, 2}) {
    bool const pays = a8w4 ? ks == 4 && ctas <= 132 : ctas * ks <= 528;
    if (!pays) continue;
    KernelConfig trial = s1;
    trial.ksplit = ks;
    if (check_config(trial, arch, shape)) continue;
    s1 = trial;
    return;
  }
}

// The tile-major grid (KernelConfig::tile_major: x the column tiles, y the sorted blocks) for
// the A16W4 wgmma pair, so the CTAs that run together share one block's token rows and each
// block's rows come from DRAM once instead of once per column tile. Session 20's Nsight Compute
// profile of EP M = 4096 (blocks on x) had stage two at 92.7 % of L2 throughput and 72.6 % of
// DRAM bandwidth, 5.4 GB from DRAM for under 1 GB of unique bytes: h (113 MB, more than L2)
// read once per column tile. Session 28 (results/sm_90/2026-12-06-s28, H100, two rounds in
// reverse order, whole MoE, us; tokens per expert in brackets):
//   64-token pair: EP M = 4096 (256) 5209.6 / 5213.8 -> 4562.2 / 4585.9, backbone M = 4096
//     (64) 2081.9 / 2084.1 -> 1887.9 / 1889.7, draft M = 4096 (96) 941.5 / 945.5 -> 913.7 /
//     917.1, draft M = 1024 (24) 406.5 / 405.7 -> 396.9 / 397.3; stage two tile-major alone
//     took 70 % of the gain at EP, 38 % at the backbone and none at the draft, so both stages;
//   16-token pair: backbone M = 512 (8) 860.7 / 860.6 -> 830.8 / 821.7, EP M = 128 (8) 717.3 /
//     714.9 -> 692.5 / 699.3, draft M = 256 (6) 291.3 / 291.3 -> 285.0 / 284.6;
//   8-token pair: backbone M = 64 (1) 514.2 / 513.9 -> 492.9 / 493.3, M = 8 106.0 / 106.0 ->
//     104.5 / 104.7, draft M = 64 218.6 / 218.5 -> 216.6 / 216.5, M = 8 58.8 / 59.0 -> 58.6 /
//     58.5, EP M = 64 658.2 / 658.6 -> 654.6 / 654.4, M = 8 280.7 / 281.3 -> 279.2 / 279.5;
//     backbone M = 1 (stage one split over K keeps its order, stage two tile-major) level,
//     27.1 / 26.9 -> 26.9 / 27.2.
// A8W4 at 16 tokens per expert and more runs the A16W4 kernels (the twin in default_config) and
// takes their grids with them: backbone M = 4096 2077.7 / 2076.4 -> 1866.4 / 1841.9. A8W4's own
// e4m3 kernels were not measured tile-major and keep the blocks on x. A stage one split over K
// (its cluster along z) keeps its order: the rules refuse the pair (validity.cpp). A grid's y
// holds at most tile_major_max_blocks blocks, so M past that keeps the blocks on x (plan_launch
// refuses such a launch).
void tile_major_grids(DefaultConfigs& d, std::int64_t M, Arch arch, const moe::MoeShape& shape) {
  for (KernelConfig* s : {&d.stage1, &d.stage2}) {
    if (!s->wgmma || s->dtype != DtypePath::a16w4) continue;
    if (stage_grid_rows(shape, M, *s) > tile_major_max_blocks) continue;
    KernelConfig trial = *s;
    trial.tile_major = true;
    if (!check_config(trial, arch, shape)) *s = trial;
  }
}

void make_valid(KernelConfig& c, Arch arch, const moe::MoeShape& shape) {
  if (!check_config(c, arch, shape)) return;
  if (c.ksplit > 1) {  // a reduction too short to split: no split-K before anything else
    c.ksplit = 1;
    if (!check_config(c, arch, shape)) return;
  }
  for (auto const k : {256, 128, 64, 32}) {
    if (k > c.block_k) continue;
    auto trial = c;
    trial.block_k = k;
    for (auto const n : {c.block_n, 64, 32}) {
      if (n > c.block_n) continue;
      trial.block_n = n;
      if (!check_config(trial, arch, shape)) {
        c = trial;
        return;
      }
    }
  }
  auto fallback = c;
  fallback.nonkdim = 0;
  fallback.warps = 2;
  fallback.kpack = 1;
  fallback.stages = 1;
  fallback.block_n = c.stage == 1 ? 32 : 64;
  fallback.block_k = 32;
  c = fallback;
}

}  // namespace

DefaultConfigs default_config(const moe::MoeShape& shape, Arch arch, std::int64_t M) {
  bool const nvidia = arch == Arch::sm_90;
  KernelConfig c;
  c.dtype = shape.dtype;
  c.fp8 = shape.dtype == DtypePath::a8w4 ? shape.fp8_flavor : Fp8Flavor::ocp;
  c.gate_up = shape.gate_up;
  c.doweight_stage1 = shape.doweight_stage1;
  bool const big_tiles = nvidia && shape.dtype != DtypePath::bf16;
  c.block_m = M <= 32 ? 16 : M <= 256 ? 32 : (big_tiles && M > 2048) ? 128 : 64;
  c.block_k = nvidia ? 256 : 128;
  c.kpack = 1;
  c.nonkdim = 16;
  c.waves = 0;
  c.stages = c.block_m <= 32 ? 2 : 1;
  c.ksplit = 1;
  c.stage2_mode = Stage2Mode::atomic;
  DefaultConfigs d{c, c};
  d.stage1.stage = 1;
  d.stage2.stage = 2;
  // Expected tokens per routed expert under uniform routing.
  double const per_expert = static_cast<double>(M) * shape.topk / std::max(1, shape.experts);
  // sm_90 MXFP4: swapped kernels below 6 tokens per expert, the staged main loop from 6 on.
  // Measured crossover (results/sm_90/2026-12-01-h200-s5/probes/p6): at 1 / 1.5 / 4 tokens per
  // expert the swapped pair won (656 vs 1063, 283 vs 463, 1087 vs 1396 us), at 8 and 12 the
  // staged one (1670 vs 2106, 593 vs 987 us); nothing was measured between 4 and 8.
  bool const mxfp4 = shape.dtype != DtypePath::bf16;
  // A16W4 hands over to the fragment-decode staged kernels (below) from 3 tokens per expert;
  // A8W4 with OCP fp8 (the e4m3 MMA's codes) takes them from the first token.
  bool const a16w4_fragment = shape.dtype == DtypePath::a16w4 && per_expert >= 3;
  bool const a8w4_fragment = shape.dtype == DtypePath::a8w4 && shape.fp8_flavor == Fp8Flavor::ocp;
  bool const fragment_sizes = nvidia && (a16w4_fragment || a8w4_fragment) && per_expert < 160;
  // sm_90a MXFP4: the wgmma main loop (wgmma_default above), A16W4 from 0.04 tokens per
  // expert, A8W4 with OCP e4m3 at every size. Below 0.04 (A16W4 at M = 1 on the backbone and
  // the draft) the swapped kernels keep stage one, with the 8-token wgmma stage two (below). The
  // A16W4 switch (results/sm_90/2026-12-02-h200-s11/probe_d, us): the 8-token wgmma pair won
  // at 0.0625 tokens per expert (backbone M = 4 65.2 vs 77.6 swapped, EP M = 1 63.7 vs 91.6)
  // and lost at 0.016-0.023 (backbone M = 1 35.5 vs 34.7 mixed, draft M = 1 34.0 vs 25.3). A8W4:
  // the 8-token wgmma pair (one-warpgroup stage one) wins from the first token (session 12:
  // backbone M = 1 32.5 vs 48.5 us for the fragment-decode pair, draft 31.0 vs 45.2, EP 59.2
  // vs 84.6), so A8W4 takes it at every size.
  // Below 0.04, A16W4 takes the wgmma pair too where its one-warpgroup stage one has at least
  // 96 CTAs (the experts M tokens can reach times I / 32 columns: about three quarters of the
  // H200's 132 SMs). Session 16 (results/sm_90/2026-12-03-h200-s16/p3, two rounds, us): with
  // 120 CTAs backbone M = 1 29.5 / 30.1 -> 28.3 / 28.2, with 240 M = 2 46.0 / 46.0 -> 39.5 /
  // 39.7, with 320 (E256 top8 I1280) M = 1 62.7 / 64.0 -> 46.8 / 46.3; with 60 (the draft's
  // M = 1) the swapped stage one stays ahead, 20.1 / 20.6 against 26.5 / 25.9: fewer CTAs
  // than SMs leave most of the HBM's bandwidth unused.
  bool const a16w4 = shape.dtype == DtypePath::a16w4;
  // A8W4 with OCP e4m3 on sm_90a, from 16 tokens per expert (the 64-token pair): the A16W4
  // default's kernels at the same M, stage one reading x upcast to bf16 by the sort's launch
  // (`_xb`) and both stages keeping h in bf16 (`_hb`), so only the upcast and stage one's
  // epilogue (h quantised per 1x32) differ from A16W4's MoE. A8W4's own 64-token wgmma kernels
  // hold two scratch sums per accumulator (144-146 registers, one CTA per SM). Session 23
  // (results/sm_90/2026-12-05-s23, H100, backbone, whole MoE): M = 4096 3568 -> 2115 us (stage
  // one 2020 -> 1151, stage two 1517 -> 912; A16W4 2110). Below 16 tokens per expert the A8W4
  // kernels stay (8- and 16-token blocks, one to three CTAs per SM either way): with the
  // four-lane epilogue they are level with A16W4 there (M = 1 / 8 / 64 / 512: 28.9 / 106.4 /
  // 496.7 / 886.4 against A16W4's 27.4 / 108.7 / 518.2 / 892.7) and the twin gains nothing
  // (28.4 / 111.3 / 522.9 / 904.0).
  if (nvidia && a8w4_fragment && per_expert >= 16) {
    moe::MoeShape as_a16w4 = shape;
    as_a16w4.dtype = DtypePath::a16w4;
    DefaultConfigs twin = default_config(as_a16w4, arch, M);
    if (twin.stage1.wgmma && twin.stage2.wgmma) {
      for (KernelConfig* s : {&twin.stage1, &twin.stage2}) {
        s->dtype = DtypePath::a8w4;
        s->fp8 = shape.fp8_flavor;
        s->h_bf16 = true;
      }
      twin.stage1.x_bf16 = true;
      if (!check_config(twin.stage1, arch, shape) && !check_config(twin.stage2, arch, shape)) return twin;
    }
  }
  std::int64_t const reached_experts = std::min<std::int64_t>(shape.experts, M * shape.topk);
  bool const a16w4_wgmma_ctas = stage1_ctas(reached_experts, shape, 32) >= 96;
  if (nvidia && (a16w4 || a8w4_fragment) && (!a16w4 || per_expert >= 0.04 || a16w4_wgmma_ctas)) {
    if (auto w = wgmma_default(d, per_expert, arch, shape)) {
      split_stage1_k(*w, reached_experts, arch, shape);
      tile_major_grids(*w, M, arch, shape);
      return *w;
    }
  }
  bool const swapped_sizes = nvidia && !fragment_sizes && (per_expert < 6 || !mxfp4);
  if (swapped_sizes && per_expert <= 12) {
    // sm_90, few tokens per expert: the swapped-operand kernels (weights on the MMA's M side,
    // tokens on N, a per-lane cp.async ring of k-tiles). Measured on the H200 (backbone E384
    // top6, results/sm_90/2026-11-30-h200-s3/): at M = 1 / 8 / 64 / 512 the pair below takes
    // 39 / 143 / 681 / 2106 us where the previous default took 105 / 305 / 1648 / 2583 us.
    // block_m 8 (one mma N) stayed ahead of 16 up to 8 tokens per expert (M = 512).
    int const bm = per_expert <= 8 ? 8 : 16;
    both_stages(d, bm, true, false);
    d.stage1.warps = d.stage2.warps = 4;
    d.stage1.block_n = 8;
    d.stage1.block_k = bm == 8 ? 256 : 128;
    d.stage1.stages = bm == 8 ? 2 : 4;
    d.stage2.block_n = 64;
    d.stage2.block_k = 128;
    d.stage2.stages = bm == 8 ? 2 : 4;  // measured: 16-token blocks want the deeper ring
    // a8w4 quantises h per 32 columns in stage one's epilogue.
    if (shape.dtype == DtypePath::a8w4) d.stage1.block_n = 32;
    while (d.stage2.block_n > 16 && d.stage2.block_n > shape.hidden) d.stage2.block_n /= 2;
    if (mxfp4 && bm == 8) {
      // MXFP4 with 8-token blocks: the repacked weight layout and at least 4 CTAs per SM
      // (launch bounds: <= 128 registers at 128 threads). Measured on the H200
      // (results/sm_90/2026-12-01-h200-s6/probes/p2-p4): with the full-tile copy path stage
      // two took 139 registers and 3 CTAs per SM; waves 4 took backbone M = 8 / 64 from
      // 136.7 / 633.4 to 131.9 / 611.9 us, and the repacked layout (stage one's A16W4 k-tiles
      // halved to 128 K in a ring of 4, where 256 K spilled 8 bytes) to 128.3 / 585.0 us;
      // draft M = 64 283.1 -> 274.7 -> 262.4 us; A8W4 backbone M = 64 1684 -> 1651 us. Only
      // where the LDS allows 4 CTAs; otherwise the stage keeps waves 0 and the natural layout.
      KernelConfig s1 = d.stage1;
      if (shape.dtype == DtypePath::a16w4) s1.block_k = 128, s1.stages = 4;
      if (prefer_repacked(s1, 4, arch, shape)) d.stage1 = s1;
      (void)prefer_repacked(d.stage2, 4, arch, shape);
    }
    if (a16w4 && bm == 8 && per_expert < 0.04) {
      // A16W4 below the wgmma pair's switch: the swapped stage one with the 8-token wgmma
      // stage two (probe_d: backbone M = 1 38.4 -> 34.7 us, draft M = 1 26.7 -> 25.3; the
      // 16-bucket tune found it at backbone M = 6, 101.8 -> 94.1 in selection). Stage two
      // reads the same sorted 8-token blocks; the shapes it does not fit keep the swapped one.
      if (auto w = wgmma_default(d, per_expert, arch, shape)) d.stage2 = w->stage2;
    }
    if (!check_config(d.stage1, arch, shape) && !check_config(d.stage2, arch, shape)) return d;
    d = DefaultConfigs{c, c};  // an unusual shape the swapped kernels do not fit: as below
    d.stage1.stage = 1;
    d.stage2.stage = 2;
  }
  if (fragment_sizes) {
    // sm_90, A16W4 from 3 and A8W4 up to 160 tokens per expert: the staged main loop with fragment decode
    // (each warp decodes the repacked words of its own fragments from the cp.async ring into
    // registers; kernels/moe_staged_gemm.cuh), 16-token blocks below 16 tokens per expert and
    // 32-token blocks above. Measured on the H200 (results/sm_90/2026-12-01-h200-s7/probes/
    // p3, p4) against the previous default: backbone M = 256 / 512 / 4096 1199 / 1539 / 3696
    // -> 1008 / 1054 / 3473 us, draft M = 128 / 512 / 4096 353 / 560 / 1745 -> 349 / 403 /
    // 1705, EP M = 64 / 512 1078 / 1882 -> 885 / 1639; at 1.5-2 tokens per expert the
    // swapped kernels stay ahead (backbone M = 128: 803 vs 839). Stage one of the 16-token
    // pair reads 128-K tiles (636 vs 678 us at backbone M = 512); the 32-token pair holds 4
    // CTAs per SM (waves 4) in a ring of 4.
    //
    // A8W4 (natural MXFP4 words turned into e4m3 codes for mma.sync m16n8k32 e4m3, one scaled
    // FMA per accumulator and 32-K piece): the same tiles, stage one of the 32-token pair in a
    // ring of 3. Measured on the H200 (results/sm_90/2026-12-01-h200-s8/probes/p2, p3) against
    // the previous A8W4 default (swapped kernels below 6 tokens per expert, the LDS-tile staged
    // ones above, both decoding fp8 per element): backbone M = 1 / 8 / 32 / 64 / 128 / 512
    // 108 / 369 / 1102 / 1661 / 2186 / 2530 -> 52 / 161 / 466 / 681 / 896 / 1088 us (16-token
    // pair), M = 2048 / 4096 3709 / 7219 -> 2270 / 3920 (32-token pair; the 16-token one took
    // 2648 at M = 2048); draft M = 1 / 64 / 512 101 / 727 / 952 -> 49 / 302 / 424, M = 2048
    // 1733 -> 1120; EP M = 1 / 16 / 512 201 / 1514 / 3178 -> 89 / 625 / 1918.
    int const bm = per_expert < 16 ? 16 : 32;
    both_stages(d, bm, false, true);
    for (KernelConfig* s : {&d.stage1, &d.stage2}) {
      s->fragment_decode = true;
      s->repacked = shape.dtype == DtypePath::a16w4;
      s->warps = 4;
      s->block_k = 64;
      s->stages = 4;
      s->waves = bm == 32 ? 4 : 0;
    }
    d.stage1.block_n = 64;
    d.stage2.block_n = 128;
    if (bm == 16) d.stage1.block_k = 128, d.stage1.stages = 3;
    if (bm == 32 && shape.dtype == DtypePath::a8w4) d.stage1.stages = 3;
    while (d.stage2.block_n > 32 && d.stage2.block_n > shape.hidden) d.stage2.block_n /= 2;
    while (d.stage1.block_n > 32 && d.stage1.block_n > shape.inter) d.stage1.block_n /= 2;
    for (KernelConfig* s : {&d.stage1, &d.stage2}) make_valid(*s, arch, shape);
    if (!check_config(d.stage1, arch, shape) && !check_config(d.stage2, arch, shape) && d.stage1.staged &&
        d.stage2.staged)
      return d;
    d = DefaultConfigs{c, c};  // an unusual shape these kernels do not fit: as below
    d.stage1.stage = 1;
    d.stage2.stage = 2;
  }
  if (nvidia && mxfp4 && per_expert >= 6) {
    // sm_90, MXFP4 weights, 6 or more tokens per expert: the staged main loop (cp.async ring
    // in LDS, weights decoded once per CTA, ldmatrix). Measured on the H200
    // (results/sm_90/2026-12-01-h200-s5/probes/p4, p6): backbone M = 512 1.67 ms where the
    // swapped pair took 2.11; M = 4096 3.92 ms where the weight-pipelined pair below took
    // 8.34; M = 16384 12.7 ms (was 29.7); draft M = 512 0.59 ms (0.99); EP M = 512 2.06 ms
    // (5.07). block_m follows the tokens per expert (each sorted block re-reads and
    // re-decodes the expert's weights): 32 up to ~40, 64 up to ~160, then 128; stage two
    // reduces rather than adding atomically from 128 on (12.7 vs 13.4 ms at M = 16384).
    int const bm = per_expert < 40 ? 32 : per_expert < 160 ? 64 : 128;
    both_stages(d, bm, false, true);
    d.stage1.block_k = d.stage2.block_k = 64;
    d.stage1.stages = d.stage2.stages = 3;
    d.stage1.warps = bm == 128 ? 8 : 4;
    d.stage1.block_n = 64;
    d.stage2.warps = bm == 32 ? 4 : 8;
    d.stage2.block_n = 128;
    if (bm == 128) d.stage2.stage2_mode = Stage2Mode::reduce;
    while (d.stage2.block_n > 32 && d.stage2.block_n > shape.hidden) d.stage2.block_n /= 2;
    while (d.stage1.block_n > 32 && d.stage1.block_n > shape.inter) d.stage1.block_n /= 2;
    // The repacked weight layout, with 8-warp stages held at 2 CTAs per SM (<= 128 registers:
    // repacked, stage two's 64-token tile took 132 and fell to one CTA, 1618 -> 2315 us).
    // Measured on the H200 (results/sm_90/2026-12-01-h200-s6/probes/p3, p4): backbone M = 512
    // 1658 -> 1526 us, M = 4096 3899 -> 3687; draft M = 512 594 -> 563, M = 4096 1847 -> 1733;
    // EP M = 512 2043 -> 1881; A8W4 backbone M = 512 2810 -> 2607.
    for (KernelConfig* s : {&d.stage1, &d.stage2})
      (void)prefer_repacked(*s, s->warps == 8 ? 2 : s->waves, arch, shape);
    if (!check_config(d.stage1, arch, shape) && !check_config(d.stage2, arch, shape)) return d;
    d = DefaultConfigs{c, c};  // an unusual shape the staged kernels do not fit: as below
    d.stage1.stage = 1;
    d.stage2.stage = 2;
  }
  if (nvidia && shape.dtype != DtypePath::bf16 && M > 32) {
    // sm_90, MXFP4 weights, beyond decode sizes: the weight-pipelined kernels (stages 3) with
    // small row tiles. Measured on the H200 (results/sm_90/2026-11-30-h200/, backbone E384
    // top6): at M = 64 / 512 / 4096 these take 1.63 / 2.58 / 8.34 ms where the previous
    // heuristic (block_m 32-128, stages 1) took 2.40 / 8.33 / 16.1 ms; block_m 16 stays
    // ahead up to ~8 tokens per expert, block_m 32 beyond.
    bool const wide = M > 1024;
    d.stage1.block_m = d.stage2.block_m = wide ? 32 : 16;
    d.stage1.stages = d.stage2.stages = 3;
    d.stage1.warps = 8;
    d.stage1.block_n = wide ? 32 : 64;
    d.stage1.block_k = 256;
    d.stage2.warps = wide ? 8 : 4;
    d.stage2.block_n = wide ? 64 : 128;
    d.stage2.block_k = 128;
    d.stage2.ksplit = 2;
  } else if (nvidia) {
    // sm_90: more warps as block_m grows so each warp keeps one or two n fragments and the
    // accumulators plus A fragments stay in registers (validity.cpp's estimate).
    c.warps = c.block_m == 16 ? 4 : c.block_m == 128 ? 16 : 8;
    d.stage1.warps = d.stage2.warps = c.warps;
    d.stage1.block_n = c.block_m <= 32 ? 64 : 32;
    d.stage2.block_n = c.block_m <= 32 ? 128 : 64;
  } else {
    d.stage1.warps = d.stage2.warps = 4;
    d.stage1.block_n = 64;
    d.stage2.block_n = 128;
  }
  // bf16 weights take 4x the registers of MXFP4 ones in flight: narrower tiles, no prefetch.
  if (shape.dtype == DtypePath::bf16) {
    if (c.block_m <= 32 && d.stage1.block_n > 32) d.stage1.block_n /= 2;
    if (c.block_m <= 32 && d.stage2.block_n > 32) d.stage2.block_n /= 2;
    d.stage1.stages = d.stage2.stages = 1;
  }
  // Small dims: never wider than the output.
  while (d.stage1.block_n > 32 && d.stage1.block_n > shape.inter) d.stage1.block_n /= 2;
  while (d.stage2.block_n > 32 && d.stage2.block_n > shape.hidden) d.stage2.block_n /= 2;
  make_valid(d.stage1, arch, shape);
  make_valid(d.stage2, arch, shape);
  return d;
}

}  // namespace moetune::search
