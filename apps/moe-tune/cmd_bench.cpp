// `moe-tune bench`: run configuration pairs on the GPU for a shape and a list of M, check
// it against the CPU reference, and print the time of the sort, each stage and the whole MoE,
// the bytes that must move, achieved TB/s and TFLOP/s. A benchmark, not a test: it reports
// figures and asserts nothing about speed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/measurement_options.hpp"
#include "apps/moe-tune/shape_options.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/core/thread_pool.hpp"
#include "autotune/exec/replay_timer.hpp"
#include "autotune/exec/verifier.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/jit/compiler.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/validity.hpp"
#include "autotune/stats/order_statistics.hpp"

namespace moetune::app {
namespace {

struct BenchOptions : MeasurementOptions {
  ShapeOptions shape;
  std::vector<std::int64_t> ms{8};
  std::vector<std::string> configs{"default"};
  int repeats = 16;
  int samples = 15;
  std::string json_path;
  bool roofline = false;
  std::string markdown_path;
  double matrix_tflops = 790;  // bf16 matrix ceiling (not measured here, see Ceilings)
  bool no_launch_overlap = false;  // time with serial launches (what the overlap buys)
  bool line_info = false;          // kernels built with source line tables (for a profiler)
};

// Whether the timed MoEs overlap their kernels' launches (exec::MoePipeline::set_launch_order).
bool launch_overlap(const BenchOptions& opt, const gpu::Device& device) {
  return !opt.no_launch_overlap && device.info().early_start_launches;
}

// The ceilings a roofline divides by. Memory: measured in this run as device-to-device copy
// bandwidth (bytes read + written), the figure FACTS.md calls the attainable HBM rate. Matrix:
// moe-tune has no vendor BLAS to measure a dense bf16 GEMM with, so the rate is the option's
// value (default FACTS.md's PyTorch-measured 790 TFLOP/s on the H200) and is labelled as such.
struct Ceilings {
  double copy_tb_per_s = 0;
  std::vector<double> copy_samples_tb_per_s;
  double matrix_tflops = 0;
};

Ceilings measure_ceilings(const gpu::Device& device, double matrix_tflops) {
  constexpr std::size_t bytes = std::size_t{1} << 30;  // 1 GiB each way: far beyond L2
  gpu::DeviceBuffer a(device, bytes), b(device, bytes);
  a.memset(1);
  gpu::Stream stream(device);
  gpu::Event start(device), stop(device);
  Ceilings c;
  for (int i = 0; i < 12; ++i) {
    start.record(stream);
    b.copy_from_async(a, stream);
    stop.record(stream);
    stop.synchronize();
    double const s = gpu::elapsed_ms(start, stop) * 1e-3;
    if (i >= 2) c.copy_samples_tb_per_s.push_back(2.0 * static_cast<double>(bytes) / s / 1e12);
  }
  c.copy_tb_per_s = stats::exact_median(c.copy_samples_tb_per_s);
  c.matrix_tflops = matrix_tflops;
  return c;
}

// The pair to run: "default" (the baseline heuristic for each M) or "STAGE1_NAME,STAGE2_NAME".
search::DefaultConfigs configs_for(const std::string& config, const moe::MoeShape& shape,
                                   search::Arch arch, std::int64_t M) {
  if (config == "default") return search::default_config(shape, arch, M);
  auto const comma = config.find(',');
  if (comma == std::string::npos) {
    throw Error(fmt::format("--config '{}': expected 'default' or 'STAGE1_NAME,STAGE2_NAME'",
                            config));
  }
  return {search::parse_kernel_name(config.substr(0, comma)),
          search::parse_kernel_name(config.substr(comma + 1))};
}

// Every kernel this shape's pairs need, compiled (in parallel, through the code cache) before
// the first pair is timed, so no pair's timing follows another's compile (warm_up says why).
void compile_all(exec::UnitCompiler& compiler, const BenchOptions& opt, const moe::MoeShape& shape,
                 search::Arch arch) {
  std::vector<search::KernelConfig> kernels;  // each once: one unit, one compile
  std::set<std::string> names;
  for (auto const M : opt.ms) {
    for (auto const& config : opt.configs) {
      auto const pair = configs_for(config, shape, arch, M);
      for (auto const& k : {pair.stage1, pair.stage2})
        if (names.insert(k.name()).second) kernels.push_back(k);
    }
  }
  parallel_for(kernels.size(), 0, [&](std::size_t i) { (void)compiler.compile(kernels[i]); });
}

struct PartTimes {
  double sort = 0, stage1 = 0, stage2 = 0, total = 0;  // µs, medians
};

struct BenchContext {
  const BenchOptions& opt;
  const Ceilings* ceilings;  // set with --roofline
  const gpu::Device& device;
  search::Arch arch;
  exec::UnitCompiler& compiler;
  exec::Verifier& verifier;
  moe::RoutingSpec routing;
};

// Replays the whole MoE until the GPU has run it for kWarmUp of wall time (at least three
// replays) before any sample is taken. Why: the check before it (the CPU reference, a compile)
// leaves the GPU idle for up to seconds, and three replays (~3 ms at small M) were too few to
// leave that behind -- most likely the clocks, which idle at 345 MHz on the H100 (not
// measured per sample): the pair timed first at each M ran slower than the same pair timed
// later (session 26, H100, results/sm_90/2026-12-05-s26: the default pair at EP M = 1
// 57.3 us first and 56.1 us as a later row of the same run; at draft M = 8 the same stage-one
// kernel 40.4 us first and 35.2 us last).
constexpr std::chrono::milliseconds kWarmUp{200};
void warm_up(exec::ReplayTimer& timer, const gpu::GraphExec& graph, const gpu::Stream& stream, int repeats) {
  auto const start = std::chrono::steady_clock::now();
  for (int w = 0; w < 3 || std::chrono::steady_clock::now() - start < kWarmUp; ++w)
    (void)timer.time_us(graph, stream, repeats);
}

// One configuration pair at M tokens: the correctness check, then every part timed on graph
// replays (interleaved, so drift hits all parts alike), medians printed; returns the JSON row.
nlohmann::json bench_pair(const BenchContext& ctx, const search::DefaultConfigs& pair, std::int64_t M) {
  auto const& opt = ctx.opt;
  auto const check = ctx.verifier.check(pair.stage1, pair.stage2, M, ctx.routing);

  // Timing inputs: seeded like the check; weights rotated through copies unless --hot.
  auto shape = ctx.verifier.shape();
  shape.tokens = M;
  auto const x = moe::make_activations(shape, opt.seed + 17);
  auto const routing = moe::make_routing(ctx.routing, M, shape.experts, shape.topk, opt.seed + 17);
  exec::DeviceInputs inputs(ctx.device, shape, x, routing);
  int const copies = exec::cold_weight_copies(ctx.device, shape, routing,
                                              ctx.verifier.device_weights().bytes_per_copy(),
                                              opt.hot);
  exec::DeviceWeights weights(ctx.device, ctx.verifier.device_weights(), copies);
  exec::MoePipeline pipeline(ctx.device, ctx.arch, shape, M, pair.stage1,
                             ctx.compiler.compile(pair.stage1).result, pair.stage2,
                             ctx.compiler.compile(pair.stage2).result);
  if (opt.no_launch_overlap) pipeline.set_launch_order(gpu::LaunchOrder::serial);
  gpu::Stream stream(ctx.device);
  pipeline.enqueue(inputs, weights, stream);  // stage two alone reads the slots and h of a run
  stream.synchronize();

  using exec::PipelinePart;
  std::vector<PipelinePart> const parts{PipelinePart::sort, PipelinePart::stage1,
                                        PipelinePart::stage2, PipelinePart::all};
  std::vector<gpu::GraphExec> graphs;
  for (auto part : parts) {
    graphs.push_back(exec::capture_repeats(pipeline, inputs, weights, stream, part, opt.repeats));
  }
  exec::ReplayTimer timer(ctx.device);
  warm_up(timer, graphs.back(), stream, opt.repeats);
  std::vector<std::vector<double>> samples(parts.size());
  for (int s = 0; s < opt.samples; ++s) {
    for (std::size_t p = 0; p < parts.size(); ++p) {
      samples[p].push_back(timer.time_us(graphs[p], stream, opt.repeats));
    }
  }
  PartTimes t;
  t.sort = stats::exact_median(samples[0]);
  t.stage1 = std::max(0.0, stats::exact_median(samples[1]) - t.sort);  // part 1 = sort + stage one
  t.stage2 = stats::exact_median(samples[2]);
  t.total = stats::exact_median(samples[3]);
  auto const traffic = moe::moe_traffic(shape, moe::count_experts_touched(routing));
  double const tbps = traffic.total() / (t.total * 1e-6) / 1e12;
  double const tflops = moe::moe_flops(shape) / (t.total * 1e-6) / 1e12;
  // Roofline: the time the bytes that must move take at the measured copy rate, or the
  // FLOPs at the matrix ceiling, whichever is longer (FACTS.md's definition).
  double roofline_us = 0, ratio = 0;
  if (ctx.ceilings) {
    roofline_us = std::max(traffic.total() / (ctx.ceilings->copy_tb_per_s * 1e12),
                           moe::moe_flops(shape) / (ctx.ceilings->matrix_tflops * 1e12)) * 1e6;
    ratio = t.total / roofline_us;
  }
  fmt::print("{:>6} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.1f} {:>8.2f} {:>8.2f}", M, t.sort,
             t.stage1, t.stage2, t.total, traffic.total() / 1e6, tbps, tflops);
  if (ctx.ceilings) fmt::print(" {:>9.2f} {:>6.2f}x", roofline_us, ratio);
  fmt::print("  {} {}\n", check.passed ? "PASS" : "FAIL", check.passed ? "" : check.detail);
  return {{"roofline_us", roofline_us}, {"ratio_to_roofline", ratio},{"dtype", std::string(moe::to_string(shape.dtype))}, {"hidden", shape.hidden},
          {"inter", shape.inter}, {"experts", shape.experts}, {"topk", shape.topk}, {"M", M},
          {"stage1_config", pair.stage1.name()}, {"stage2_config", pair.stage2.name()},
          {"sort_us", t.sort}, {"stage1_us", t.stage1}, {"stage2_us", t.stage2},
          {"total_us", t.total}, {"total_samples_us", samples[3]}, {"bytes", traffic.total()},
          {"tb_per_s", tbps}, {"tflop_per_s", tflops}, {"weight_copies", copies},
          {"correct", check.passed}, {"check", check.detail}, {"max_abs", check.max_abs}};
}

// docs/performance.md's table: regenerated by the command it names, never edited by hand.
void write_markdown_table(const BenchOptions& opt, const gpu::Device& device,
                          const Ceilings& ceilings, const nlohmann::json& rows) {
  std::string md = "# Kernel speed against the roofline\n\n";
  md += fmt::format("Generated by `{}` on {} ({}, driver {}). Routing {}, {} weights, median of "
                    "{} graph replays of {} launches.\n\n",
                    command_line(), device.info().name, device.info().arch,
                    device.info().driver_version, opt.routing,
                    opt.hot ? "hot" : "cold (rotated copies)", opt.samples, opt.repeats);
  md += launch_overlap(opt, device)
            ? "Kernels launched with overlap (each MoE kernel's CTAs start during the previous "
              "kernel and wait on the device for it).\n\n"
            : "Kernels launched serially (no overlap).\n\n";
  if (opt.roofline) {
    md += fmt::format("Roofline = max(bytes that must move / {:.3f} TB/s measured copy rate, FLOPs "
                      "/ {:.0f} TFLOP/s bf16 matrix rate (given, not measured)).\n\n",
                      ceilings.copy_tb_per_s, ceilings.matrix_tflops);
  }
  md += "| shape | dtype | M | configuration | sort µs | stage 1 µs | stage 2 µs | total µs | MB moved "
        "| TB/s | roofline µs | ratio | correct |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (auto const& r : rows) {
    md += fmt::format("| E{} top{} H{} I{} | {} | {} | `{}` + `{}` | {:.1f} | {:.1f} | {:.1f} | "
                      "**{:.1f}** | {:.0f} | {:.2f} | {:.1f} | {:.2f}x | {} |\n",
                      r["experts"].get<std::int64_t>(), r["topk"].get<std::int64_t>(),
                      r["hidden"].get<std::int64_t>(), r["inter"].get<std::int64_t>(),
                      r["dtype"].get<std::string>(), r["M"].get<std::int64_t>(),
                      r["stage1_config"].get<std::string>(), r["stage2_config"].get<std::string>(),
                      r["sort_us"].get<double>(), r["stage1_us"].get<double>(),
                      r["stage2_us"].get<double>(), r["total_us"].get<double>(),
                      r["bytes"].get<double>() / 1e6, r["tb_per_s"].get<double>(),
                      r["roofline_us"].get<double>(), r["ratio_to_roofline"].get<double>(),
                      r["correct"].get<bool>() ? "yes" : "**no**");
  }
  write_file_atomically(opt.markdown_path, md);
}

void run_bench(const BenchOptions& opt, int& exit_code) {
  // The named pairs first: a misspelt name or a pair whose stages cannot run together is
  // reported without a GPU, before anything is compiled or timed.
  for (auto const& config : opt.configs) {
    if (config == "default") continue;
    auto const pair = configs_for(config, moe::MoeShape{}, search::Arch::sm_90, 1);
    if (auto const why = search::pair_violation(pair.stage1, pair.stage2))
      throw Error(fmt::format("--config '{}': {}", config, *why));
  }
  auto const probe = gpu::probe_gpu();
  if (!probe.available) {
    fmt::print("bench needs a GPU: {}\n", probe.reason);
    exit_code = 1;
    return;
  }
  gpu::Device device(0);
  auto const arch = search::parse_arch(device.info().arch);
  auto const extra_options =
      opt.line_info ? jit::line_info_options(search::to_string(arch)) : std::vector<std::string>{};
  exec::UnitCompiler compiler(arch, opt.cache_dir, true, {}, extra_options);
  if (opt.line_info) fmt::print("kernels built with source line tables ({})\n", fmt::join(extra_options, " "));
  nlohmann::json json_rows = nlohmann::json::array();
  bool all_correct = true;

  fmt::print("{} ({}), {} SMs, L2 {:.0f} MiB, launches {}\n", device.info().name,
             device.info().arch, device.info().compute_units, device.info().l2_bytes / 1048576.0,
             launch_overlap(opt, device) ? "overlapped" : "serial");
  Ceilings ceilings;
  if (opt.roofline) {
    ceilings = measure_ceilings(device, opt.matrix_tflops);
    fmt::print("ceilings: copy {:.3f} TB/s (measured now: 1 GiB device-to-device, median of {}); "
               "bf16 matrix {:.0f} TFLOP/s (given by --matrix-tflops, not measured)\n",
               ceilings.copy_tb_per_s, ceilings.copy_samples_tb_per_s.size(),
               ceilings.matrix_tflops);
  }
  std::vector<double> repack_seconds;
  for (auto const& base : opt.shape.shapes_for(arch)) {
    fmt::print("\nshape H={} I={} E={} topk={} {}, routing {}, {} weights, {} launches per "
               "replay, median of {} replays\n",
               base.hidden, base.inter, base.experts, base.topk, moe::to_string(base.dtype),
               opt.routing, opt.hot ? "hot" : "cold (rotated)", opt.repeats, opt.samples);
    exec::Verifier verifier(device, compiler, base, opt.seed);
    if (base.dtype != moe::DtypePath::bf16) {
      // The `_rp` and `_wg` kernels' weight layouts are prepared once here, as an engine
      // would at load time; never inside a timed MoE.
      auto const& w0 = verifier.device_weights().copy(0);
      double const mb = static_cast<double>(w0.w1_repacked.size() + w0.w2_repacked.size()) / 1e6;
      double const tiled_mb = static_cast<double>(w0.w1_tiles.size() + w0.w1_tile_scales.size() + w0.w2_tiles.size() +
                                                  w0.w2_tile_scales.size() + w0.w2_tiles_a16w4.size()) / 1e6;
      repack_seconds.push_back(verifier.device_weights().repack_seconds());
      fmt::print("weights: {:.0f} MB of MXFP4 codes repacked for `_rp` kernels and {:.0f} MB of codes and scales "
                 "tiled for `_wg` kernels in {:.1f} ms on the host (load time, not timed)\n", mb, tiled_mb,
                 repack_seconds.back() * 1e3);
    }
    BenchContext const ctx{opt, opt.roofline ? &ceilings : nullptr, device, arch, compiler,
                           verifier, moe::parse_routing_spec(opt.routing)};
    compile_all(compiler, opt, base, arch);
    fmt::print("{:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}", "M", "sort us", "stage1 us",
               "stage2 us", "total us", "MB moved", "TB/s", "TFLOP/s");
    if (opt.roofline) fmt::print(" {:>9} {:>7}", "roof us", "ratio");
    fmt::print("  correctness\n");
    for (auto const M : opt.ms) {
      for (auto const& config : opt.configs) {
        auto const pair = configs_for(config, base, arch, M);
        if (opt.configs.size() > 1) {
          fmt::print("{:>6}  {} + {}\n", "", pair.stage1.name(), pair.stage2.name());
        }
        auto row = bench_pair(ctx, pair, M);
        all_correct = all_correct && row["correct"].get<bool>();
        json_rows.push_back(std::move(row));
      }
    }
  }
  if (!opt.json_path.empty()) {
    nlohmann::json out{{"device", device.info().name}, {"arch", device.info().arch},
                       {"driver", device.info().driver_version},
                       {"compiler", compiler.compiler().identity()}, {"routing", opt.routing},
                       {"hot", opt.hot}, {"repeats", opt.repeats}, {"samples", opt.samples},
                       {"launch_overlap", launch_overlap(opt, device)},
                       {"weight_repack_seconds", repack_seconds}, {"rows", json_rows}};
    if (opt.roofline) {
      out["ceilings"] = {{"copy_tb_per_s", ceilings.copy_tb_per_s},
                         {"copy_samples_tb_per_s", ceilings.copy_samples_tb_per_s},
                         {"copy_method", "1 GiB device-to-device copy, bytes read + written"},
                         {"matrix_tflops", ceilings.matrix_tflops},
                         {"matrix_method", "given (--matrix-tflops), not measured"}};
    }
    write_file_atomically(opt.json_path, out.dump(2) + "\n");
  }
  if (!opt.markdown_path.empty()) write_markdown_table(opt, device, ceilings, json_rows);
  exit_code = all_correct ? 0 : 1;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<BenchOptions>();
  opt->shape.dtypes = {"a16w4"};
  auto* cmd = app.add_subcommand(
      "bench", "Time configuration pairs on the GPU (sort, stage one, stage two, total) and "
               "check it against the CPU reference");
  opt->shape.add_to(*cmd);
  cmd->add_option("--m", opt->ms, "Token counts to run")->capture_default_str();
  cmd->add_option("--config", opt->configs,
                  "Pairs to run, each 'default' (the baseline heuristic) or "
                  "'STAGE1_NAME,STAGE2_NAME'")
      ->capture_default_str();
  cmd->add_option("--repeats", opt->repeats, "Launches per graph replay")->capture_default_str();
  cmd->add_option("--samples", opt->samples, "Timed replays per part")->capture_default_str();
  cmd->add_option("--json", opt->json_path, "Also write the figures as JSON");
  cmd->add_flag("--roofline", opt->roofline,
                "Measure the copy bandwidth first and print each row's roofline and ratio");
  cmd->add_option("--matrix-tflops", opt->matrix_tflops,
                  "bf16 matrix ceiling for --roofline (not measured: no vendor BLAS)")
      ->capture_default_str();
  cmd->add_flag("--no-launch-overlap", opt->no_launch_overlap,
                "Time the MoE with its kernels launched serially instead of overlapping each "
                "launch with the previous kernel's tail (the check still runs the default)");
  cmd->add_option("--markdown", opt->markdown_path,
                  "Also write the rows as a Markdown table (docs/performance.md)");
  cmd->add_flag("--line-info", opt->line_info,
                "Build the kernels with source line tables (NVRTC -lineinfo; NVIDIA only), so that "
                "a profiler's source page maps its counters to lines of kernels/; cached apart");
  opt->add_measurement_options(*cmd, "Workload seed");
  cmd->callback([opt, &exit_code] { run_bench(*opt, exit_code); });
}

}  // namespace moetune::app
