#include "autotune/measure/gpu_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/exec/delay_unit.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/moe/mx_formats.hpp"
#include "autotune/moe/workload.hpp"
#include "autotune/measure/served_tokens.hpp"

namespace moetune::measure {

GpuSampler::GpuSampler(const gpu::Device& device, search::Arch arch, exec::UnitCompiler& compiler,
                       GpuSamplerOptions options)
    : m_device(device),
      m_arch(arch),
      m_compiler(compiler),
      m_opt(std::move(options)),
      m_stream(device),
      m_timer(device) {
  if (!m_opt.test_faults.empty()) {
    m_test_faults =
        std::make_unique<TestFaultInjector>(device, compiler.compiler(), m_opt.test_faults);
  }
}

GpuSampler::~GpuSampler() {
  // Graphs and pipelines reference the block's buffers: release them first, then the rest.
  m_arms.clear();
}

void GpuSampler::begin_bucket(const BucketPlan& bucket) {
  m_arms.clear();
  m_kept = false;
  m_inputs.reset();
  m_weights.reset();
  m_M = bucket.M;
  // A plan made by hand (no CSV row) may leave the key's token unset: its M is then the token.
  m_token = bucket.key.token > 0 ? bucket.key.token : bucket.M;
  m_shape = bucket.shape;
  m_shape.tokens = m_M;
  // The Verifier holds the seeded weights (seconds to generate for DeepSeek shapes): keep it
  // across buckets that differ only in M.
  auto base = m_shape;
  base.tokens = 1;
  if (!m_verifier || [&] {
        auto held = m_verifier->shape();
        held.tokens = 1;
        return !(held == base);
      }()) {
    m_verifier.reset();
    m_boundaries_passed.clear();
    m_verifier = std::make_unique<exec::Verifier>(m_device, m_compiler, base, m_opt.weight_seed);
  }
}

std::unique_ptr<exec::MoePipeline> GpuSampler::make_pipeline(const TunePair& pair, std::int64_t M) {
  auto const& u1 = m_compiler.compile(pair.stage1);
  auto const& u2 = m_compiler.compile(pair.stage2);
  auto shape = m_shape;
  shape.tokens = M;
  return std::make_unique<exec::MoePipeline>(m_device, m_arch, shape, M, pair.stage1, u1.result,
                                             pair.stage2, u2.result);
}

Preparation GpuSampler::prepare(const TunePair& pair) {
  for (auto const* cfg : {&pair.stage1, &pair.stage2}) {
    auto const& o = m_compiler.compile(*cfg);
    if (o.status != jit::CompileStatus::ok) {
      return {Outcome::compile_error,
              fmt::format("{}: {}", cfg->name(), o.log_head.empty() ? o.result.log : o.log_head)};
    }
  }
  try {
    (void)make_pipeline(pair, m_M);  // loads both code objects and resolves every kernel
  } catch (const std::exception& e) {
    return {Outcome::launch_error, e.what()};
  }
  return {};
}

Verification GpuSampler::quick_check(const TunePair& pair) {
  Verification v;
  try {
    // Under the routing the candidate will be timed with: its timings only mean something
    // if it computes the right thing on exactly those inputs.
    auto const r = m_verifier->check(pair.stage1, pair.stage2, m_M, m_opt.routing, false,
                                     m_opt.tolerance);
    v.passed = r.passed;
    v.checks = 1;
    v.max_abs = r.max_abs;
    v.max_rel = r.max_rel;
    v.detail = fmt::format("{}: {}", r.name, r.detail);
    v.failure = Outcome::wrong_result;
  } catch (const std::exception& e) {
    v.passed = false;
    v.failure = Outcome::launch_error;
    v.detail = e.what();
  }
  return v;
}

Verification GpuSampler::verify(const TunePair& pair, const TunePair& baseline) {
  Verification v;
  try {
    exec::VerifyOptions vo;
    // The timed M and both ends of the range AITER serves from this bucket's row.
    vo.bucket_ms = verification_ms(m_token, m_M);
    auto const served = served_tokens(m_token);
    vo.m_roles[served.lowest] = fmt::format("lowest M bucket {} serves", m_token);
    vo.m_roles[served.highest] = fmt::format("highest M bucket {} serves", m_token);
    if (auto& role = vo.m_roles[m_M]; role.empty()) role = "timed M";
    else role += ", timed M";
    vo.routing = m_opt.routing;
    vo.tolerance = m_opt.tolerance;
    // The boundary checks (M = 31 ... 257, input preservation) do not depend on the bucket:
    // a pair that passed them for this shape is not run through them again for the next M.
    auto const name = pair.name();
    bool const boundaries_done = m_boundaries_passed.count(name) > 0;
    vo.boundaries = !boundaries_done;
    auto const report = m_verifier->verify(pair.stage1, pair.stage2, vo);
    if (report.passed() && !boundaries_done) m_boundaries_passed.insert(name);
    v.passed = report.passed();
    v.checks = static_cast<int>(report.checks.size());
    v.max_abs = report.worst_max_abs;
    v.max_rel = report.worst_max_rel;
    if (auto const* f = report.first_failure()) {
      v.detail = fmt::format("{}: {}", f->name, f->detail);
      v.failure = Outcome::wrong_result;
      // err columns are only written for qualified (hence passing) pairs; a failing pair is
      // marked "all wrong" in the report rather than given a share of one check.
      v.err1 = v.err2 = 1.0;
      return v;
    }
    v.detail = fmt::format("{} checks passed", v.checks);
    // AITER's err1 / err2: mismatch shares under checkAllclose's tolerance at M = token
    // (the gates above use the run's own, wider tolerance and passed).
    auto const err = exec::aiter_err_at(report, m_token);
    if (!err) throw Error(fmt::format("verification of {} has no uniform check at M = {} (token)", name, m_token));
    v.err1 = err->err1;
    v.err2 = err->err2;
    // How far tuning moved numerics: both pipelines on identical fresh inputs.
    auto const y = m_verifier->run_once(pair.stage1, pair.stage2, m_M);
    auto const y0 = m_verifier->run_once(baseline.stage1, baseline.stage2, m_M);
    double worst = 0;
    for (std::size_t i = 0; i < std::min(y.size(), y0.size()); ++i) {
      double const d = std::fabs(static_cast<double>(moe::bf16_to_float(y[i])) -
                                 static_cast<double>(moe::bf16_to_float(y0[i])));
      worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
    }
    v.max_abs_vs_baseline = worst;
  } catch (const std::exception& e) {
    v.passed = false;
    v.failure = Outcome::launch_error;
    v.detail = e.what();
  }
  return v;
}

void GpuSampler::begin_block(const BlockSpec& block) {
  // The block's tokens: the bucket's M unless the block says otherwise (the stage times of a
  // row are taken at its `token`, BlockSpec::M).
  std::int64_t const M = block.M.value_or(m_M);
  if (M < 1) throw std::invalid_argument(fmt::format("begin_block: M = {} tokens", M));
  int R = block.repeats.value_or(m_opt.repeats);
  int const warmups = block.warmup_replays.value_or(m_opt.warmup_replays);
  if (R < 1 || warmups < 0) {
    throw std::invalid_argument(fmt::format("begin_block: {} repeats, {} warm-up replays", R, warmups));
  }
  // A kept block after a kept block of the same kind goes on with its inputs, weights and
  // the arms it names again (#15); everything else starts fresh.
  bool const reuse = block.keep_arms && m_kept && m_inputs && m_weights &&
                     m_inputs->tokens() == M && m_kept_units == block.units && m_kept_repeats == R;
  std::vector<ArmState> reused;
  if (reuse) {
    for (auto& s : m_arms) {
      bool const named = std::any_of(block.arms.begin(), block.arms.end(), [&](const Arm& a) {
        return a.label == s.label && a.pair.name() == s.pair_name && a.delay_ns == s.delay_ns;
      });
      if (named) reused.push_back(std::move(s));
    }
    m_arms.clear();  // the arms this block does not name again: released here
  } else {
    m_arms.clear();  // graphs and pipelines of the previous block
  }
  m_kept = block.keep_arms;
  m_kept_units = block.units;
  m_kept_repeats = R;
  if (!reuse) {
    // New inputs and weights are allocated while the old ones still exist, so they cannot
    // land on the same addresses: the point of a block is a new placement. Alone that only
    // alternates between two placements (block 2 gets block 0's addresses back); the declared
    // pad of random size, allocated first and held for the block, shifts every later buffer.
    std::unique_ptr<gpu::DeviceBuffer> pad;
    if (block.placement_pad_bytes > 0) {
      pad = std::make_unique<gpu::DeviceBuffer>(m_device, block.placement_pad_bytes);
    }
    m_placement_pad = std::move(pad);
    auto shape = m_shape;
    shape.tokens = M;
    auto const x = moe::make_activations(shape, block.seed);
    auto const routing =
        moe::make_routing(m_opt.routing, M, shape.experts, shape.topk, block.seed);
    auto inputs = std::make_unique<exec::DeviceInputs>(m_device, shape, x, routing);
    // Fresh allocations (a new placement), filled from the verifier's device copy.
    auto weights = std::make_unique<exec::DeviceWeights>(
        m_device, m_verifier->device_weights(),
        exec::cold_weight_copies(m_device, shape, routing,
                                 m_verifier->device_weights().bytes_per_copy(), m_opt.hot));
    // The arms' scratch is allocated below in the block's build order (declared, balanced).
    m_inputs = std::move(inputs);
    m_weights = std::move(weights);
  }
  // A block that asks for fewer launches than the sampler's R (the screen's 4) gets one launch
  // per weight copy, up to that R: with fewer, a replay would revisit its first copies while
  // they are still in L2, and the screen would rank warm weights (a small shape, whose touched
  // weights are a fraction of the L2, needs many copies to be cold). Never more than every
  // other phase's R, so the screen stays the cheapest timing of a bucket.
  if (block.repeats && R < m_opt.repeats) R = std::min(std::max(R, m_weights->copies()), m_opt.repeats);

  auto wants = [&](TimedUnit u) {
    return std::find(block.units.begin(), block.units.end(), u) != block.units.end();
  };
  using exec::PipelinePart;
  for (auto const& arm : block.arms) {
    auto const kept = std::find_if(reused.begin(), reused.end(),
                                   [&](const ArmState& s) { return s.label == arm.label; });
    if (kept != reused.end()) {
      m_arms.push_back(std::move(*kept));  // built, captured and warmed in an earlier block
      reused.erase(kept);
      continue;
    }
    try {
      if (m_build_observer) m_build_observer(arm.label);
      ArmState s;
      s.label = arm.label;
      s.pair_name = arm.pair.name();
      s.delay_ns = arm.delay_ns;
      s.repeats = R;
      s.pipeline = make_pipeline(arm.pair, M);
      if (m_test_faults) m_test_faults->inject(s.pair_name, TestFault::When::build, m_stream);
      if (arm.delay_ns) s.pipeline->set_delay(delay_unit(), *arm.delay_ns);
      // A full run first: stage two alone reads the slots and h a full run leaves.
      s.pipeline->enqueue(*m_inputs, *m_weights, m_stream);
      m_stream.synchronize();
      auto capture = [&](PipelinePart part) {
        auto g = exec::capture_repeats(*s.pipeline, *m_inputs, *m_weights, m_stream, part, R);
        for (int w = 0; w < warmups; ++w) (void)replay(g, R);
        return g;
      };
      if (wants(TimedUnit::full)) s.full = capture(PipelinePart::all);
      if (wants(TimedUnit::stage1)) {
        s.sort = capture(PipelinePart::sort);
        s.sort_stage1 = capture(PipelinePart::stage1);
      }
      if (wants(TimedUnit::stage2)) s.stage2 = capture(PipelinePart::stage2);
      m_arms.push_back(std::move(s));
    } catch (const SamplerError&) {
      throw;
    } catch (const std::exception& e) {
      throw SamplerError(Outcome::launch_error, arm.label,
                         fmt::format("{}: building for block {} failed: {}", arm.pair.name(),
                                     block.index, e.what()));
    }
  }
}

void GpuSampler::release_arm(std::string_view arm) {
  std::erase_if(m_arms, [&](const ArmState& s) { return s.label == arm; });
}

const jit::CompileResult& GpuSampler::delay_unit() {
  // Compiled once per sampler, outside the code cache: one tiny unit, well under a second.
  if (!m_delay_unit) {
    m_delay_unit = jit::compile_unit(m_compiler.compiler(), nullptr, exec::delay_unit_source());
  }
  if (m_delay_unit->status != jit::CompileStatus::ok) {
    throw Error(fmt::format("the delay kernel did not compile: {}", m_delay_unit->result.log));
  }
  return m_delay_unit->result;
}

double GpuSampler::replay(const gpu::GraphExec& graph, int repeats) {
  return m_timer.time_us(graph, m_stream, repeats);
}

double GpuSampler::sample_us(std::string_view arm, TimedUnit unit) {
  auto it = std::find_if(m_arms.begin(), m_arms.end(),
                         [&](const ArmState& s) { return s.label == arm; });
  if (it == m_arms.end()) throw Error(fmt::format("GpuSampler: no arm '{}' in this block", arm));
  try {
    if (m_test_faults) m_test_faults->inject(it->pair_name, TestFault::When::sample, m_stream);
    switch (unit) {
      case TimedUnit::full:
        if (!it->full) break;
        return replay(*it->full, it->repeats);
      case TimedUnit::stage1:
        if (!it->sort || !it->sort_stage1) break;
        // Stage one alone = (sort + stage one) - sort, sampled back to back.
        return std::max(0.0, replay(*it->sort_stage1, it->repeats) -
                                  replay(*it->sort, it->repeats));
      case TimedUnit::stage2:
        if (!it->stage2) break;
        return replay(*it->stage2, it->repeats);
    }
  } catch (const std::exception& e) {
    throw SamplerError(Outcome::launch_error, std::string(arm), e.what());
  }
  throw Error(fmt::format("GpuSampler: unit {} was not captured for arm '{}'", to_string(unit),
                          arm));
}

}  // namespace moetune::measure
