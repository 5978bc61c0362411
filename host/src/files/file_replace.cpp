#include <sandbox_host/host/file_replace.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <random>
#include <string>
#include <system_error>

namespace sandbox_host {
namespace {

[[noreturn]] void fail(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
}

std::string random_suffix() {
  std::random_device random;
  std::array<char, 17> hex{};
  std::snprintf(hex.data(), hex.size(), "%08x%08x", random(), random());
  return hex.data();
}

}  // namespace

void replace_file(int dir_fd, const std::filesystem::path &shown, std::string_view contents,
                  mode_t mode) {
  const std::string name = shown.filename().string();
  const std::string temporary = "." + name + ".tmp-" + random_suffix();
  UniqueFd fd(::openat(dir_fd, temporary.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) fail("cannot create a temporary file for " + shown.string());
  try {
    for (std::size_t written = 0; written < contents.size();) {
      const ssize_t n = ::write(fd.get(), contents.data() + written, contents.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot write " + shown.string());
      written += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd.get(), mode) != 0) fail("cannot chmod " + shown.string());
    if (::fsync(fd.get()) != 0) fail("cannot fsync " + shown.string());
    if (::renameat(dir_fd, temporary.c_str(), dir_fd, name.c_str()) != 0) {
      fail("cannot rename a temporary file to " + shown.string());
    }
  } catch (...) {
    ::unlinkat(dir_fd, temporary.c_str(), 0);
    throw;
  }
  if (::fsync(dir_fd) != 0) fail("cannot fsync " + shown.parent_path().string());
}

}  // namespace sandbox_host
