#include <sandbox_host/host/learn/spec_grants.hpp>

#include <sandbox_host/system_paths.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>

namespace sandbox_host::learn {
namespace {

std::string resolved(const std::string &path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : path;
}

}  // namespace

bool covers(std::string_view dir, std::string_view path) {
  if (dir == "/") return path.starts_with('/');
  return path == dir ||
         (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

SpecGrants::SpecGrants(const Spec &spec, std::string_view backend)
    : namespaces_(backend == "namespaces"),
      network_(spec.network),
      proxy_port_(spec.proxy_port),
      socket_dir_(spec.socket_dir) {
  for (const char *dir : kSystemDirs) {
    read_roots_.push_back(dir);
    // A merged /usr's /bin leads to /usr/bin, granted with it.
    read_roots_.push_back(resolved(dir));
  }
  for (const char *entry : kEtcEntries) {
    read_roots_.push_back(entry);
    read_roots_.push_back(resolved(entry));
  }
  for (const char *device : kDevices) {
    write_roots_.push_back(std::string("/dev/") + device);
  }
  for (const auto &path : spec.read_paths) read_roots_.push_back(path);
  if (!spec.binary_path.empty()) read_roots_.push_back(spec.binary_path);
  for (const auto *dir : {&spec.socket_dir, &spec.tmp_dir}) {
    if (!dir->empty()) write_roots_.push_back(*dir);
  }
  if (spec.network == Network::proxied) {
    if (!spec.proxy_socket.empty()) read_roots_.push_back(spec.proxy_socket);
    if (!spec.egress_dir.empty()) read_roots_.push_back(spec.egress_dir);
  }
  if (namespaces_) {
    // The sandbox's own: a /proc of its pid namespace, /dev's links and shm, a private /tmp.
    read_roots_.push_back("/proc");
    for (const char *link : {"/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr"}) {
      read_roots_.push_back(link);
    }
    // Its own tmpfs, empty at the start: whatever the plugin reads there it wrote there
    // itself, and a path the host has there is the host's, which a read grant would bind in.
    private_roots_.push_back("/dev/shm");
    private_roots_.push_back("/tmp");
    for (const auto &roots : {read_roots_, write_roots_}) {
      for (const auto &root : roots) {
        for (auto dir = std::filesystem::path(root).parent_path(); !dir.empty();
             dir = dir.parent_path()) {
          visible_.push_back(dir.string());
          if (dir == dir.root_path()) break;
        }
      }
    }
    visible_.insert(visible_.end(), private_roots_.begin(), private_roots_.end());
  } else {
    // Landlock grants the plugin's own /proc/<pid>, which it names /proc/self.
    read_roots_.push_back("/proc/self");
    read_roots_.push_back("/proc/thread-self");
  }
}

bool SpecGrants::grants(const std::string &path, FileUse use) const {
  for (const auto &root : write_roots_) {
    if (covers(root, path)) return true;
  }
  if (use == FileUse::write) {
    for (const auto &root : private_roots_) {
      if (covers(root, path)) return true;
    }
    return false;
  }
  // Landlock does not restrict stat(2), access(2) or readlink(2).
  if (use == FileUse::look && !namespaces_) return true;
  for (const auto &root : read_roots_) {
    if (covers(root, path)) return true;
  }
  // A directory that holds a grant is in the mount tree, with the grants alone in it.
  for (const auto &dir : visible_) {
    if (path == dir) return true;
  }
  return false;
}

bool SpecGrants::on_the_way(const std::string &path) const {
  for (const auto &roots : {&read_roots_, &write_roots_}) {
    for (const auto &root : *roots) {
      if (root != path && covers(path, root)) return true;
    }
  }
  return false;
}

bool SpecGrants::grants(const Endpoint &to) const {
  switch (to.family) {
    case Endpoint::Family::unix_path:
      return !socket_dir_.empty() && covers(socket_dir_, to.address);
    case Endpoint::Family::unix_abstract:
      // The namespaces backend's network namespace has abstract sockets of its own; under
      // Landlock (ABI 6) they are scoped to the sandbox: the plugin's own either way.
      return true;
    case Endpoint::Family::inet:
    case Endpoint::Family::inet6:
      break;
  }
  switch (network_) {
    case Network::outbound:
      return true;
    case Network::proxied:
      return to.loopback() && to.port == proxy_port_;
    case Network::none:
      // Under namespaces the loopback is the sandbox's own, no service of the host's: a
      // plugin that meant the host's fails, and the report says so.
      return false;
  }
  return false;
}

}  // namespace sandbox_host::learn
