// A Landlock ruleset under construction, owned as a file descriptor.
#pragma once

#include "landlock_abi.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <string>

namespace sandbox_host::landlock {

class Ruleset {
 public:
  // Throws SetupError("landlock", ...) when the kernel refuses the attributes.
  explicit Ruleset(const RulesetAttr &attr);

  // Grants access beneath path (a directory, or the file itself), opened once without
  // following a symlink in any component (open_without_symlinks): the grant is made from
  // that descriptor, and a path a plugin of an earlier launch turned into a symlink fails
  // the setup. On a file, only the rights that apply to files are granted. Throws when path
  // cannot be opened.
  void allow(const std::string &path, uint64_t access);
  // For the system's own directories, which root owns: symlinks are followed (/lib is one
  // on a merged-/usr system), and a path that does not exist on this host is left out.
  void allow_if_present(const std::string &path, uint64_t access);
  // Grants access beneath path itself, never beneath what a symlink there leads to: a path
  // that is a symlink, does not exist or the launching user cannot reach is left out. For
  // an agent policy's view, whose grants stage 1 finds by listing directories.
  void allow_exact_if_present(const std::string &path, uint64_t access);

  // Enforces the ruleset on the calling thread and everything it execs; needs no_new_privs.
  void restrict_self(uint32_t flags);

 private:
  // What a path that cannot be opened means: a failure, or no grant.
  enum class Unopenable { skip_missing, skip_missing_or_unreachable };
  void grant(const std::string &path, uint64_t access, Unopenable unopenable, int open_flags);
  void grant(const UniqueFd &fd, const std::string &path, uint64_t access);

  UniqueFd fd_;
  uint64_t handled_fs_ = 0;
};

// An O_PATH descriptor of the absolute path, reached one component at a time without
// following a symlink (RESOLVE_NO_SYMLINKS by hand: the filter stage 1 has loaded by then
// answers openat2 with ENOSYS). Throws SetupError naming the component that is a symlink.
UniqueFd open_without_symlinks(const std::string &path);

}  // namespace sandbox_host::landlock
