#include "token_line.hpp"

#include <sandbox_host/egress/proxy/token_keeper.hpp>

#include <algorithm>

namespace sandbox_host::egress {

using std::chrono::milliseconds;

std::string describe(milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
  return std::to_string(duration.count()) + " ms";
}

namespace {

std::string_view trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace

std::string one_line(std::string_view text, const std::string &source, const std::string &subject) {
  const std::string_view line = trimmed(text);
  if (line.empty()) throw TokenReadError("no " + subject + " in " + source);
  if (const auto lines = std::count(line.begin(), line.end(), '\n'); lines > 0) {
    throw TokenReadError(source + " holds " + std::to_string(lines + 1) + " lines; the " + subject +
                         " is one line");
  }
  const bool printable = std::none_of(line.begin(), line.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (!printable) {
    throw TokenReadError(source + " holds a control character in its " + subject);
  }
  return std::string(line);
}

}  // namespace sandbox_host::egress
