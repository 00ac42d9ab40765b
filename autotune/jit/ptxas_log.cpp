#include "autotune/jit/ptxas_log.hpp"

#include <regex>
#include <sstream>

namespace moetune::jit {

std::map<std::string, ResourceUsage> parse_ptxas_log(std::string_view log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");

  std::map<std::string, ResourceUsage> out;
  std::string current;
  std::istringstream lines{std::string(log)};
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, entry) || std::regex_search(line, match, properties)) {
      current = match[1].str();
      out.try_emplace(current);
    } else if (current.empty()) {
      continue;
    } else if (std::regex_search(line, match, frame)) {
      out[current].scratch_bytes = std::stoi(match[1].str());
      out[current].spill_bytes = std::stoi(match[2].str());
    } else if (std::regex_search(line, match, used)) {
      ResourceUsage& usage = out[current];
      usage.registers = std::stoi(match[1].str());
      usage.shared_bytes = std::regex_search(line, match, smem) ? std::stoi(match[1].str()) : 0;
    }
  }
  return out;
}

std::map<std::string, std::string> serialized_wgmma(std::string_view log) {
  static const std::regex warning(
      R"(\((C751\d)\) Potential Performance Loss: wgmma\.mma_async instructions are serialized due to (.*?) (?:for|in) the function '([^']+)')");
  std::map<std::string, std::string> out;
  std::istringstream lines{std::string(log)};
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, warning)) out[match[3].str()] = match[1].str() + ": " + match[2].str();
  }
  return out;
}

}  // namespace moetune::jit
