// The service manager's variables, read once and taken out of serve's environment.
#pragma once

#include <charconv>
#include <optional>
#include <string>

namespace sandbox_host::service_variables {

// The variable's value, removed from the environment whether or not it is used (unsetenv:
// before any thread starts).
std::optional<std::string> take(const char *name);

// The whole of text as a decimal number, or nullopt.
template <typename Number>
std::optional<Number> number(const std::string &text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace sandbox_host::service_variables
