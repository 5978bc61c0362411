#include "userns_refusal.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace sandbox_host::namespaces {
namespace {

namespace fs = std::filesystem;

// What the host shows, read under one root.
class HostReading {
 public:
  explicit HostReading(std::string root) : root_(root == "/" ? "" : std::move(root)) {}

  // The first line of a file, or "" when it cannot be read.
  std::string line(const std::string &path) const {
    std::ifstream in(root_ + path);
    std::string first;
    std::getline(in, first);
    return first;
  }
  std::string whole(const std::string &path) const {
    std::ifstream in(root_ + path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  bool exists(const std::string &path) const {
    std::error_code ignored;
    return fs::exists(root_ + path, ignored);
  }
  std::string link(const std::string &path) const {
    std::error_code ignored;
    return fs::read_symlink(root_ + path, ignored).string();
  }

 private:
  std::string root_;
};

// "Seccomp:\t2" in /proc/self/status: a filter (0 none, 1 strict).
bool under_seccomp_filter(const HostReading &host) {
  std::istringstream status(host.whole("/proc/self/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Seccomp:")) return line.ends_with("2");
  }
  return false;
}

// Whether this process already runs in a user namespace below the initial one: the initial
// one maps every id to itself ("0 0 4294967295"), a nested one a range of its parent's.
bool in_nested_user_namespace(const HostReading &host) {
  std::istringstream map(host.whole("/proc/self/uid_map"));
  std::uint64_t inside = 0, outside = 0, count = 0;
  if (!(map >> inside >> outside >> count)) return false;
  return !(inside == 0 && outside == 0 && count == 4294967295ULL);
}

// One variable of this process's environment ("" when unset).
std::string environment_variable(const HostReading &host, const std::string &name) {
  const std::string environ = host.whole("/proc/self/environ");
  std::istringstream entries(environ);
  for (std::string entry; std::getline(entries, entry, '\0');) {
    if (entry.starts_with(name + "=")) return entry.substr(name.size() + 1);
  }
  return "";
}

// The container this process runs in, as its runtime marks it: "" when none shows.
enum class Container { none, podman, docker, kubernetes, other };

Container container_of(const HostReading &host) {
  // Kubernetes first: its pods run under containerd or CRI-O, which leave their own marks.
  if (host.exists("/var/run/secrets/kubernetes.io/serviceaccount") ||
      !environment_variable(host, "KUBERNETES_SERVICE_HOST").empty()) {
    return Container::kubernetes;
  }
  if (host.exists("/run/.containerenv")) return Container::podman;
  if (host.exists("/.dockerenv")) return Container::docker;
  if (!host.line("/run/systemd/container").empty() ||
      !environment_variable(host, "container").empty()) {
    return Container::other;
  }
  return Container::none;
}

// The systemd service whose cgroup holds this process ("" when none): its unit's
// RestrictNamespaces= or SystemCallFilter= is a seccomp filter too.
std::string systemd_service(const HostReading &host) {
  std::istringstream cgroups(host.whole("/proc/self/cgroup"));
  for (std::string line; std::getline(cgroups, line);) {
    // "0::/system.slice/foo.service" or "1:name=systemd:/system.slice/foo.service"
    const std::size_t slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string unit = line.substr(slash + 1);
    if (unit.ends_with(".service")) return unit;
  }
  return "";
}

// The AppArmor label confining this process, or "" when unconfined or AppArmor is off.
std::string apparmor_label(const HostReading &host) {
  if (!host.exists("/sys/kernel/security/apparmor")) return "";
  std::string label = host.line("/proc/self/attr/apparmor/current");
  if (label.empty()) label = host.line("/proc/self/attr/current");
  if (label.empty() || label == "unconfined") return "";
  return label;
}

std::string seccomp_hint(Container container, const std::string &service) {
  constexpr const char *kProfile =
      "a profile that allows unshare, clone with CLONE_NEWUSER and clone3 (sandbox-host's "
      "deploy/kubernetes/seccomp/sandbox-host-namespaces.json is one)";
  switch (container) {
    case Container::podman:
      return std::string("this is a podman container: run it with --security-opt seccomp=<") +
             kProfile +
             ">, or seccomp=unconfined; podman's own default profile allows them; or "
             "use the landlock backend";
    case Container::docker:
      return std::string("this is a Docker container: run it with --security-opt seccomp=<") +
             kProfile +
             ">, or seccomp=unconfined (Docker's default profile allows them only "
             "with --cap-add SYS_ADMIN or --privileged); or use the landlock backend";
    case Container::kubernetes:
      return std::string(
                 "this is a Kubernetes pod: set securityContext.seccompProfile to "
                 "type: Localhost with ") +
             kProfile +
             " (RuntimeDefault on containerd refuses them; e.g. docker "
             "--security-opt seccomp=unconfined elsewhere); or use the landlock backend";
    case Container::other:
    case Container::none:
      break;
  }
  if (!service.empty()) {
    return "the filter may be " + service +
           "'s: allow user namespaces in its unit (RestrictNamespaces=, SystemCallFilter=), "
           "or run the container with a seccomp profile that allows unshare (e.g. docker "
           "--security-opt seccomp=unconfined); or use the landlock backend";
  }
  return "run the container with a seccomp profile that allows unshare and mount "
         "(e.g. docker --security-opt seccomp=unconfined), or use the landlock backend";
}

}  // namespace

void explain_refusal(int error, const std::string &root, ProbeReport &report) {
  const HostReading host(root);
  const std::string failure =
      std::string("creating a user namespace failed: ") + std::strerror(error);
  const std::string max_user_namespaces = host.line("/proc/sys/user/max_user_namespaces");
  if (error == EUSERS ||
      (error == ENOSPC && in_nested_user_namespace(host) && max_user_namespaces != "0")) {
    // The kernel limits how deep user namespaces nest (32 levels below the host's): EUSERS
    // before Linux 4.9, ENOSPC since, the same as a count reached, which a process cannot tell
    // apart from inside (its ancestors are out of its reach); only a nested one can be deep.
    const std::string depth =
        "this process's user namespace is nested as deep as the kernel allows";
    report.reason =
        failure + " (" + depth +
        (error == EUSERS ? std::string(")")
                         : ", or user.max_user_namespaces=" + max_user_namespaces + " is reached)");
    report.hint =
        "start sandbox-host from a shallower user namespace (fewer nested containers or "
        "sandboxes)" +
        std::string(error == ENOSPC ? ", or raise user.max_user_namespaces" : "") +
        ", or use the landlock backend";
  } else if (max_user_namespaces == "0") {
    report.reason = failure + " (user.max_user_namespaces=0)";
    report.hint = "sysctl -w user.max_user_namespaces=15000";
  } else if (error == ENOSPC && !max_user_namespaces.empty()) {
    report.reason = failure + " (user.max_user_namespaces=" + max_user_namespaces +
                    " reached: this user, or a user namespace above it, has as many as it allows)";
    report.hint = "raise it: sysctl -w user.max_user_namespaces=<more than " + max_user_namespaces +
                  ">, or end the processes that hold the others";
  } else if (host.line("/proc/sys/kernel/unprivileged_userns_clone") == "0") {
    report.reason = failure + " (kernel.unprivileged_userns_clone=0)";
    report.hint = "sysctl -w kernel.unprivileged_userns_clone=1";
  } else if (host.line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1") {
    report.reason = failure +
                    " (AppArmor restricts unprivileged user namespaces: "
                    "kernel.apparmor_restrict_unprivileged_userns=1)";
    std::string exe = host.link("/proc/self/exe");
    if (exe.empty()) exe = "/usr/bin/sandbox-host";
    report.hint =
        "give sandbox-host an AppArmor profile with the userns rule, e.g. "
        "/etc/apparmor.d/sandbox-host: 'abi <abi/4.0>, include <tunables/global> profile "
        "sandbox-host " +
        exe +
        " flags=(unconfined) { userns, }', loaded with apparmor_parser -r; or "
        "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
  } else if (const std::string label = apparmor_label(host); !label.empty() && error == EACCES) {
    report.reason =
        failure + " (the AppArmor profile confining this process, " + label + ", refuses it)";
    report.hint =
        "add the userns rule to that profile, or run sandbox-host under one that has "
        "it (a container's: --security-opt apparmor=<profile>; Kubernetes: "
        "appArmorProfile); or use the landlock backend";
  } else if (under_seccomp_filter(host)) {
    report.reason = failure +
                    " (a seccomp filter on this process, as a container runtime "
                    "installs, refuses it)";
    report.hint = seccomp_hint(container_of(host), systemd_service(host));
  } else {
    report.reason = failure;
    report.hint =
        "check the kernel's user namespace support (CONFIG_USER_NS) and any LSM "
        "policy; the landlock backend works without user namespaces";
  }
}

}  // namespace sandbox_host::namespaces
