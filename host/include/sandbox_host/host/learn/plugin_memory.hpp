// Reading a traced thread's memory from the host, for `run --learn`. The plugin chose every
// pointer and length: a null or unmapped pointer, a string without its terminator, a
// length of gigabytes, a thread that exited: each read is bounded and fails softly
// (nullopt), never blocking on the plugin and never faulting the host.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace sandbox_host::learn {

// The NUL-terminated string at address, at most limit bytes before its NUL; nullopt when
// the address is null or unmapped, or no NUL comes within limit bytes of mapped memory.
std::optional<std::string> read_string(pid_t pid, std::uint64_t address, std::size_t limit);

// Up to size bytes at address, fewer when the memory after them is unmapped; nullopt when
// not even the first byte can be read (null or unmapped pointer, thread gone).
std::optional<std::string> read_bytes(pid_t pid, std::uint64_t address, std::size_t size);

// The object of type T at address, read whole, or nullopt.
template <typename T>
std::optional<T> read_object(pid_t pid, std::uint64_t address) {
  auto bytes = read_bytes(pid, address, sizeof(T));
  if (!bytes || bytes->size() != sizeof(T)) return std::nullopt;
  T value;
  __builtin_memcpy(&value, bytes->data(), sizeof(T));
  return value;
}

}  // namespace sandbox_host::learn
