// The egress directory (docs/design.md#egress-directory-and-credential-headers): what a
// sandbox needs to trust and use the egress proxy, and nothing it could use without it.
// Sandboxed processes read it and never write it.
#pragma once

#include <sandbox_host/egress_client.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace sandbox_host::egress {

// The directory's file names, shared with the backends that hold a proxied plugin.
using ::sandbox_host::kEgressBundle;
using ::sandbox_host::kEgressCa;
using ::sandbox_host::kEgressGh;
using ::sandbox_host::kEgressGpg;

// gh's login in the sandbox, and the word it sends as its token. No secret.
inline constexpr std::string_view kGhLogin = "clawpatrol-egress-proxy";

// The gpg script: /bin/sh exec'ing `<exe> sandbox gpg "$@"`, exe quoted for the shell.
std::string gpg_program(const std::filesystem::path &exe);

// Writes dir: kEgressCa (ca_pem's one certificate), kEgressBundle (it followed by every
// certificate of system_roots, each parsed and written again, anything else dropped),
// kEgressGh/hosts.yml and config.yml (gh logged in to github.com as kGhLogin, git over
// https), kEgressGpg (gpg_program(exe)). Each file is replaced atomically (a temporary
// file in its directory, fsync, rename); files are 0644, gpg 0755; dir is created 0755 if
// missing, with its parents. Rewriting gives the same directory.
// Throws std::invalid_argument when ca_pem is not one certificate or exe is not absolute;
// std::runtime_error naming the path when dir (or gh/) is a symbolic link, is not this
// user's, or may be written by group or others, when system_roots cannot be read or holds
// no certificate, or when a write fails.
void write_egress(const std::filesystem::path &dir, std::string_view ca_pem,
                  const std::filesystem::path &exe,
                  const std::filesystem::path &system_roots = "/etc/ssl/certs/ca-certificates.crt");

}  // namespace sandbox_host::egress
