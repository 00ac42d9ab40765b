#include <string>

#include "apps/moe-tune/commands.hpp"

namespace moetune::app {
namespace {

std::string g_command_line;

// POSIX shell quoting: plain words stay as they are, anything else goes in single quotes.
std::string quoted(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word) {
    bool const ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    plain = plain && ok;
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

const std::string& command_line() { return g_command_line; }

void set_command_line(int argc, char** argv) {
  g_command_line.clear();
  for (int i = 0; i < argc; ++i) {
    if (i > 0) g_command_line += ' ';
    g_command_line += quoted(argv[i]);
  }
}

}  // namespace moetune::app
