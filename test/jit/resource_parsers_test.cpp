#include <catch2/catch.hpp>

#include "autotune/jit/amdgpu_metadata.hpp"
#include "autotune/jit/ptxas_log.hpp"

using namespace moetune;

TEST_CASE("ptxas -v figures are read per entry function", "[jit][resources]") {
  auto const figures = jit::parse_ptxas_log(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z1ai' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1ai\n"
      "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 49152 bytes smem, 368 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1bv\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers, 352 bytes cmem[0]\n");
  REQUIRE(figures.size() == 2);
  auto const& a = figures.at("_Z1ai");
  CHECK(a.registers == 255);
  CHECK(a.shared_bytes == 49152);
  CHECK(a.spill_bytes == 8);
  CHECK(a.scratch_bytes == 16);
  auto const& b = figures.at("_Z1bv");
  CHECK(b.registers == 8);
  CHECK(b.shared_bytes == 0);
  CHECK(b.spill_bytes == 0);
}

TEST_CASE("ptxas's serialised-wgmma warnings are read per function", "[jit][resources]") {
  // As NVRTC 13.0 logs them for a stage two and a stage one (session 18).
  auto const found = jit::serialized_wgmma(
      "ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due "
      "to insufficient register resources for the function '_Z2s2v'\n"
      "ptxas info    : Compiling entry function '_Z2s2v' for 'sm_90a'\n"
      "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due "
      "to insufficient register resources for the wgmma pipeline in the function '_Z2s1v'\n"
      "ptxas info    : Used 48 registers, used 1 barriers\n");
  REQUIRE(found.size() == 2);
  CHECK(found.at("_Z2s2v") == "C7512: insufficient register resources");
  CHECK(found.at("_Z2s1v") == "C7511: insufficient register resources for the wgmma pipeline");
  CHECK(jit::serialized_wgmma("ptxas info    : Used 48 registers, used 1 barriers\n").empty());
}

TEST_CASE("AMDGPU metadata notes are read per kernel, skipping argument maps",
          "[jit][resources]") {
  auto const figures = jit::parse_amdgpu_notes(R"(Displaying notes found in: .note
  Owner                Data size 	Description
  AMDGPU               0x0000026c	NT_AMDGPU_METADATA (AMDGPU Metadata)
    AMDGPU Metadata:
        ---
amdhsa.kernels:
  - .agpr_count:     4
    .args:
      - .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 256
    .name:           _Z1kv
    .private_segment_fixed_size: 32
    .sgpr_count:     14
    .sgpr_spill_count: 0
    .symbol:         _Z1kv.kd
    .vgpr_count:     5
    .vgpr_spill_count: 2
    .wavefront_size: 64
  - .agpr_count:     0
    .args:           []
    .group_segment_fixed_size: 0
    .name:           _Z2k2v
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .vgpr_count:     3
    .vgpr_spill_count: 0
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...
)");
  REQUIRE(figures.size() == 2);
  auto const& k = figures.at("_Z1kv");
  CHECK(k.registers == 9);  // VGPRs + AGPRs
  CHECK(k.sgprs == 14);
  CHECK(k.shared_bytes == 256);
  CHECK(k.scratch_bytes == 32);
  CHECK(k.spill_bytes == 8);
  auto const& k2 = figures.at("_Z2k2v");
  CHECK(k2.registers == 3);
  CHECK(k2.sgprs == 8);
}
