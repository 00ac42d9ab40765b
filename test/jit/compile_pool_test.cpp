#include <catch2/catch.hpp>

#include "autotune/jit/compile_pool.hpp"
#include "test_kernel_family.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;

TEST_CASE("the pool compiles N variants on 2 jobs and results line up with inputs",
          "[jit][pool]") {
  auto const arch = GENERATE(as<std::string>{}, "sm_90", "gfx90a", "gfx942", "gfx950");
  INFO("arch " << arch);
  std::vector<jit::KernelSource> sources;
  for (int factor : {1, 2, 3}) {
    for (int block : {64, 128}) sources.push_back(test::scale_unit(factor, block));
  }
  sources.insert(sources.begin() + 2, test::broken_unit());

  jit::CompileOptions options;
  options.arch = arch;
  options.jobs = 2;
  options.cache_dir = test::scratch_dir("jit_pool");
  options.headers = test::tiny_kernel_headers();

  jit::CompileReport const cold = jit::compile_all(sources, options);
  REQUIRE(cold.outcomes.size() == sources.size());
  CHECK(cold.jobs == 2);
  CHECK(cold.count(jit::CompileStatus::ok) == sources.size() - 1);
  CHECK(cold.cache_hits() == 0);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto const& outcome = cold.outcomes[i];
    INFO(outcome.unit_name);
    CHECK(outcome.unit_name == sources[i].unit_name);
    if (sources[i].unit_name == "broken") {
      CHECK(outcome.status == jit::CompileStatus::compile_error);
      CHECK_THAT(outcome.log_head, Catch::Contains("error"));
      continue;
    }
    REQUIRE(outcome.status == jit::CompileStatus::ok);
    REQUIRE(outcome.result.kernels.size() == 1);
    CHECK(outcome.result.kernels[0].name_expression == sources[i].kernel_names[0]);
    // The tile is Block floats: each result carries its own variant's figure.
    int const block = std::stoi(sources[i].unit_name.substr(sources[i].unit_name.find("_b") + 2));
    CHECK(outcome.result.kernels[0].resources.shared_bytes == block * 4);
    CHECK(outcome.elapsed_ms > 0.0);
  }

  jit::CompileReport const warm = jit::compile_all(sources, options);
  CHECK(warm.cache_hits() == sources.size() - 1);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    CHECK(warm.outcomes[i].result.image == cold.outcomes[i].result.image);
  }

  std::string const table = jit::format_compile_table(warm);
  INFO(table);
  CHECK_THAT(table, Catch::Contains("variant") && Catch::Contains("smem/LDS") &&
                        Catch::Contains("scale_f3_b128") && Catch::Contains("compile_error") &&
                        Catch::Contains("hit"));
}

TEST_CASE("use_cache=false never touches the cache", "[jit][pool]") {
  jit::CompileOptions options;
  options.arch = "gfx942";
  options.jobs = 1;
  options.use_cache = false;
  options.cache_dir = test::scratch_dir("jit_pool_nocache");
  options.headers = test::tiny_kernel_headers();
  std::vector<jit::KernelSource> const sources = {test::scale_unit(1, 64)};
  for (int round = 0; round < 2; ++round) {
    auto const report = jit::compile_all(sources, options);
    CHECK(report.cache_hits() == 0);
    CHECK(report.count(jit::CompileStatus::ok) == 1);
  }
  CHECK(std::filesystem::is_empty(options.cache_dir));
}

TEST_CASE("the compile table shows the variant's own kernel, and a spill in any kernel", "[jit][pool]") {
  // A stage-two unit: its tile (64 registers), then moe_reduce_y (84 registers, the larger),
  // which spills. The row must show the tile's 64, not the helper's 84, and the helper's spill.
  jit::CompileOutcome o;
  o.unit_name = "stage_two_unit";
  o.status = jit::CompileStatus::ok;
  o.result.ok = true;
  auto const kernel = [](const char* name, int registers, int shared, int spill, int scratch) {
    jit::CompiledKernel k;
    k.name_expression = name;
    k.resources.registers = registers;
    k.resources.shared_bytes = shared;
    k.resources.spill_bytes = spill;
    k.resources.scratch_bytes = scratch;
    return k;
  };
  jit::CompiledKernel const tile = kernel("moetune::moe_stage2<Cfg>", 64, 512, 0, 0);
  jit::CompiledKernel const helper = kernel("moetune::moe_reduce_y", 84, 4096, 8, 16);
  o.result.kernels = {tile, helper};
  jit::CompileReport report;
  report.arch = "sm_90";
  report.outcomes = {o};
  // The table's line for one unit.
  auto const line_of = [&](const char* unit) {
    std::string const table = jit::format_compile_table(report);
    std::string const from = table.substr(table.find(unit));
    return from.substr(0, from.find('\n'));
  };
  std::string const line = line_of("stage_two_unit");
  INFO(line);
  CHECK_THAT(line, Catch::Contains(" 64 ") && Catch::Contains(" 512 ") && Catch::Contains(" 8/16 "));
  CHECK_THAT(line, !Catch::Contains("84") && !Catch::Contains("4096"));
  // A stage-one unit: its sort first, the tile it is named for second (primary_kernel 1).
  jit::CompileOutcome one = o;
  one.unit_name = "stage_one_unit";
  one.result.kernels = {kernel("moetune::moe_sort", 39, 2048, 0, 0), kernel("moetune::moe_stage1<Cfg>", 80, 256, 0, 0)};
  one.primary_kernel = 1;
  report.outcomes = {one};
  std::string const line1 = line_of("stage_one_unit");
  INFO(line1);
  CHECK_THAT(line1, Catch::Contains(" 80 ") && Catch::Contains(" 256 ") && Catch::Contains(" 0/0 "));
  CHECK_THAT(line1, !Catch::Contains("39") && !Catch::Contains("2048"));
  // A caller's extra column sits between spill/scratch and ms, under its header.
  std::string const with_extra = jit::format_compile_table(report, {{"CTAs/SM", {"3 (registers+LDS)"}}});
  INFO(with_extra);
  CHECK_THAT(with_extra, Catch::Contains("spill/scratch            CTAs/SM") &&
                             Catch::Contains("0/0  3 (registers+LDS)"));
}
