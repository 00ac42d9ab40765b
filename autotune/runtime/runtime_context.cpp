#include "autotune/runtime/runtime_context.hpp"

#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "autotune/gpu/availability.hpp"
#include "autotune/runtime/runtime_error.hpp"

namespace moetune::runtime {
namespace {

void check_layer(const LayerSpec& layer, const LayerWeights& w) {
  if (auto const errors = moe::validation_errors(layer.shape); !errors.empty()) {
    throw RuntimeError(ErrorKind::shape, fmt::format("layer {}: {}", moe::to_string(layer.shape),
                                                     fmt::join(errors, "; ")));
  }
  // M * topk slot ids are int32 on the device.
  auto const most = std::numeric_limits<std::int32_t>::max() / std::max(1, layer.shape.topk) / 2;
  if (layer.max_tokens < 1 || layer.max_tokens > most) {
    throw RuntimeError(ErrorKind::invalid_argument,
                       fmt::format("max_tokens={} must be in [1, {}]", layer.max_tokens, most));
  }
  bool const mxfp4 = layer.shape.dtype != moe::DtypePath::bf16;
  char const* missing = w.w1 == nullptr                  ? "w1"
                        : w.w2 == nullptr                ? "w2"
                        : mxfp4 && !w.w1_scales          ? "w1_scales (MXFP4 weights need them)"
                        : mxfp4 && !w.w2_scales          ? "w2_scales (MXFP4 weights need them)"
                                                         : nullptr;
  if (missing != nullptr) {
    throw RuntimeError(ErrorKind::null_pointer, fmt::format("layer weights: {} is NULL", missing));
  }
}

// "1, 2, 4" from the buckets of one source.
std::string token_list(const std::vector<PreparedBucket>& buckets, ChoiceSource source) {
  std::vector<std::int64_t> tokens;
  for (auto const& b : buckets) {
    if (b.choice.source == source) tokens.push_back(b.choice.tokens);
  }
  return tokens.empty() ? "none" : fmt::format("{}", fmt::join(tokens, ", "));
}

}  // namespace

RuntimeContext::RuntimeContext(int device_ordinal, std::filesystem::path cache_dir) {
  auto const probe = gpu::probe_gpu();
  if (!probe.available) {
    throw RuntimeError(ErrorKind::device, fmt::format("no usable GPU: {}", probe.reason));
  }
  if (device_ordinal < 0 || device_ordinal >= probe.device_count) {
    throw RuntimeError(ErrorKind::device, fmt::format("device {} requested, {} GPU(s) present",
                                                      device_ordinal, probe.device_count));
  }
  try {
    m_device = std::make_unique<gpu::Device>(device_ordinal);
    m_arch = search::parse_arch(m_device->info().arch);
  } catch (const Error& e) {
    throw RuntimeError(ErrorKind::device, e.what());
  }
  m_identity = DeviceIdentity{m_device->info().arch, m_device->info().compute_units};
  m_kernels = std::make_unique<KernelLibrary>(*m_device, m_arch, std::move(cache_dir));
}

void RuntimeContext::load_table(const std::filesystem::path& file) {
  std::lock_guard lock(m_mutex);
  try {
    m_tables.load(file);
  } catch (const Error& e) {
    throw RuntimeError(ErrorKind::table, e.what());
  }
  spdlog::info("moetune: loaded tuned table {} ({} rows in {} table(s))", file.string(),
               m_tables.row_count(), m_tables.table_count());
}

std::unique_ptr<PreparedLayer> RuntimeContext::prepare(const LayerSpec& requested,
                                                       const LayerWeights& weights) {
  LayerSpec layer = requested;
  layer.shape.tokens = 1;
  layer.shape.gate_up = moe::GateUpLayout::interleaved;  // AITER's fMoE layout
  layer.shape.fp8_flavor = m_arch == search::Arch::gfx942 ? moe::Fp8Flavor::fnuz : moe::Fp8Flavor::ocp;
  check_layer(layer, weights);
  std::lock_guard lock(m_mutex);
  m_device->make_current();
  auto choices = choose_buckets(layer, m_arch, m_identity, m_tables,
                                [&](const search::KernelConfig& c) { return m_kernels->prepare(c); });
  LayoutsNeeded w1_layouts, w2_layouts;
  for (auto const& c : choices) {
    for (auto [cfg, need] : {std::pair{&c.stage1, &w1_layouts}, std::pair{&c.stage2, &w2_layouts}}) {
      auto const layout = search::weight_layout(*cfg);
      need->repacked = need->repacked || layout == search::WeightLayout::repacked;
      need->wgmma_tiles = need->wgmma_tiles || layout == search::WeightLayout::wgmma_tiles;
      need->wgmma_tiles_a16w4 = need->wgmma_tiles_a16w4 || layout == search::WeightLayout::wgmma_tiles_a16w4;
    }
  }
  auto prepared_weights =
      std::make_unique<PreparedWeights>(*m_device, layer.shape, weights, w1_layouts, w2_layouts);
  auto result = std::make_unique<PreparedLayer>(layer, m_arch, std::move(choices), *m_kernels,
                                                std::move(prepared_weights));
  result->set_report_json(
      layer_report_json(*result, *m_device, m_identity, *m_kernels, m_tables.table_count()));

  // Said once, here: forward never logs.
  auto const& buckets = result->buckets();
  spdlog::info("moetune: layer {} up to {} tokens on {} ({} CUs): tuned rows for tokens {}; "
               "default configuration for tokens {} (no row){}",
               moe::to_string(layer.shape), layer.max_tokens, m_identity.arch,
               m_identity.compute_units, token_list(buckets, ChoiceSource::tuned_row),
               token_list(buckets, ChoiceSource::default_no_row),
               result->weights().repacked_bytes() + result->weights().tiled_bytes() > 0
                   ? fmt::format("; {:.1f} MB of MXFP4 weights rearranged (repacked, wgmma tiles) in {:.2f} s",
                                 static_cast<double>(result->weights().repacked_bytes() +
                                                     result->weights().tiled_bytes()) / 1e6,
                                 result->weights().repack_seconds())
                   : "");
  for (auto const& b : buckets) {
    if (b.choice.source != ChoiceSource::default_row_rejected) continue;
    spdlog::warn("moetune: row {} (tokens {}) not used, default configuration instead: {}",
                 b.choice.row_origin, b.choice.tokens, b.choice.rejection);
  }
  return result;
}

std::string layer_report_json(const PreparedLayer& layer, const gpu::Device& device,
                              const DeviceIdentity& identity, const KernelLibrary& kernels,
                              std::size_t tables) {
  auto const& s = layer.spec().shape;
  nlohmann::json buckets = nlohmann::json::array();
  std::size_t max_workspace = 0;
  for (auto const& b : layer.buckets()) {
    max_workspace = std::max(max_workspace, b.plan.workspace.total);
    buckets.push_back({{"tokens", b.choice.tokens},
                       {"planned_tokens", b.plan.planned_tokens},
                       {"source", std::string(to_string(b.choice.source))},
                       {"row", b.choice.row_origin},
                       {"rejection", b.choice.rejection},
                       {"kernel_name1", b.stage1_name},
                       {"kernel_name2", b.stage2_name},
                       {"unit1", kernels.provenance(b.choice.stage1)},
                       {"unit2", kernels.provenance(b.choice.stage2)},
                       {"workspace_bytes", b.plan.workspace.total}});
  }
  nlohmann::json report{
      {"device", {{"name", device.info().name}, {"arch", identity.arch},
                  {"compute_units", identity.compute_units}}},
      {"layer", {{"hidden", s.hidden}, {"inter", s.inter}, {"experts", s.experts},
                 {"topk", s.topk}, {"dtype", std::string(moe::to_string(s.dtype))},
                 {"doweight_stage1", s.doweight_stage1}, {"max_tokens", layer.spec().max_tokens},
                 {"tag", layer.spec().tag}}},
      {"tables_loaded", tables},
      {"buckets", buckets},
      {"max_workspace_bytes", max_workspace},
      {"repacked_weight_bytes", layer.weights().repacked_bytes()},
      {"wgmma_tiled_weight_bytes", layer.weights().tiled_bytes()},
      {"repack_seconds", layer.weights().repack_seconds()}};
  return report.dump();
}

}  // namespace moetune::runtime
