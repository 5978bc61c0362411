#include "user_namespace.hpp"

#include <sandbox_host/backends/setup_error.hpp>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <string>

namespace sandbox_host::namespaces {
namespace {

using backends::throw_errno;

void write_proc_file(const char *path, const std::string &text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_errno("user namespace", std::string("open ") + path);
  ssize_t written = ::write(fd, text.data(), text.size());
  int error = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size())) {
    throw_errno("user namespace", std::string("write ") + path, error);
  }
}

}  // namespace

void enter_user_namespace(int more_flags, uid_t uid, gid_t gid) {
  if (::unshare(CLONE_NEWUSER | more_flags) != 0) throw_errno("user namespace", "unshare");
  // An unprivileged process may map only its own ids, and only once setgroups is denied.
  write_proc_file("/proc/self/setgroups", "deny");
  write_proc_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1");
  write_proc_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1");
}

}  // namespace sandbox_host::namespaces
