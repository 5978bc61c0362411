// The mount calls both of the sandbox's trees are built from (mount_tree.cpp for a plugin,
// policy_view_mounts.cpp for an agent policy's view). Each throws SetupError naming the path.
#pragma once

#include <cstdint>
#include <string>

namespace sandbox_host::namespaces {

// mkdir -p, 0755.
void make_dirs(const std::string &path);

// An empty file or directory to mount over, with its parents, unless one is there already.
void make_mount_point(const std::string &path, bool directory);

// Binds the tree at source (recursive) to target, with attributes (MOUNT_ATTR_*) set on every
// mount of it before it is attached. Neither path may hold a symlink.
void bind(const std::string &source, const std::string &target, uint64_t attributes);

// Sets attributes (MOUNT_ATTR_*) on the one mount at path.
void set_attributes(const std::string &path, uint64_t attributes);

// Mounts a new file system of type at target, made first where it is missing.
void mount_fs(const char *type, const std::string &target, unsigned long flags,
              const char *options);

}  // namespace sandbox_host::namespaces
