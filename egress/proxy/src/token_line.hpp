// What the file and the command readers of a token share (token_keeper.cpp,
// token_command.cpp): how much a read may give, and the one line it must hold.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace sandbox_host::egress {

// A token is a line of a few dozen bytes; a reader given more is not given one.
constexpr std::size_t kMaxTokenOutput = 64 * 1024;

// "5 s", or "250 ms" for a duration of no whole seconds.
std::string describe(std::chrono::milliseconds duration);

// The one line a read gave, trimmed; what is wrong with it (none, more than one, a control
// character) is a TokenReadError that names source, where it came from.
std::string one_line(std::string_view text, const std::string &source, const std::string &subject);

}  // namespace sandbox_host::egress
