// What a launch's Spec gives its plugin, as `run --learn` judges each attempt: the system's
// grants every Linux backend makes (system_paths.hpp), the private /proc, /dev and /tmp of
// the namespaces backend, and the Spec's own (read_paths, binary_path, socket_dir, tmp_dir,
// the proxy's socket and egress directory, network). It judges by the Spec and the backend's
// rules, never by unix permissions: the host may be root where the plugin is nobody.
#pragma once

#include <sandbox_host/host/learn/call_shape.hpp>
#include <sandbox_host/host/learn/socket_endpoint.hpp>
#include <sandbox_host/spec.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::learn {

class SpecGrants {
 public:
  // backend: the mode the launch runs under ("namespaces", "landlock", ...).
  SpecGrants(const Spec &spec, std::string_view backend);

  // Whether the plugin may do use to the absolute, clean path.
  bool grants(const std::string &path, FileUse use) const;
  // Whether a connect or send to the endpoint leaves the sandbox as the Spec lets it.
  bool grants(const Endpoint &to) const;

  // Whether path is a directory on the way to a grant (a strict ancestor of one): the
  // namespaces backend shows it with the grants alone in it, Landlock refuses listing it,
  // and neither is a reason to grant it whole.
  bool on_the_way(const std::string &path) const;

  Network network() const noexcept { return network_; }
  bool namespaces() const noexcept { return namespaces_; }

 private:
  bool namespaces_ = false;
  Network network_ = Network::none;
  std::uint16_t proxy_port_ = 0;
  std::vector<std::string> read_roots_;   // read and look, recursively
  std::vector<std::string> write_roots_;  // everything, recursively
  // The namespaces backend's private /tmp and /dev/shm: the plugin's own files, never the
  // host's at the same path.
  std::vector<std::string> private_roots_;
  std::vector<std::string> visible_;  // directories the mount tree holds grants in
  std::string socket_dir_;
};

// Whether path is dir or lies below it (both absolute and clean).
bool covers(std::string_view dir, std::string_view path);

}  // namespace sandbox_host::learn
