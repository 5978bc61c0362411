#include <sandbox_host/host/learn/path_resolution.hpp>

#include <unistd.h>

#include <array>
#include <climits>
#include <filesystem>

namespace sandbox_host::learn {

std::optional<std::string> proc_link(pid_t tid, const std::string &entry) {
  const std::string link = "/proc/" + std::to_string(tid) + "/" + entry;
  std::array<char, PATH_MAX> target{};
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) return std::nullopt;
  std::string text(target.data(), static_cast<std::size_t>(n));
  // "socket:[123]", "pipe:[4]", "anon_inode:[eventfd]", or a directory since removed.
  if (text.front() != '/' || text.ends_with(" (deleted)")) return std::nullopt;
  return text;
}

std::optional<std::string> absolute_path(pid_t tid, int dirfd, const std::string &path) {
  if (path.empty()) return std::nullopt;
  std::filesystem::path joined;
  if (path.front() == '/') {
    joined = path;
  } else {
    const auto base =
        dirfd == kNoDirfd ? proc_link(tid, "cwd") : proc_link(tid, "fd/" + std::to_string(dirfd));
    if (!base) return std::nullopt;
    joined = std::filesystem::path(*base) / path;
  }
  std::string normal = joined.lexically_normal().string();
  // "/a/b/" names the directory "/a/b"; "/.." stays "/".
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

}  // namespace sandbox_host::learn
