#include <sandbox_host/host/learn/call_shape.hpp>

#include <linux/audit.h>
#include <sys/syscall.h>

namespace sandbox_host::learn {

std::string_view to_string(FileUse use) {
  switch (use) {
    case FileUse::look:
      return "look";
    case FileUse::read:
      return "read";
    case FileUse::exec:
      return "exec";
    case FileUse::write:
      return "write";
  }
  return "read";
}

std::uint32_t native_audit_arch() {
#if defined(__x86_64__)
  return AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  return AUDIT_ARCH_AARCH64;
#else
#error "run --learn knows the system call numbers of x86_64 and aarch64 only"
#endif
}

namespace {

CallShape shape(std::string_view name, PathArgument first) {
  CallShape made;
  made.name = name;
  made.first = first;
  return made;
}
CallShape set_second(CallShape made, PathArgument second) {
  made.second = second;
  return made;
}
CallShape set_open_flags(CallShape made, int argument) {
  made.open_flags = argument;
  return made;
}
CallShape set_at_flags(CallShape made, int argument) {
  made.at_flags = argument;
  return made;
}
CallShape set_access_mode(CallShape made, int argument) {
  made.access_mode = argument;
  return made;
}
CallShape set_socket(CallShape made, SocketCall call) {
  made.socket = call;
  return made;
}

}  // namespace

std::optional<CallShape> shape_of(std::int64_t nr) {
  using enum FileUse;
  // Argument positions are the kernel's, as in the calls' manual pages.
  switch (nr) {
#ifdef SYS_open
    case SYS_open:
      return set_open_flags(shape("open", PathArgument{0, -1, read}), 1);
#endif
    case SYS_openat:
      return set_open_flags(shape("openat", PathArgument{1, 0, read}), 2);
#ifdef SYS_creat
    case SYS_creat:
      return shape("creat", PathArgument{0, -1, write});
#endif
    case SYS_execve:
      return shape("execve", PathArgument{0, -1, exec});
    case SYS_execveat:
      return set_at_flags(shape("execveat", PathArgument{1, 0, exec}), 4);
#ifdef SYS_stat
    case SYS_stat:
      return shape("stat", PathArgument{0, -1, look});
#endif
#ifdef SYS_lstat
    case SYS_lstat:
      return shape("lstat", PathArgument{0, -1, look});
#endif
#ifdef SYS_newfstatat
    case SYS_newfstatat:
      return set_at_flags(shape("newfstatat", PathArgument{1, 0, look}), 3);
#endif
    case SYS_statx:
      return set_at_flags(shape("statx", PathArgument{1, 0, look}), 2);
#ifdef SYS_access
    case SYS_access:
      return set_access_mode(shape("access", PathArgument{0, -1, look}), 1);
#endif
    case SYS_faccessat:
      return set_access_mode(shape("faccessat", PathArgument{1, 0, look}), 2);
#ifdef SYS_faccessat2
    case SYS_faccessat2:
      return set_access_mode(set_at_flags(shape("faccessat2", PathArgument{1, 0, look}), 3), 2);
#endif
#ifdef SYS_readlink
    case SYS_readlink:
      return shape("readlink", PathArgument{0, -1, look});
#endif
    case SYS_readlinkat:
      return shape("readlinkat", PathArgument{1, 0, look});
    case SYS_chdir:
      return shape("chdir", PathArgument{0, -1, read});
#ifdef SYS_mkdir
    case SYS_mkdir:
      return shape("mkdir", PathArgument{0, -1, write});
#endif
    case SYS_mkdirat:
      return shape("mkdirat", PathArgument{1, 0, write});
#ifdef SYS_unlink
    case SYS_unlink:
      return shape("unlink", PathArgument{0, -1, write});
#endif
    case SYS_unlinkat:
      return shape("unlinkat", PathArgument{1, 0, write});
#ifdef SYS_rename
    case SYS_rename:
      return set_second(shape("rename", PathArgument{0, -1, write}), PathArgument{1, -1, write});
#endif
#ifdef SYS_renameat
    case SYS_renameat:
      return set_second(shape("renameat", PathArgument{1, 0, write}), PathArgument{3, 2, write});
#endif
    case SYS_renameat2:
      return set_second(shape("renameat2", PathArgument{1, 0, write}), PathArgument{3, 2, write});
#ifdef SYS_link
    case SYS_link:
      return set_second(shape("link", PathArgument{0, -1, read}), PathArgument{1, -1, write});
#endif
    case SYS_linkat:
      return set_second(shape("linkat", PathArgument{1, 0, read}), PathArgument{3, 2, write});
#ifdef SYS_symlink
    // The target is only text stored in the link: the link's own name is what is written.
    case SYS_symlink:
      return shape("symlink", PathArgument{1, -1, write});
#endif
    case SYS_symlinkat:
      return shape("symlinkat", PathArgument{2, 1, write});
    case SYS_truncate:
      return shape("truncate", PathArgument{0, -1, write});
    case SYS_connect:
      return set_socket(shape("connect", PathArgument{}), SocketCall::connect);
    case SYS_sendto:
      return set_socket(shape("sendto", PathArgument{}), SocketCall::sendto);
    case SYS_sendmsg:
      return set_socket(shape("sendmsg", PathArgument{}), SocketCall::sendmsg);
    case SYS_sendmmsg:
      return set_socket(shape("sendmmsg", PathArgument{}), SocketCall::sendmmsg);
    default:
      return std::nullopt;
  }
}

}  // namespace sandbox_host::learn
