// A Spec is refused before any backend sees it when it breaks the rules of
// docs/design.md#the-spec.
#pragma once

#include <sandbox_host/spec.hpp>

#include <sys/un.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace sandbox_host {

// The longest ProxySocket: the proxy listens on it, and a sandbox's init connects to it, by
// path, which a unix socket address holds with its NUL.
inline constexpr std::size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;

class SpecError : public std::runtime_error {
 public:
  SpecError(const std::string &plugin, const std::string &field, const std::string &what);
  const std::string &field() const noexcept { return field_; }

 private:
  std::string field_;
};

// Paths absolute, clean and symlink-resolved (each equals its realpath), BinaryPath an
// executable regular file, SocketDir and TmpDir directories, no NUL or newline anywhere.
void check_spec(const Spec &spec);

}  // namespace sandbox_host
