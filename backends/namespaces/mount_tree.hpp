// The sandbox's deny-by-default mount tree: a fresh tmpfs root holding only what the Spec
// grants and what an ordinary dynamically linked program needs to run. Built in steps, so
// that a prepared sandbox can do the first before its Spec is known; an agent policy's view
// (policy_view_mounts.hpp) shares the first and the last.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::namespaces {

// One entry of the tree, as planned on the host's view of the file system.
struct MountEntry {
  enum class Kind {
    bind_read_only,             // source, recursive, read-only, nosuid, nodev
    bind_read_write,            // source, recursive, nosuid, nodev
    bind_read_only_if_present,  // as bind_read_only; left out where source does not exist
    symlink,                    // a symlink at target pointing to source (as the host has it)
  };
  Kind kind;
  std::string source;  // host path (resolved), or the symlink's text
  std::string target;  // path inside the sandbox
};

// What an ordinary program needs from the system, resolved on the host before anything
// is mounted. System paths that do not exist on this host are left out.
std::vector<MountEntry> plan_system_mounts();
// What the Spec grants. Its paths are resolved already; they are opened below the host
// root without following any symlink when mounted.
std::vector<MountEntry> plan_spec_mounts(const Spec &spec);

// Whether the host's mounts made from now on still show below the old root.
enum class HostMounts {
  ignore,  // a launch whose Spec is known: private propagation at once
  follow,  // a prepared sandbox: slave, until finish_mount_tree()
};

// Where the deny-by-default tree is built, below the base tmpfs, until it becomes the root.
inline constexpr std::string_view kPluginRoot = "/newroot";

// In the current (new) mount namespace, whose process is already in the sandbox's pid
// namespace: a fresh tmpfs becomes the root, with the host's root reachable below it
// (host_view()) until finish_mount_tree().
void leave_host_root(HostMounts host_mounts);
// A fresh /proc, a minimal /dev and a private /tmp below root.
void mount_private_filesystems(const std::string &root);
// Sizes root's /tmp and /dev/shm to the launch's limits (tmpfs size= and nr_inodes=); they
// are mounted before a prepared sandbox knows its launch.
void bound_private_filesystems(const std::string &root, const Limits &limits);
// The deny-by-default tree at kPluginRoot: the private file systems and the system entries.
void build_plugin_root(const std::vector<MountEntry> &system);
// Adds entries to the tree at root.
void add_mounts(const std::string &root, const std::vector<MountEntry> &entries);
// Makes the tree at root private, detaches the host root, pivots into the tree, makes /
// read-only.
void finish_mount_tree(const std::string &root);

// Where the host's path is reachable between leave_host_root() and finish_mount_tree().
std::string host_view(const std::string &path);

}  // namespace sandbox_host::namespaces
