// A parameter of the tests that launch through the real command line under each Linux
// backend, as root and as nobody: its name in the test's name, "namespaces_nobody".
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <sstream>
#include <string>

namespace sandbox_host::test {

struct BackendCase {
  enum class User { root, nobody };
  const char *backend;
  User user;
};

// namespaces and landlock, each as root and as nobody.
inline constexpr BackendCase kLinuxBackendCases[] = {
    {"namespaces", BackendCase::User::root},
    {"namespaces", BackendCase::User::nobody},
    {"landlock", BackendCase::User::root},
    {"landlock", BackendCase::User::nobody},
};

inline void PrintTo(const BackendCase &c, std::ostream *out) {
  *out << c.backend << (c.user == BackendCase::User::root ? "_root" : "_nobody");
}

inline std::string backend_case_name(const ::testing::TestParamInfo<BackendCase> &info) {
  std::ostringstream name;
  PrintTo(info.param, &name);
  return name.str();
}

}  // namespace sandbox_host::test
