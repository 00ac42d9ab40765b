#pragma once
// One GPU as an engine uses it: the device (CUDA: its primary context, shared with torch),
// the tuned tables loaded so far and the kernels compiled and loaded for its layers.
#include <filesystem>
#include <memory>
#include <mutex>

#include "autotune/gpu/gpu.hpp"
#include "autotune/runtime/kernel_library.hpp"
#include "autotune/runtime/layer_key.hpp"
#include "autotune/runtime/prepared_layer.hpp"
#include "autotune/runtime/prepared_weights.hpp"
#include "autotune/runtime/tuned_tables.hpp"

namespace moetune::runtime {

class RuntimeContext {
 public:
  // Throws RuntimeError(device) when there is no usable GPU or moe-tune has no kernels for
  // its arch. cache_dir empty: moe-tune's default code cache.
  RuntimeContext(int device_ordinal, std::filesystem::path cache_dir);

  // Throws RuntimeError(table) with the reader's message.
  void load_table(const std::filesystem::path& file);

  // Resolves, compiles and prepares the layer (bucket_choice.hpp, prepared_layer.hpp), logs
  // once what it chose, and returns it with its JSON report.
  [[nodiscard]] std::unique_ptr<PreparedLayer> prepare(const LayerSpec& layer,
                                                       const LayerWeights& weights);

  [[nodiscard]] const gpu::Device& device() const { return *m_device; }
  [[nodiscard]] const DeviceIdentity& identity() const { return m_identity; }
  [[nodiscard]] search::Arch arch() const { return m_arch; }

 private:
  std::unique_ptr<gpu::Device> m_device;
  search::Arch m_arch;
  DeviceIdentity m_identity;
  std::mutex m_mutex;  // tables, kernels and prepare
  TunedTables m_tables;
  std::unique_ptr<KernelLibrary> m_kernels;
};

// The report of a prepared layer, JSON (moetune_layer_report).
[[nodiscard]] std::string layer_report_json(const PreparedLayer& layer, const gpu::Device& device,
                                            const DeviceIdentity& identity,
                                            const KernelLibrary& kernels, std::size_t tables);

}  // namespace moetune::runtime
