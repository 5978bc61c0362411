// The sandbox's deny-by-default mount tree: a fresh tmpfs root holding only what the Spec
// grants and what an ordinary dynamically linked program needs to run.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <vector>

namespace sandbox_host::namespaces {

// One entry of the tree, as planned on the host's view of the file system.
struct MountEntry {
  enum class Kind {
    bind_read_only,   // source, recursive, read-only, nosuid, nodev
    bind_read_write,  // source, recursive, nosuid, nodev
    symlink,          // a symlink at target pointing to source (as the host has it)
  };
  Kind kind;
  std::string source;  // host path (resolved), or the symlink's text
  std::string target;  // path inside the sandbox
};

// What the Spec and the system need, resolved on the host before anything is mounted.
// System paths that do not exist on this host are left out.
std::vector<MountEntry> plan_mount_tree(const Spec &spec);

// Builds the tree in the current (new) mount namespace and makes it the root: private
// propagation, a tmpfs root, the planned entries, a fresh /proc (the caller must already be
// in the sandbox's pid namespace), a minimal /dev, a private /tmp; then pivot_root, the host
// root detached, the new root read-only.
void build_mount_tree(const std::vector<MountEntry> &plan);

}  // namespace sandbox_host::namespaces
