#include <sandbox_host/host/learn/plugin_memory.hpp>

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace sandbox_host::learn {
namespace {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// Reads [address, address + size) page by page, so that an unmapped page ends the read
// where it starts rather than failing all of it (process_vm_readv stops at the first iovec
// it cannot read whole). Returns the bytes read.
std::size_t read_pages(pid_t pid, std::uint64_t address, char *out, std::size_t size,
                       bool stop_at_nul) {
  std::size_t done = 0;
  while (done < size) {
    const std::uint64_t at = address + done;
    if (at < address) break;  // wrapped around the address space
    const std::size_t to_page_end = page_size() - static_cast<std::size_t>(at % page_size());
    const std::size_t chunk = std::min(size - done, to_page_end);
    iovec local{out + done, chunk};
    iovec remote{reinterpret_cast<void *>(at), chunk};
    const ssize_t got = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) break;
    const std::size_t read = static_cast<std::size_t>(got);
    if (stop_at_nul && std::memchr(out + done, '\0', read) != nullptr) return done + read;
    done += read;
    if (read < chunk) break;
  }
  return done;
}

}  // namespace

std::optional<std::string> read_string(pid_t pid, std::uint64_t address, std::size_t limit) {
  if (address == 0) return std::nullopt;
  std::string buffer(limit + 1, '\0');
  const std::size_t got = read_pages(pid, address, buffer.data(), buffer.size(), true);
  const auto end =
      std::find(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(got), '\0');
  if (end == buffer.begin() + static_cast<std::ptrdiff_t>(got)) return std::nullopt;
  buffer.resize(static_cast<std::size_t>(end - buffer.begin()));
  return buffer;
}

std::optional<std::string> read_bytes(pid_t pid, std::uint64_t address, std::size_t size) {
  if (address == 0 || size == 0) return std::nullopt;
  std::string buffer(size, '\0');
  const std::size_t got = read_pages(pid, address, buffer.data(), size, false);
  if (got == 0) return std::nullopt;
  buffer.resize(got);
  return buffer;
}

}  // namespace sandbox_host::learn
