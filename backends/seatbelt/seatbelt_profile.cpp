#include "seatbelt_profile.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string_view>

namespace sandbox_host::seatbelt {
namespace {

using std::string_view_literals::operator""sv;

// The system a dynamically linked macOS program needs, read-only. docs/security-model.md
// lists each entry with its reason, and a test checks that it lists every quoted string of
// the profile. These are constants of this file, never values from a Spec.

// dyld, libSystem and the frameworks, including where the dyld shared cache lives: under
// /System/Library up to macOS 12, in the OS cryptex from macOS 13. Loading a library maps
// it executable, so these trees also get file-map-executable.
constexpr std::array kSystemLibraryTrees{
    "/usr/lib"sv,
    "/System/Library"sv,
    "/System/Cryptexes/OS"sv,
    "/System/Volumes/Preboot/Cryptexes/OS"sv,
    "/Library/Apple"sv,
};

// Public data of the OS: time zones (/usr/share/zoneinfo and /etc/localtime lead into
// /private/var/db/timezone) and the TLS trust anchors and OpenSSL/LibreSSL configuration.
constexpr std::array kSystemDataTrees{
    "/usr/share"sv,
    "/private/var/db/timezone"sv,
    "/private/etc/ssl"sv,
};

// The /etc files libc reads for users, groups, names, services and the local time zone (the
// namespaces backend binds the same subset), and the randomness and zero devices. macOS
// keeps /etc in /private/etc; /etc/resolv.conf leads into /private/var/run.
constexpr std::array kSystemFiles{
    "/private/etc/group"sv,
    "/private/etc/hosts"sv,
    "/private/etc/localtime"sv,
    "/private/etc/passwd"sv,
    "/private/etc/protocols"sv,
    "/private/etc/resolv.conf"sv,
    "/private/etc/services"sv,
    "/private/var/run/resolv.conf"sv,
    "/dev/random"sv,
    "/dev/urandom"sv,
    "/dev/zero"sv,
};

// The plugin's stdin, stdout and stderr reopened by name; opening /dev/fd/N gives nothing
// but a copy of a descriptor the process already holds.
constexpr std::array kDescriptorFiles{
    "/dev/stdin"sv,
    "/dev/stdout"sv,
    "/dev/stderr"sv,
};

// /etc, /tmp and /var are symlinks into /private: a program that resolves a path through
// them reads the link itself. "/" is the start of every resolution.
constexpr std::array kSymlinkedRoots{
    "/"sv,
    "/etc"sv,
    "/tmp"sv,
    "/var"sv,
};

// What libSystem and language runtimes ask at start-up: CPU count and features (thread
// pools, optimised string routines), page size, memory size, the OS version, the argument
// and descriptor limits, the host name.
constexpr std::array kSysctls{
    "hw.activecpu"sv,
    "hw.byteorder"sv,
    "hw.cachelinesize"sv,
    "hw.cpufamily"sv,
    "hw.cpusubtype"sv,
    "hw.cputype"sv,
    "hw.logicalcpu"sv,
    "hw.logicalcpu_max"sv,
    "hw.machine"sv,
    "hw.memsize"sv,
    "hw.ncpu"sv,
    "hw.nperflevels"sv,
    "hw.pagesize"sv,
    "hw.physicalcpu"sv,
    "hw.physicalcpu_max"sv,
    "kern.argmax"sv,
    "kern.hostname"sv,
    "kern.maxfilesperproc"sv,
    "kern.osproductversion"sv,
    "kern.osrelease"sv,
    "kern.ostype"sv,
    "kern.osversion"sv,
    "kern.usrstack64"sv,
    "kern.version"sv,
    "sysctl.proc_cputype"sv,
};
constexpr std::array kSysctlPrefixes{
    "hw.optional."sv,
    "hw.perflevel"sv,
};

// Mach services every program may need: user and group lookups (getpwuid, getgrouplist go
// to opendirectoryd, not only to /etc/passwd) and notify(3), through which libc learns of
// time zone and resolver changes; notify also reads its shared memory page.
constexpr std::array kBaseMachServices{
    "com.apple.system.notification_center"sv,
    "com.apple.system.opendirectoryd.libinfo"sv,
    "com.apple.system.opendirectoryd.membership"sv,
};
constexpr std::string_view kNotifySharedMemory = "apple.shm.notification_center";

// With network outbound: the resolver's configuration, and certificate trust evaluation
// (Security.framework asks trustd; Go's crypto/x509 uses it on macOS).
constexpr std::array kOutboundMachServices{
    "com.apple.SecurityServer"sv,
    "com.apple.SystemConfiguration.DNSConfiguration"sv,
    "com.apple.SystemConfiguration.configd"sv,
    "com.apple.ocspd"sv,
    "com.apple.trustd"sv,
    "com.apple.trustd.agent"sv,
};
// getaddrinfo asks mDNSResponder over this socket instead of sending DNS queries itself.
constexpr std::string_view kResolverSocket = "/private/var/run/mDNSResponder";

// An agent policy's view starts from the whole file system readable and executable but
// /dev, whose nodes (disks among them) are the system's to grant: the devices above.
constexpr std::string_view kViewRoot = "/";
constexpr std::string_view kViewDevices = "/dev";
// What each access of a view's rule allows; the rest of kViewOperations it denies. A
// program run under a policy execs others and maps their libraries, wherever it may read.
constexpr std::string_view kViewRead = "file-read* process-exec file-map-executable";
constexpr std::string_view kViewWrite = "file-read* file-write* process-exec file-map-executable";
constexpr std::string_view kViewOperations = kViewWrite;

std::string quoted(std::string_view constant) {
  return "\"" + std::string(constant) + "\"";
}

std::string filter(std::string_view kind, std::string_view constant) {
  return "(" + std::string(kind) + " " + quoted(constant) + ")";
}

std::string parameter_filter(std::string_view kind, const std::string &name) {
  return "(" + std::string(kind) + " (param " + quoted(name) + "))";
}

template <size_t N>
void add_filters(std::vector<std::string> &filters, std::string_view kind,
                 const std::array<std::string_view, N> &constants) {
  for (auto constant : constants) filters.push_back(filter(kind, constant));
}

// One (allow ...) or (deny ...) form: its operations on the first line, then one filter
// per line.
void rule(std::string &text, std::string_view action, std::string_view operations,
          const std::vector<std::string> &filters) {
  text += "(";
  text += action;
  text += " ";
  text += operations;
  for (const auto &f : filters) text += "\n  " + f;
  text += ")\n";
}

void allow(std::string &text, std::string_view operations,
           const std::vector<std::string> &filters = {}) {
  rule(text, "allow", operations, filters);
}

void deny(std::string &text, std::string_view operations, const std::vector<std::string> &filters) {
  rule(text, "deny", operations, filters);
}

void require_usable_path(const std::string &field, const std::string &path) {
  if (path.find('\0') != std::string::npos) {
    throw std::invalid_argument(
        field + " contains a NUL byte: sandbox-exec's argv would cut the path short there");
  }
  if (path.empty() || path.front() != '/') {
    throw std::invalid_argument(field + " \"" + path + "\" is not an absolute path");
  }
}

void require_usable_paths(const Spec &spec) {
  require_usable_path("BinaryPath", spec.binary_path);
  require_usable_path("SocketDir", spec.socket_dir);
  require_usable_path("TmpDir", spec.tmp_dir);
  for (size_t i = 0; i < spec.read_paths.size(); ++i) {
    require_usable_path("ReadPaths[" + std::to_string(i) + "]", spec.read_paths[i]);
  }
  for (size_t i = 0; i < spec.view.size(); ++i) {
    require_usable_path("View[" + std::to_string(i) + "]", spec.view[i].path);
  }
}

// READ_PATH_<i> for each of ReadPaths; the filters that name them.
std::vector<std::string> add_read_path_parameters(const Spec &spec, Profile &profile) {
  std::vector<std::string> read_path_filters;
  for (size_t i = 0; i < spec.read_paths.size(); ++i) {
    std::string name = "READ_PATH_" + std::to_string(i);
    read_path_filters.push_back(parameter_filter("subpath", name));
    profile.parameters.push_back({std::move(name), spec.read_paths[i]});
  }
  return read_path_filters;
}

// VIEW_<i> for the view's rules, shortest path first: later rules win in SBPL, so the
// longest does. Each parameter's name with its rule's access.
std::vector<std::pair<std::string, PathAccess>> add_view_parameters(const Spec &spec,
                                                                    Profile &profile) {
  std::vector<PathRule> view = spec.view;
  std::stable_sort(view.begin(), view.end(), [](const PathRule &a, const PathRule &b) {
    return a.path.size() < b.path.size();
  });
  std::vector<std::pair<std::string, PathAccess>> view_parameters;
  for (size_t i = 0; i < view.size(); ++i) {
    std::string name = "VIEW_" + std::to_string(i);
    view_parameters.emplace_back(name, view[i].access);
    profile.parameters.push_back({std::move(name), view[i].path});
  }
  return view_parameters;
}

// An agent policy's view first, so that everything below keeps its grant on top of it
// (SBPL: the last matching rule wins).
void write_view(std::string &text,
                const std::vector<std::pair<std::string, PathAccess>> &view_parameters) {
  allow(text, kViewRead, {filter("subpath", kViewRoot)});
  deny(text, kViewOperations, {filter("subpath", kViewDevices)});
  for (const auto &[name, access] : view_parameters) {
    const std::vector<std::string> rule_path{parameter_filter("subpath", name)};
    if (access == PathAccess::none) {
      deny(text, kViewOperations, rule_path);
    } else if (access == PathAccess::read) {
      allow(text, kViewRead, rule_path);
      deny(text, "file-write*", rule_path);
    } else {
      allow(text, kViewWrite, rule_path);
    }
  }
  text += "\n";
}

// Processes: sandbox-exec applies the profile and then execs the plugin, so exec is
// allowed for that binary alone; the plugin may fork, and sees and signals only what
// runs in this sandbox.
void write_processes(std::string &text) {
  allow(text, "process-exec", {parameter_filter("literal", "BINARY")});
  allow(text, "process-fork");
  allow(text, "process-info*", {"(target same-sandbox)"});
  allow(text, "signal", {"(target same-sandbox)"});
  text += "\n";
}

// The system every plugin reads: this file's constants above.
void write_system(std::string &text) {
  std::vector<std::string> filters;
  add_filters(filters, "subpath", kSystemLibraryTrees);
  allow(text, "file-read* file-map-executable", filters);
  filters.clear();
  add_filters(filters, "subpath", kSystemDataTrees);
  add_filters(filters, "literal", kSystemFiles);
  allow(text, "file-read*", filters);
  allow(text, "file-read* file-write-data", {filter("literal", "/dev/null")});
  filters = {filter("subpath", "/dev/fd")};
  add_filters(filters, "literal", kDescriptorFiles);
  allow(text, "file-read-data file-write-data", filters);
  filters.clear();
  add_filters(filters, "literal", kSymlinkedRoots);
  allow(text, "file-read-metadata", filters);
  filters.clear();
  add_filters(filters, "sysctl-name", kSysctls);
  add_filters(filters, "sysctl-name-prefix", kSysctlPrefixes);
  allow(text, "sysctl-read", filters);
  filters.clear();
  add_filters(filters, "global-name", kBaseMachServices);
  allow(text, "mach-lookup", filters);
  allow(text, "ipc-posix-shm-read*", {filter("ipc-posix-name", kNotifySharedMemory)});
  text += "\n";
}

// The Spec's grants. ReadPaths may hold the plugin's own libraries, so they may be
// mapped executable like the binary; what the plugin writes (SocketDir, TmpDir) may not.
void write_spec_grants(std::string &text, const std::vector<std::string> &read_path_filters) {
  allow(text, "file-read* file-map-executable", {parameter_filter("literal", "BINARY")});
  if (!read_path_filters.empty()) allow(text, "file-read* file-map-executable", read_path_filters);
  allow(text, "file-read* file-write*",
        {parameter_filter("subpath", "SOCKET_DIR"), parameter_filter("subpath", "TMP_DIR")});
  text += "\n";
}

// The plugin's channel to the host, with every network: unix sockets under SocketDir,
// which it may create and listen on or connect to. No other socket is reachable.
void write_host_channel(std::string &text) {
  allow(text, "system-socket", {"(socket-domain AF_UNIX)"});
  allow(text, "network-bind network-inbound",
        {"(local unix-socket " + parameter_filter("subpath", "SOCKET_DIR") + ")"});
  allow(text, "network-outbound",
        {"(remote unix-socket " + parameter_filter("subpath", "SOCKET_DIR") + ")"});
}

// Network outbound: dialling out to any address and port, and the name lookups and
// certificate checks that need. Listening on an IP port stays refused.
void write_outbound(std::string &text) {
  text += "\n";
  allow(text, "system-socket", {"(socket-domain AF_INET)", "(socket-domain AF_INET6)"});
  allow(text, "network-outbound",
        {"(remote ip \"*:*\")",
         "(remote unix-socket " + filter("path-literal", kResolverSocket) + ")"});
  std::vector<std::string> filters;
  add_filters(filters, "global-name", kOutboundMachServices);
  allow(text, "mach-lookup", filters);
}

}  // namespace

Profile make_profile(const Spec &spec) {
  require_usable_paths(spec);
  Profile profile;
  profile.parameters = {
      {"BINARY", spec.binary_path}, {"SOCKET_DIR", spec.socket_dir}, {"TMP_DIR", spec.tmp_dir}};
  const std::vector<std::string> read_path_filters = add_read_path_parameters(spec, profile);
  const auto view_parameters = add_view_parameters(spec, profile);

  std::string &text = profile.text;
  text = "(version 1)\n(deny default)\n\n";
  if (!spec.view.empty()) write_view(text, view_parameters);
  write_processes(text);
  write_system(text);
  write_spec_grants(text, read_path_filters);
  write_host_channel(text);
  if (spec.network == Network::outbound) write_outbound(text);
  return profile;
}

std::vector<std::string> define_arguments(const std::vector<ProfileParameter> &parameters) {
  std::vector<std::string> arguments;
  for (const auto &parameter : parameters) {
    arguments.push_back("-D");
    arguments.push_back(parameter.name + "=" + parameter.value);
  }
  return arguments;
}

}  // namespace sandbox_host::seatbelt
