// `moe-tune bench`: run configuration pairs on the GPU for a shape and a list of M, check
// it against the CPU reference, and print the time of the sort, each stage and the whole MoE,
// the bytes that must move, achieved TB/s and TFLOP/s. A benchmark, not a test: it reports
// figures and asserts nothing about speed.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/shape_options.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/exec/replay_timer.hpp"
#include "autotune/exec/verifier.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/stats/order_statistics.hpp"

namespace moetune::app {
namespace {

struct BenchOptions {
  ShapeOptions shape;
  std::vector<std::int64_t> ms{8};
  std::vector<std::string> configs{"default"};
  std::string routing = "uniform";
  bool hot = false;
  int repeats = 16;
  int samples = 15;
  std::uint64_t seed = 1;
  std::string cache_dir;
  std::string json_path;
};

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

struct PartTimes {
  double sort = 0, stage1 = 0, stage2 = 0, total = 0;  // µs, medians
};

struct BenchContext {
  const BenchOptions& opt;
  const gpu::Device& device;
  search::Arch arch;
  exec::UnitCompiler& compiler;
  exec::Verifier& verifier;
  moe::RoutingSpec routing;
};

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
  exec::DeviceWeights weights(ctx.device, shape, ctx.verifier.workload().w, copies);
  exec::MoePipeline pipeline(ctx.device, ctx.arch, shape, M, pair.stage1,
                             ctx.compiler.compile(pair.stage1).result, pair.stage2,
                             ctx.compiler.compile(pair.stage2).result);
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
  for (int w = 0; w < 3; ++w) (void)timer.time_us(graphs.back(), stream, opt.repeats);  // warm-up
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
  fmt::print("{:>6} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.1f} {:>8.2f} {:>8.2f}  {} {}\n", M,
             t.sort, t.stage1, t.stage2, t.total, traffic.total() / 1e6, tbps, tflops,
             check.passed ? "PASS" : "FAIL", check.passed ? "" : check.detail);
  return {{"dtype", std::string(moe::to_string(shape.dtype))}, {"hidden", shape.hidden},
          {"inter", shape.inter}, {"experts", shape.experts}, {"topk", shape.topk}, {"M", M},
          {"stage1_config", pair.stage1.name()}, {"stage2_config", pair.stage2.name()},
          {"sort_us", t.sort}, {"stage1_us", t.stage1}, {"stage2_us", t.stage2},
          {"total_us", t.total}, {"total_samples_us", samples[3]}, {"bytes", traffic.total()},
          {"tb_per_s", tbps}, {"tflop_per_s", tflops}, {"weight_copies", copies},
          {"correct", check.passed}, {"check", check.detail}, {"max_abs", check.max_abs}};
}

void run_bench(const BenchOptions& opt, int& exit_code) {
  auto const probe = gpu::probe_gpu();
  if (!probe.available) {
    fmt::print("bench needs a GPU: {}\n", probe.reason);
    exit_code = 1;
    return;
  }
  gpu::Device device(0);
  auto const arch = search::parse_arch(device.info().arch);
  exec::UnitCompiler compiler(arch, opt.cache_dir);
  nlohmann::json json_rows = nlohmann::json::array();
  bool all_correct = true;

  fmt::print("{} ({}), {} SMs, L2 {:.0f} MiB\n", device.info().name, device.info().arch,
             device.info().compute_units, device.info().l2_bytes / 1048576.0);
  for (auto const& base : opt.shape.shapes_for(arch)) {
    fmt::print("\nshape H={} I={} E={} topk={} {}, routing {}, {} weights, {} launches per "
               "replay, median of {} replays\n",
               base.hidden, base.inter, base.experts, base.topk, moe::to_string(base.dtype),
               opt.routing, opt.hot ? "hot" : "cold (rotated)", opt.repeats, opt.samples);
    exec::Verifier verifier(device, compiler, base, opt.seed);
    BenchContext const ctx{opt, device, arch, compiler, verifier,
                           moe::parse_routing_spec(opt.routing)};
    fmt::print("{:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}  {}\n", "M", "sort us",
               "stage1 us", "stage2 us", "total us", "MB moved", "TB/s", "TFLOP/s",
               "correctness");
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
                       {"rows", json_rows}};
    write_file_atomically(opt.json_path, out.dump(2) + "\n");
  }
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
  cmd->add_option("--routing", opt->routing,
                  "uniform, round_robin, concentrated, zipf:S or file:PATH")
      ->capture_default_str();
  cmd->add_flag("--hot", opt->hot, "Do not rotate weight copies (weights may stay in L2)");
  cmd->add_option("--repeats", opt->repeats, "Launches per graph replay")->capture_default_str();
  cmd->add_option("--samples", opt->samples, "Timed replays per part")->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Workload seed")->capture_default_str();
  cmd->add_option("--cache-dir", opt->cache_dir, "Code cache directory");
  cmd->add_option("--json", opt->json_path, "Also write the figures as JSON");
  cmd->callback([opt, &exit_code] { run_bench(*opt, exit_code); });
}

}  // namespace moetune::app
