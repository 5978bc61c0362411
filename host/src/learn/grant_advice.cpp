#include <sandbox_host/host/learn/grant_advice.hpp>

#include <sandbox_host/host/learn/spec_grants.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <pwd.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace sandbox_host::learn {
namespace {

// What the sandbox makes itself, or the host's kernel state: no read path can stand for it.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kSystemTrees{{
    {"/proc",
     "the host's processes: the namespaces backend mounts the sandbox's own /proc, Landlock "
     "grants the plugin's own /proc/<pid> only, and no read path may name /proc"},
    {"/dev",
     "the host's devices: a sandbox gets the system's harmless ones only, and no read path may "
     "name /dev"},
    {"/sys", "the host's kernel and hardware state"},
    {"/run", "the host's services' runtime state and sockets"},
}};

// Files of /etc that hold secrets or say too much about the host.
constexpr std::array kEtcSecrets{
    "/etc/shadow",       "/etc/shadow-",
    "/etc/gshadow",      "/etc/gshadow-",
    "/etc/sudoers",      "/etc/sudoers.d",
    "/etc/ssh",          "/etc/ssl/private",
    "/etc/machine-id",   "/etc/security",
    "/etc/wireguard",    "/etc/krb5.keytab",
    "/etc/sandbox-host", "/etc/NetworkManager/system-connections",
    "/etc/credstore",    "/etc/credstore.encrypted",
    "/etc/docker",       "/etc/containers",
};

// Directories too wide to grant whole, whatever the files below them.
constexpr std::array kTooWide{"/",          "/etc",     "/usr",     "/var",       "/var/lib",
                              "/var/cache", "/var/tmp", "/var/log", "/var/spool", "/tmp",
                              "/home",      "/root",    "/opt",     "/srv",       "/mnt",
                              "/media",     "/boot",    "/lib",     "/bin",       "/sbin"};

}  // namespace

GrantAdvice::GrantAdvice(std::vector<std::string> protected_paths)
    : protected_(std::move(protected_paths)) {
  homes_.push_back("/root");
  // Every user's home, as the host's passwd names it (getpwent_r: no other thread of
  // sandbox-host enumerates users while a learn report is made).
  ::setpwent();
  passwd entry{};
  passwd *result = nullptr;
  std::array<char, 4096> buffer{};
  while (::getpwent_r(&entry, buffer.data(), buffer.size(), &result) == 0 && result != nullptr) {
    const std::string home = result->pw_dir != nullptr ? result->pw_dir : "";
    if (home.size() > 1 && home.front() == '/' && !covers("/usr", home) && !covers("/bin", home) &&
        !covers("/proc", home) && home != "/nonexistent" && !covers("/var/lib", home) &&
        !covers("/var/spool", home) && !covers("/run", home)) {
      homes_.push_back(home);
    }
  }
  ::endpwent();
  std::sort(homes_.begin(), homes_.end());
  homes_.erase(std::unique(homes_.begin(), homes_.end()), homes_.end());
}

std::optional<std::string> GrantAdvice::refusal(const std::string &path) const {
  if (escape_text(path) != path) {
    return "its name is not plain text, which a config line would not carry faithfully";
  }
  if (path == "/") return "the host's whole file system";
  for (const auto &[tree, why] : kSystemTrees) {
    if (covers(tree, path)) return std::string(why);
  }
  for (const auto &dir : protected_) {
    if (covers(dir, path) || covers(path, dir)) return "sandbox-host's own state (" + dir + ")";
  }
  if (path == "/etc") return "all of /etc; grant the entries the plugin needs";
  if (path == "/tmp" || path == "/var/tmp") return "a directory every user of the host shares";
  for (const char *secret : kEtcSecrets) {
    if (covers(secret, path)) return "a secret of the host (" + std::string(secret) + ")";
  }
  for (const auto &home : homes_) {
    if (path == home || covers(path, home)) {
      return "a whole home directory (" + home + ")";
    }
    if (covers(home, path)) {
      const std::string_view below = std::string_view(path).substr(home.size() + 1);
      if (below.starts_with('.')) {
        return "a home directory's dot-files, where credentials and settings live (" + home + ")";
      }
    }
  }
  return std::nullopt;
}

bool GrantAdvice::may_cover(const std::string &dir) const {
  if (std::find(kTooWide.begin(), kTooWide.end(), dir) != kTooWide.end()) return false;
  if (refusal(dir)) return false;
  // It may hold nothing refused: no secret of /etc, no home, no protected path below it.
  for (const char *secret : kEtcSecrets) {
    if (covers(dir, secret)) return false;
  }
  for (const auto &home : homes_) {
    if (covers(dir, home)) return false;
  }
  for (const auto &path : protected_) {
    if (covers(dir, path)) return false;
  }
  return true;
}

}  // namespace sandbox_host::learn
