// A word for a POSIX shell line that sandbox-host writes (a script, a hook's command, an
// unset line to eval): whatever bytes it holds, the shell reads it back as that one word.
#pragma once

#include <string>
#include <string_view>

namespace sandbox_host {

// word in single quotes, each ' in it as '\''.
inline std::string shell_quoted(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace sandbox_host
