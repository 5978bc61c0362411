// The cap a request asks for (the request fields slice, max and swap, unit for the
// scope), checked before any driver touches the host: sizes as systemd writes them, and
// slice and unit names that cannot climb out of the parent the operator configured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::cap {

// Bytes; nullopt is "infinity" (no limit).
using MemoryLimit = std::optional<std::uint64_t>;

// The smallest max a request may set: below it not even a shell starts, and "max = 512"
// is far more likely a forgotten M than a cap.
inline constexpr std::uint64_t kSmallestMax = 1024 * 1024;
// cgroup v1 keeps limits as a signed 64-bit number, and memsw is max + swap.
inline constexpr std::uint64_t kLargestLimit = INT64_MAX;

struct MemoryCap {
  std::string slice;  // the slot's slice: "<name>.slice"
  MemoryLimit max;    // memory max
  MemoryLimit swap;   // swap max
};

// "512M" and the like: decimal bytes, or with one of K, M, G, T (1024-based, as systemd
// reads MemoryMax=), or "infinity". Throws std::invalid_argument naming field and text.
MemoryLimit parse_memory_limit(std::string_view field, std::string_view text);

// "33554432" or "infinity", as the reply and messages give a limit.
std::string to_string(const MemoryLimit &limit);

// A cap from the request's slice, max and swap (all three required); throws
// std::invalid_argument naming what is wrong.
MemoryCap memory_cap(std::string_view slice, std::string_view max, std::string_view swap);

// A unit name of this suffix (".slice", ".scope"): letters, digits and ":_.-@" (no "@" in a
// slice), not starting with "-" or ".", no "..", "--" or "/", at most 128 bytes. Throws
// std::invalid_argument naming field and text.
void check_unit_name(std::string_view field, std::string_view name, std::string_view suffix);

}  // namespace sandbox_host::cap
