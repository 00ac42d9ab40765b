#include "autotune/jit/amdgpu_metadata.hpp"

#include <fmt/format.h>

#include <sstream>

#include "autotune/core/error.hpp"
#include "autotune/core/subprocess.hpp"
#include "autotune/jit/temp_dir.hpp"

namespace moetune::jit {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

int to_int(std::string_view text) {
  try {
    return std::stoi(std::string(text));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

std::map<std::string, ResourceUsage> parse_amdgpu_notes(std::string_view notes) {
  // readelf prints the metadata as YAML. Each kernel is a "- " item under amdhsa.kernels; its
  // own keys sit at the item's indentation + 2, deeper keys belong to .args and are skipped.
  struct Pending {
    std::string name;
    ResourceUsage usage;
    int vgprs = -1;
    int agprs = 0;
  };
  std::map<std::string, ResourceUsage> out;
  Pending kernel;
  bool in_kernels = false;
  std::size_t key_column = std::string::npos;
  auto const flush = [&] {
    if (kernel.name.empty()) return;
    if (kernel.vgprs >= 0) kernel.usage.registers = kernel.vgprs + kernel.agprs;
    out[kernel.name] = kernel.usage;
    kernel = Pending{};
  };

  std::istringstream lines{std::string(notes)};
  std::string line;
  while (std::getline(lines, line)) {
    std::size_t const column = line.find_first_not_of(' ');
    if (column == std::string::npos) continue;
    std::string_view body = std::string_view(line).substr(column);
    if (body.starts_with("amdhsa.")) {
      flush();
      in_kernels = body.starts_with("amdhsa.kernels:");
      continue;
    }
    if (!in_kernels) continue;
    std::size_t key_at = column;
    if (body.starts_with("- ")) {
      if (key_column == std::string::npos || column + 2 == key_column) {
        flush();
        key_column = column + 2;
      }
      body.remove_prefix(2);
      key_at = column + 2;
    }
    if (key_at != key_column || !body.starts_with('.')) continue;
    std::size_t const colon = body.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view const key = body.substr(0, colon);
    std::string_view const value = trim(body.substr(colon + 1));
    if (key == ".name") {
      kernel.name = std::string(value);
    } else if (key == ".vgpr_count") {
      kernel.vgprs = to_int(value);
    } else if (key == ".agpr_count") {
      kernel.agprs = to_int(value);
    } else if (key == ".sgpr_count") {
      kernel.usage.sgprs = to_int(value);
    } else if (key == ".group_segment_fixed_size") {
      kernel.usage.shared_bytes = to_int(value);
    } else if (key == ".private_segment_fixed_size") {
      kernel.usage.scratch_bytes = to_int(value);
    } else if (key == ".vgpr_spill_count") {
      kernel.usage.spill_bytes = 4 * to_int(value);
    }
  }
  flush();
  return out;
}

std::string llvm_readelf_path() {
  for (auto const* name : {"llvm-readelf-22", "llvm-readelf"}) {
    if (auto const path = find_program(name, {"/usr/lib/llvm-22/bin"})) return path->string();
  }
  throw Error(
      "llvm-readelf-22 is not installed (needed to read AMDGPU kernel resources; Debian/Ubuntu: "
      "apt-get install llvm-22)");
}

bool is_elf(std::span<const std::byte> image) {
  return image.size() >= 4 && image[0] == std::byte{0x7f} && image[1] == std::byte{'E'} &&
         image[2] == std::byte{'L'} && image[3] == std::byte{'F'};
}

std::map<std::string, ResourceUsage> read_amdgpu_resources(std::span<const std::byte> elf) {
  TempDir const dir("moetune-readelf");
  auto const path = dir.path() / "code_object.elf";
  write_scratch_file(path, elf);
  ProcessResult const run = run_process({llvm_readelf_path(), "--notes", path.string()});
  if (run.exit_code != 0) {
    throw Error(fmt::format("llvm-readelf --notes failed ({}): {}", run.exit_code, run.output));
  }
  return parse_amdgpu_notes(run.output);
}

}  // namespace moetune::jit
