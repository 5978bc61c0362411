// What the seatbelt probe answers on the Linux hosts these tests run on.
#pragma once

#include <filesystem>
#include <string>

namespace sandbox_host::seatbelt::test {

inline std::string expected_linux_reason() {
  // A file of that name on Linux is not Apple's; the probe says so instead of "not found".
  return std::filesystem::exists("/usr/bin/sandbox-exec")
             ? "seatbelt is macOS only: /usr/bin/sandbox-exec exists, but this sandbox-host was "
               "built for another system"
             : "sandbox-exec not found: seatbelt is macOS only";
}

}  // namespace sandbox_host::seatbelt::test
