#include "autotune/exec/verifier.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/exec/moe_pipeline.hpp"
#include "autotune/exec/replay_timer.hpp"
#include "autotune/moe/reference.hpp"
#include "autotune/moe/sorting.hpp"

namespace moetune::exec {
namespace {

constexpr std::uint8_t nan_fill = 0xFF;  // bf16 0xFFFF, fp32 0xFFFFFFFF, e4m3 0xFF and e8m0 0xFF are NaN

bool is_bf16_nan_or_inf(std::uint16_t v) { return (v & 0x7F80u) == 0x7F80u; }

// Every element of y must have been written with a finite value.
std::int64_t count_non_finite_y(const std::vector<std::uint16_t>& y) {
  return std::count_if(y.begin(), y.end(), is_bf16_nan_or_inf);
}

// Every column of every real slot's h row must have been written: bf16 h holds no NaN, e4m3
// codes no 0xFF/0x7F (NaN, never produced by the saturating quantiser), scales no 0xFF.
std::int64_t count_unwritten_h(const moe::MoeShape& shape, bool fp8_h, std::int64_t slots,
                               const std::vector<std::uint8_t>& h,
                               const std::vector<std::uint8_t>& h_scales) {
  std::int64_t bad = 0;
  if (fp8_h) {
    for (std::int64_t i = 0; i < slots * shape.inter; ++i) {
      auto const c = h[static_cast<std::size_t>(i)];
      bad += (shape.fp8_flavor == moe::Fp8Flavor::ocp ? (c & 0x7F) == 0x7F : c == 0x80) ? 1 : 0;
    }
    for (std::int64_t i = 0; i < slots * shape.inter / 32; ++i) {
      bad += h_scales[static_cast<std::size_t>(i)] == 0xFF ? 1 : 0;
    }
  } else {
    auto const* bits = reinterpret_cast<const std::uint16_t*>(h.data());
    for (std::int64_t i = 0; i < slots * shape.inter; ++i) bad += is_bf16_nan_or_inf(bits[i]) ? 1 : 0;
  }
  return bad;
}

const jit::CompileResult& compiled(UnitCompiler& compiler, const search::KernelConfig& config) {
  auto const& outcome = compiler.compile(config);
  if (outcome.status != jit::CompileStatus::ok) {
    throw Error(fmt::format("{} does not compile:\n{}", config.name(), outcome.log_head));
  }
  return outcome.result;
}

std::string routing_name(const moe::RoutingSpec& r) { return moe::to_string(r); }

moe::RoutingSpec routing_of(moe::RoutingKind kind) {
  moe::RoutingSpec spec;
  spec.kind = kind;
  return spec;
}

}  // namespace

std::optional<AiterErr> aiter_err_at(const VerifyReport& report, std::int64_t token) {
  for (auto const& c : report.checks) {
    if (c.m == token && c.routing == moe::RoutingSpec{} && c.aiter_err1 && c.aiter_err2)
      return AiterErr{*c.aiter_err1, *c.aiter_err2};
  }
  return std::nullopt;
}

bool VerifyReport::passed() const {
  return !checks.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const CheckResult& c) { return c.passed; });
}

const CheckResult* VerifyReport::first_failure() const {
  for (auto const& c : checks) {
    if (!c.passed) return &c;
  }
  return nullptr;
}

Verifier::Verifier(const gpu::Device& device, UnitCompiler& compiler, const moe::MoeShape& base,
                   std::uint64_t seed, const std::function<void(moe::Weights&)>& edit_weights)
    : m_device(&device),
      m_compiler(&compiler),
      m_seed(seed),
      m_workload([&] {
        auto shape = base;
        shape.tokens = 1;
        moe::WorkloadOptions options;
        options.seed = seed;
        auto workload = moe::make_workload(shape, options);
        if (edit_weights) edit_weights(workload.w);
        return workload;
      }()),
      m_weights(device, m_workload.shape, m_workload.w),
      m_checksum(device, compiler.compiler()),
      m_weights_checksum(weights_checksum()) {}

std::uint64_t Verifier::weights_checksum() const {
  auto const& w = m_weights.copy(0);
  return m_checksum.of(w.all());
}

void Verifier::set_tokens(std::int64_t M, const moe::RoutingSpec& routing, std::uint64_t seed) {
  // The tuner's check runs every pipeline of a bucket on the same inputs: generating them
  // again (79 ms for backbone M = 768 on a 2-core host) was most of the check phase.
  auto key = std::make_tuple(M, moe::to_string(routing), seed);
  if (m_inputs_key == key) return;
  m_inputs_key.reset();  // not valid while the new inputs are made (an exception leaves none)
  m_workload.shape.tokens = M;
  m_workload.x = moe::make_activations(m_workload.shape, seed);
  m_workload.routing =
      moe::make_routing(routing, M, m_workload.shape.experts, m_workload.shape.topk, seed);
  m_inputs_key = std::move(key);
}

const moe::ReferenceRows& Verifier::reference_for(std::int64_t M, const moe::RoutingSpec& routing,
                                                 std::uint64_t seed) {
  auto key = std::make_tuple(M, moe::to_string(routing), seed);
  if (auto it = m_references.find(key); it != m_references.end()) return it->second;
  auto const tokens = moe::sample_tokens(M, seed);
  return m_references.emplace(key, moe::reference_rows(m_workload, tokens)).first->second;
}

CheckResult Verifier::check(const search::KernelConfig& s1, const search::KernelConfig& s2,
                            std::int64_t M, const moe::RoutingSpec& routing, bool check_inputs,
                            const moe::Tolerance& tolerance) {
  CheckResult result;
  result.name = fmt::format("M={} {}", M, routing_name(routing));
  result.m = M;
  result.routing = routing;
  auto const arch = m_compiler->arch();
  std::uint64_t const seed = m_seed * 1000003 + static_cast<std::uint64_t>(M);
  set_tokens(M, routing, seed);
  auto const& shape = m_workload.shape;
  DeviceInputs inputs(*m_device, shape, m_workload.x, m_workload.routing);
  MoePipeline pipeline(*m_device, arch, shape, M, s1, compiled(*m_compiler, s1), s2,
                       compiled(*m_compiler, s2));
  std::string inputs_before;
  if (check_inputs) inputs_before = inputs.digest();
  pipeline.fill_outputs(nan_fill);
  gpu::Stream stream(*m_device);
  pipeline.enqueue(inputs, m_weights, stream);
  stream.synchronize();

  std::vector<std::string> problems;
  // The sort, entry by entry.
  auto const expected_sort = moe::sort_tokens(m_workload.routing, s1.block_m);
  if (auto mismatch = moe::first_sort_mismatch(expected_sort, pipeline.download_sorted_slots(),
                                               pipeline.download_block_expert(),
                                               pipeline.download_num_blocks())) {
    problems.push_back(fmt::format("{}: {}", gate_names::sort, *mismatch));
  }
  // Write coverage.
  auto const y = pipeline.download_y();
  if (auto const bad = count_non_finite_y(y); bad > 0) {
    problems.push_back(fmt::format("{}: {} of {} y elements NaN/Inf (unwritten or overflow)",
                                   gate_names::write_coverage, bad, y.size()));
  }
  auto const h = pipeline.download_h();
  bool const fp8_h = search::h_is_fp8(s1);
  // An A8W4 pair keeping h in bf16 (`_hb`) stores MXFP8-quantised values as bf16.
  bool const mxfp8_values_h = shape.dtype == moe::DtypePath::a8w4 && !fp8_h;
  std::span<const std::uint16_t> const h_bf16(reinterpret_cast<const std::uint16_t*>(h.data()),
                                              fp8_h ? 0 : h.size() / 2);
  if (auto const bad = count_unwritten_h(shape, fp8_h, M * shape.topk, h, pipeline.download_h_scales());
      bad > 0) {
    problems.push_back(fmt::format("{}: {} stage-one elements of real slots unwritten",
                                   gate_names::write_coverage, bad));
  } else if (mxfp8_values_h) {
    if (auto const off = moe::count_blocks_off_mxfp8_grid(h_bf16, shape.inter, shape.fp8_flavor); off > 0)
      problems.push_back(fmt::format("{}: {} of {} 32-column blocks of the bf16 h are not MXFP8 values (e4m3 x one "
                                     "power of two): stage one did not quantise h",
                                     gate_names::intermediate, off, h_bf16.size() / 32));
  }
  // Against the reference, on the token sample.
  auto const& reference = reference_for(M, routing, seed);
  auto const cmp = moe::compare_output(y, reference, tolerance);
  result.max_abs = cmp.max_abs;
  result.max_rel = cmp.max_rel;
  if (!cmp.passed()) problems.push_back(fmt::format("{}: {}", gate_names::output, cmp.summary()));
  // Stage one's output on the same slots: a wrong h that stage two happens to hide (a column
  // stage two's tile never reads) would otherwise pass. Both paths compare dequantised values
  // with the reference after its rounding point, under the run's tolerance; MXFP8 adds the
  // e4m3 rounding allowance that compare_intermediate_mxfp8 states.
  auto const h_scales = pipeline.download_h_scales();
  auto compare_h = [&](const moe::Tolerance& t) {
    if (fp8_h) return moe::compare_intermediate_mxfp8(h, h_scales, shape.fp8_flavor, reference, t);
    if (mxfp8_values_h) return moe::compare_intermediate_mxfp8_bf16(h_bf16, shape.fp8_flavor, reference, t);
    return moe::compare_intermediate_bf16(h_bf16, reference, t);
  };
  auto const hc = compare_h(tolerance);
  if (!hc.passed()) problems.push_back(fmt::format("{}: {}", gate_names::intermediate, hc.summary()));
  // AITER's err columns: the same elements under checkAllclose's tolerance (the MXFP8 h keeps
  // its e4m3 rounding allowance: both sides quantise on their own).
  result.aiter_err1 = compare_h(moe::aiter_err_tolerance).mismatch_share();
  result.aiter_err2 = moe::compare_output(y, reference, moe::aiter_err_tolerance).mismatch_share();
  if (check_inputs) {
    if (inputs.digest() != inputs_before) {
      problems.push_back(fmt::format("{}: inputs (x, routing) were modified", gate_names::input_preservation));
    }
    if (weights_checksum() != m_weights_checksum) {
      problems.push_back(fmt::format("{}: weights were modified", gate_names::input_preservation));
    }
  }
  result.passed = problems.empty();
  result.detail = problems.empty() ? cmp.summary() + (check_inputs ? "; inputs and weights unchanged" : "")
                                   : fmt::format("{}", fmt::join(problems, "; "));
  return result;
}

CheckResult Verifier::check_graph_replay(const search::KernelConfig& s1,
                                         const search::KernelConfig& s2, std::int64_t M,
                                         const moe::Tolerance& tolerance) {
  CheckResult result;
  result.name = fmt::format("graph replay M={}: changed inputs, then restored", M);
  auto const arch = m_compiler->arch();
  moe::RoutingSpec uniform;
  std::uint64_t const seed_a = m_seed * 7919 + static_cast<std::uint64_t>(M);
  std::uint64_t const seed_b = seed_a + 1;

  auto const round_robin = routing_of(moe::RoutingKind::round_robin);
  set_tokens(M, uniform, seed_a);
  auto const x_a = m_workload.x;
  auto const routing_a = m_workload.routing;
  auto const& ref_a = reference_for(M, uniform, seed_a);
  set_tokens(M, round_robin, seed_b);
  auto const x_b = m_workload.x;
  auto const routing_b = m_workload.routing;
  auto const& ref_b = reference_for(M, round_robin, seed_b);

  DeviceInputs inputs(*m_device, m_workload.shape, x_a, routing_a);
  MoePipeline pipeline(*m_device, arch, m_workload.shape, M, s1, compiled(*m_compiler, s1), s2,
                       compiled(*m_compiler, s2));
  pipeline.fill_outputs(nan_fill);
  gpu::Stream stream(*m_device);
  auto const graph = capture_repeats(pipeline, inputs, m_weights, stream, PipelinePart::all, 1);

  std::vector<std::string> problems;
  graph.launch(stream);
  stream.synchronize();
  auto const y_a = pipeline.download_y();
  auto const cmp_a = moe::compare_output(y_a, ref_a, tolerance);
  if (!cmp_a.passed()) {
    problems.push_back(fmt::format("{}: original inputs: {}", gate_names::graph_replay, cmp_a.summary()));
  }

  inputs.upload_activations(x_b);
  inputs.upload_routing(routing_b);
  graph.launch(stream);
  stream.synchronize();
  auto const cmp_b = moe::compare_output(pipeline.download_y(), ref_b, tolerance);
  if (!cmp_b.passed()) {
    problems.push_back(fmt::format("{}: changed inputs (the graph must read them, not values "
                                   "baked in at capture): {}",
                                   gate_names::graph_replay, cmp_b.summary()));
  }

  inputs.upload_activations(x_a);
  inputs.upload_routing(routing_a);
  graph.launch(stream);
  stream.synchronize();
  auto const y_restored = pipeline.download_y();
  auto const cmp_r = moe::compare_output(y_restored, ref_a, tolerance);
  double const drift = moe::max_abs_difference(y_a, y_restored);
  if (!cmp_r.passed()) {
    problems.push_back(fmt::format("{}: restored inputs: {}", gate_names::graph_replay, cmp_r.summary()));
  }
  // A reduce stage two is deterministic: the restored output must be bit-identical. Atomic
  // accumulation order may differ between replays; its drift is reported.
  if (s2.stage2_mode == search::Stage2Mode::reduce && drift != 0.0) {
    problems.push_back(fmt::format("{}: restored output differs from the original by {:.3g} "
                                   "(deterministic variant)",
                                   gate_names::graph_replay, drift));
  }
  result.max_abs = std::max({cmp_a.max_abs, cmp_b.max_abs, cmp_r.max_abs});
  result.passed = problems.empty();
  result.detail = problems.empty()
                      ? fmt::format("original, changed and restored outputs match their references "
                                    "(max_abs {:.3g}); restored vs original differ by {:.3g}",
                                    result.max_abs, drift)
                      : fmt::format("{}", fmt::join(problems, "; "));
  return result;
}

VerifyReport Verifier::verify(const search::KernelConfig& stage1,
                              const search::KernelConfig& stage2, const VerifyOptions& options) {
  VerifyReport report;
  report.stage1 = stage1.name();
  report.stage2 = stage2.name();
  std::set<std::int64_t> ms(options.bucket_ms.begin(), options.bucket_ms.end());
  std::set<std::int64_t> const boundary_ms{31, 32, 33, 255, 256, 257};
  if (options.boundaries) ms.insert(boundary_ms.begin(), boundary_ms.end());
  // "M=257 uniform (boundary M)", "M=33 uniform (lowest M bucket 64 serves)": which gate-1
  // role made the check, so a failure at one end of a bucket's range says so.
  auto named = [&](std::int64_t M, const std::string& routing) {
    std::vector<std::string> roles;
    if (options.boundaries && boundary_ms.contains(M)) roles.emplace_back(gate_names::boundary_m);
    if (auto it = options.m_roles.find(M); it != options.m_roles.end()) roles.push_back(it->second);
    auto name = fmt::format("M={} {}", M, routing);
    return roles.empty() ? name : fmt::format("{} ({})", name, fmt::join(roles, ", "));
  };
  moe::RoutingSpec uniform;
  auto const concentrated = routing_of(moe::RoutingKind::concentrated);
  bool first = true;
  auto add = [&](CheckResult r) {
    report.worst_max_abs = std::max(report.worst_max_abs, r.max_abs);
    report.worst_max_rel = std::max(report.worst_max_rel, r.max_rel);
    report.checks.push_back(std::move(r));
  };
  // A check that throws (a launch error, a unit that does not compile) is a failed check
  // with the message, not the end of the verification.
  auto guarded = [&](const std::string& name, auto&& run) {
    auto const start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    try {
      auto r = run();
      r.name = name;
      r.seconds = elapsed();
      add(std::move(r));
    } catch (const Error& e) {
      CheckResult failed;
      failed.name = name;
      failed.detail = e.what();
      failed.seconds = elapsed();
      add(std::move(failed));
    }
  };
  for (auto const M : ms) {
    guarded(named(M, routing_name(uniform)), [&] {
      auto r = check(stage1, stage2, M, uniform, first, options.tolerance);
      first = false;
      return r;
    });
  }
  auto const checked_ms = options.bucket_ms.empty() ? std::vector<std::int64_t>{257} : options.bucket_ms;
  if (options.concentrated) {
    for (auto const M : checked_ms) {
      guarded(named(M, routing_name(concentrated)), [&] {
        return check(stage1, stage2, M, concentrated, false, options.tolerance);
      });
    }
  }
  // The pair is timed under this routing: it must be right under it too.
  if (options.routing != uniform && options.routing != concentrated) {
    for (auto const M : checked_ms) {
      guarded(named(M, routing_name(options.routing)), [&] {
        return check(stage1, stage2, M, options.routing, false, options.tolerance);
      });
    }
  }
  if (options.graph_replay) {
    std::int64_t const M = options.bucket_ms.empty() ? 33 : options.bucket_ms.front();
    guarded(fmt::format("graph replay M={}: changed inputs, then restored", M),
            [&] { return check_graph_replay(stage1, stage2, M, options.tolerance); });
  }
  return report;
}

std::vector<std::uint16_t> Verifier::run_once(const search::KernelConfig& stage1,
                                              const search::KernelConfig& stage2, std::int64_t M) {
  set_tokens(M, moe::RoutingSpec{}, m_seed * 31 + static_cast<std::uint64_t>(M));
  DeviceInputs inputs(*m_device, m_workload.shape, m_workload.x, m_workload.routing);
  MoePipeline pipeline(*m_device, m_compiler->arch(), m_workload.shape, M, stage1,
                       compiled(*m_compiler, stage1), stage2, compiled(*m_compiler, stage2));
  gpu::Stream stream(*m_device);
  pipeline.enqueue(inputs, m_weights, stream);
  stream.synchronize();
  return pipeline.download_y();
}

}  // namespace moetune::exec
