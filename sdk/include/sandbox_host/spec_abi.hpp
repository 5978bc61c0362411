// A Spec across the boundary: the host lends an sh_spec built over a Spec, and a module
// reads it back into a Spec.
#pragma once

#include <sandbox_host/abi.h>
#include <sandbox_host/spec.hpp>
#include <sandbox_host/strings.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host {

// Borrows spec's strings: spec must outlive this view and stay unchanged.
class SpecAbiView {
 public:
  explicit SpecAbiView(const Spec &spec)
      : read_paths_(lend(spec.read_paths)), args_(lend(spec.args)) {
    view_.reserve(spec.view.size());
    for (const auto &rule : spec.view) {
      view_.push_back({to_sh_str(rule.path), static_cast<uint32_t>(rule.access)});
    }
    raw_.struct_size = sizeof(sh_spec);
    raw_.plugin_name = to_sh_str(spec.plugin_name);
    raw_.binary_path = to_sh_str(spec.binary_path);
    raw_.socket_dir = to_sh_str(spec.socket_dir);
    raw_.tmp_dir = to_sh_str(spec.tmp_dir);
    raw_.network = to_sh_str(to_string(spec.network));
    raw_.read_paths = {read_paths_.data(), read_paths_.size()};
    raw_.args = {args_.data(), args_.size()};
    raw_.proxy_socket = to_sh_str(spec.proxy_socket);
    raw_.egress_dir = to_sh_str(spec.egress_dir);
    raw_.proxy_port = spec.proxy_port;
    raw_.view = view_.data();
    raw_.view_count = view_.size();
    const Limits &limits = spec.limits;
    raw_.limits = {limits.processes, limits.open_files, limits.file_size,
                   limits.tmp_size,  limits.tmp_inodes, limits.shm_size};
  }
  SpecAbiView(const SpecAbiView &) = delete;
  SpecAbiView &operator=(const SpecAbiView &) = delete;

  const sh_spec *get() const noexcept { return &raw_; }

 private:
  static std::vector<sh_str> lend(const std::vector<std::string> &strings) {
    std::vector<sh_str> out;
    out.reserve(strings.size());
    for (const auto &s : strings) out.push_back(to_sh_str(s));
    return out;
  }
  std::vector<sh_str> read_paths_;
  std::vector<sh_str> args_;
  std::vector<sh_path_rule> view_;
  sh_spec raw_{};
};

// Fields appended to sh_spec since ABI 1.0 are read only where struct_size has them.
inline Spec from_abi(const sh_spec &raw) {
  if (raw.struct_size < offsetof(sh_spec, proxy_socket)) {
    throw std::invalid_argument("spec: struct too small");
  }
  Spec spec;
  spec.plugin_name = to_view(raw.plugin_name);
  spec.binary_path = to_view(raw.binary_path);
  spec.socket_dir = to_view(raw.socket_dir);
  spec.tmp_dir = to_view(raw.tmp_dir);
  auto network = parse_network(to_view(raw.network));
  if (!network)
    throw std::invalid_argument("spec: unknown network \"" + std::string(to_view(raw.network)) +
                                "\"");
  spec.network = *network;
  spec.read_paths = to_strings(raw.read_paths);
  spec.args = to_strings(raw.args);
  if (raw.struct_size >= offsetof(sh_spec, view)) {
    if (raw.proxy_port > UINT16_MAX) {
      throw std::invalid_argument("spec: proxy port " + std::to_string(raw.proxy_port) +
                                  " is out of range (0 to 65535)");
    }
    spec.proxy_socket = to_view(raw.proxy_socket);
    spec.egress_dir = to_view(raw.egress_dir);
    spec.proxy_port = static_cast<std::uint16_t>(raw.proxy_port);
  }
  if (raw.struct_size >= offsetof(sh_spec, limits)) {
    for (size_t i = 0; i < raw.view_count; ++i) {
      const sh_path_rule &rule = raw.view[i];
      if (rule.access > SH_ACCESS_WRITE) {
        throw std::invalid_argument("spec: view[" + std::to_string(i) + "] has unknown access " +
                                    std::to_string(rule.access));
      }
      spec.view.push_back({std::string(to_view(rule.path)), static_cast<PathAccess>(rule.access)});
    }
  }
  if (raw.struct_size >= sizeof(sh_spec)) {
    const sh_limits &limits = raw.limits;
    spec.limits = {limits.processes, limits.open_files, limits.file_size,
                   limits.tmp_size,  limits.tmp_inodes, limits.shm_size};
  }
  return spec;
}

}  // namespace sandbox_host
