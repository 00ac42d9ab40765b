#pragma once
// The runtime's errors carry the kind the C API reports as a status code (moetune.h); the
// message is the ordinary moetune::Error text.
#include <string>

#include "autotune/core/error.hpp"

namespace moetune::runtime {

enum class ErrorKind {
  null_pointer,
  invalid_argument,
  dtype,
  shape,
  device,
  table,
  compile,
  workspace,
  gpu,
  internal,
};

class RuntimeError : public Error {
 public:
  RuntimeError(ErrorKind kind, const std::string& message) : Error(message), m_kind(kind) {}
  [[nodiscard]] ErrorKind kind() const { return m_kind; }

 private:
  ErrorKind m_kind;
};

}  // namespace moetune::runtime
