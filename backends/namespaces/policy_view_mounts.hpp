// An agent policy's view (Spec::view) as the sandbox's mount tree, instead of the
// deny-by-default one: the host's root read-only, as bubblewrap's `--ro-bind / /`, a fresh
// /proc, the minimal /dev and a private /tmp over it, then each rule's path, parents first:
// hidden (an empty read-only tmpfs, or an empty unreadable file), bound read-only, or bound
// read-write. The Spec's own grants go on top (add_mounts()).
#pragma once

#include "mount_tree.hpp"

#include <sandbox_host/spec.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::namespaces {

// Where the view's tree is built, below the base tmpfs, until it becomes the root. A
// prepared sandbox has built kPluginRoot already and leaves it unused.
inline constexpr std::string_view kViewRoot = "/viewroot";

// Refuses (std::invalid_argument) a view the sandbox cannot hold a command to: a rule at or
// below /proc or /dev, which the sandbox makes its own, or one making / writable, which it
// keeps read-only.
void check_view(const std::vector<PathRule> &view);

// Between leave_host_root() and add_mounts(kViewRoot, grants): the view's tree at kViewRoot.
// grants are the Spec's own entries, mounted after it: where one lies in a hidden directory,
// its mount point is made there before the directory turns read-only. Throws SetupError
// naming the rule whose mount failed.
void build_view_root(const std::vector<PathRule> &view, const std::vector<MountEntry> &grants);

// Where the command starts: cwd, the launcher's ("" when unknown), where the view shows it,
// else TmpDir.
std::string command_directory(const Spec &spec, const std::string &cwd);

}  // namespace sandbox_host::namespaces
