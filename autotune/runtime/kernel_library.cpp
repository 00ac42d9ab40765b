#include "autotune/runtime/kernel_library.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::runtime {
namespace {

// The first non-empty line of a compiler log: enough to say why, short enough for a report.
std::string first_line(const std::string& log) {
  std::size_t start = 0;
  while (start < log.size()) {
    auto const end = log.find('\n', start);
    auto line = log.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "no compiler output";
}

}  // namespace

KernelLibrary::KernelLibrary(const gpu::Device& device, search::Arch arch,
                             std::filesystem::path cache_dir)
    : m_device(&device), m_arch(arch), m_compiler(arch, std::move(cache_dir)) {}

std::optional<std::string> KernelLibrary::prepare(const search::KernelConfig& config) {
  auto const name = config.name();
  if (auto const it = m_units.find(name); it != m_units.end()) {
    if (it->second.module) return std::nullopt;
    return first_line(it->second.outcome->result.log);
  }
  auto& unit = m_units[name];
  unit.outcome = &m_compiler.compile(config);
  if (unit.outcome->status != jit::CompileStatus::ok || !unit.outcome->result.ok) {
    return first_line(unit.outcome->result.log);
  }
  try {
    unit.module.emplace(*m_device, unit.outcome->result.image);
  } catch (const Error& e) {
    m_units.erase(name);
    return fmt::format("the code object does not load: {}", e.what());
  }
  return std::nullopt;
}

gpu::Kernel KernelLibrary::kernel(const search::KernelConfig& config,
                                  const search::KernelLaunch& launch) const {
  auto const it = m_units.find(config.name());
  if (it == m_units.end() || !it->second.module) {
    throw Error(fmt::format("{} was not prepared", config.name()));
  }
  for (auto const& k : it->second.outcome->result.kernels) {
    if (k.name_expression != launch.kernel_name) continue;
    auto kernel = it->second.module->function(k.lowered_name);
    if (launch.dynamic_shared_bytes > 48 * 1024) {
      kernel.set_max_dynamic_shared_bytes(launch.dynamic_shared_bytes);
    }
    return kernel;
  }
  throw Error(fmt::format("{}: the launch plan names {}, which the unit does not contain",
                          config.name(), launch.kernel_name));
}

std::string KernelLibrary::provenance(const search::KernelConfig& config) const {
  auto const it = m_units.find(config.name());
  if (it == m_units.end()) return "";
  return it->second.outcome->cache_hit ? "cache" : "compiled";
}

}  // namespace moetune::runtime
