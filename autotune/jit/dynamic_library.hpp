#pragma once
// A shared library opened at run time (the runtime compilers, so that a build runs on machines
// that lack one of them and says which). Unloading is never done: compilers keep global state
// and are used until the process exits.
#include <string>
#include <vector>

namespace moetune::jit {

class DynamicLibrary {
 public:
  // Tries each candidate (a soname or a path) in order; throws Error listing every attempt and
  // its dlerror() if none loads.
  explicit DynamicLibrary(const std::vector<std::string>& candidates, std::string what);

  // The address of `symbol`; throws Error naming the library and the symbol if absent.
  [[nodiscard]] void* symbol(const char* name) const;
  template <class Fn>
  void bind(Fn*& slot, const char* name) const {
    slot = reinterpret_cast<Fn*>(symbol(name));
  }
  [[nodiscard]] const std::string& loaded_from() const { return m_path; }
  // The file name the loaded library resolves to after symlinks ("libnvrtc.so.13.0.88"):
  // carries the exact version where the library's API reports only major.minor.
  [[nodiscard]] std::string resolved_file() const;

 private:
  void* m_handle = nullptr;
  std::string m_path;
};

}  // namespace moetune::jit
