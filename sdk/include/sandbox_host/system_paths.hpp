// What an ordinary dynamically linked program needs from the host's file system, the same
// for every Linux backend: the namespaces backend binds these, Landlock grants them, and
// `run --learn` judges a plugin's attempts against them.
#pragma once

#include <array>

namespace sandbox_host {

// Directories of the system that programs run from. Where the host has one as a symlink
// (merged /usr), a backend follows it as the host does.
inline constexpr std::array kSystemDirs{"/usr",   "/bin",   "/sbin",  "/lib",
                                        "/lib32", "/lib64", "/libx32"};

// The part of /etc that ordinary programs read: the dynamic linker's cache, name service
// (users, groups, hosts, DNS), time zone, TLS roots, and Debian's alternatives. Nothing
// with a secret (shadow, ssh, wireguard, sudoers, machine-id).
inline constexpr std::array kEtcEntries{
    "/etc/alternatives", "/etc/ca-certificates", "/etc/gai.conf",      "/etc/group",
    "/etc/host.conf",    "/etc/hosts",           "/etc/ld.so.cache",   "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/localtime",       "/etc/nsswitch.conf", "/etc/os-release",
    "/etc/passwd",       "/etc/protocols",       "/etc/resolv.conf",   "/etc/services",
    "/etc/ssl/certs",    "/etc/ssl/openssl.cnf",
};

// Device nodes every program may expect, below /dev. None of them reaches hardware or
// another process.
inline constexpr std::array kDevices{"null", "zero", "full", "random", "urandom", "tty"};

}  // namespace sandbox_host
