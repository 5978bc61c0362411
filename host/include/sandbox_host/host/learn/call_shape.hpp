// Where each system call of the learn filter's list (backends' learn_traced_calls.hpp) keeps
// the path, directory descriptor, flags or socket address `run --learn` reads, and what the
// call would do to the file it names.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sandbox_host::learn {

// What a call does to the file it names, from least to most.
enum class FileUse {
  look,   // its metadata only: stat, access, readlink
  read,   // its contents, or a directory's listing
  exec,   // runs it
  write,  // creates, changes, renames or removes it
};

std::string_view to_string(FileUse use);

// One path argument: the argument index of the path, and of the directory descriptor it is
// relative to (-1: the working directory, as AT_FDCWD).
struct PathArgument {
  int path = -1;
  int dirfd = -1;
  FileUse use = FileUse::read;
};

enum class SocketCall { none, connect, sendto, sendmsg, sendmmsg };

struct CallShape {
  std::string_view name;
  PathArgument first;                  // path == -1 for a socket call
  std::optional<PathArgument> second;  // rename, link: the second name
  int open_flags = -1;   // open(2)-style flags (O_WRONLY, O_CREAT ...): decide read or write
  int at_flags = -1;     // AT_EMPTY_PATH: the call names its descriptor, no path
  int access_mode = -1;  // access(2)'s mode: W_OK asks about writing
  SocketCall socket = SocketCall::none;
};

// The shape of system call nr of this build's architecture, or nullopt for a call the
// learn filter does not trace.
std::optional<CallShape> shape_of(std::int64_t nr);

// The seccomp audit architecture of this build (AUDIT_ARCH_X86_64, ...): a call of another
// architecture (a 32-bit call of a 64-bit process) has other numbers and is not read.
std::uint32_t native_audit_arch();

}  // namespace sandbox_host::learn
