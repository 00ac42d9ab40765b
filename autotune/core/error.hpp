#pragma once
// Error types. Everything that can go wrong is thrown as one of these and caught once, in
// main, which prints it and exits non-zero. Each carries what a user needs to act on it.
#include <cstdint>
#include <filesystem>
#include <source_location>
#include <stdexcept>
#include <string>

namespace moetune {

// Base of every moe-tune error; what() is the complete, user-facing message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input: a file, a line and a column (1-based; 0 = not applicable) and what was
// expected there. Formatted like a compiler diagnostic: "file:line:col: error: ...".
class InputError : public Error {
 public:
  InputError(std::filesystem::path file, std::int64_t line, std::int64_t column,
             std::string message);

  [[nodiscard]] const std::filesystem::path& file() const { return m_file; }
  [[nodiscard]] std::int64_t line() const { return m_line; }
  [[nodiscard]] std::int64_t column() const { return m_column; }
  [[nodiscard]] const std::string& message() const { return m_message; }

 private:
  std::filesystem::path m_file;
  std::int64_t m_line;
  std::int64_t m_column;
  std::string m_message;
};

// A file that cannot be opened, read, written or renamed into place.
class FileError : public Error {
 public:
  FileError(std::filesystem::path file, std::string action, std::string reason);
  [[nodiscard]] const std::filesystem::path& file() const { return m_file; }

 private:
  std::filesystem::path m_file;
};

// A failed GPU runtime call: the call, the vendor's error name and text, the device and the
// place in our source that made the call.
class GpuError : public Error {
 public:
  GpuError(std::string call, int code, std::string code_name, std::string code_text,
           std::string device, std::source_location where);
  [[nodiscard]] int code() const { return m_code; }
  [[nodiscard]] const std::string& code_name() const { return m_code_name; }

 private:
  int m_code;
  std::string m_code_name;
};

// Formats "file:line:col: " (omitting zero line/column) for diagnostics.
[[nodiscard]] std::string format_location(const std::filesystem::path& file, std::int64_t line,
                                          std::int64_t column);

}  // namespace moetune
