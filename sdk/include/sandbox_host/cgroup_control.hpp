// Reading and writing cgroupfs control files, as the kernel wants them: a value in one
// write(), errors that name the file, the value and the kernel's reason. Shared by the
// plugins' cgroups (the host's limits) and any module that manages cgroups (cap-slot, scope).
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sandbox_host::cgroup {

// The file's text without its trailing newline. Throws with the file's name.
inline std::string read_control(const std::filesystem::path &file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::string text(std::istreambuf_iterator<char>(in), {});
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Throws with the file, the value and the kernel's reason.
inline void write_control(const std::filesystem::path &file, const std::string &value) {
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    throw std::runtime_error("cannot open " + file.string() + " to write \"" + value +
                             "\": " + std::generic_category().message(errno));
  }
  const ssize_t written = ::write(fd.get(), value.data(), value.size());
  if (written != static_cast<ssize_t>(value.size())) {
    const int error = written < 0 ? errno : EIO;
    throw std::runtime_error("cannot write \"" + value + "\" to " + file.string() + ": " +
                             std::generic_category().message(error));
  }
}

// The number after `key` in a flat-keyed file ("oom_kill 3" in memory.events); 0 when the
// file or the key is missing, as a kernel without the counter has counted nothing.
inline std::uint64_t read_counter(const std::filesystem::path &file, const std::string &key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    std::uint64_t count = 0;
    if (words >> name >> count && name == key) return count;
  }
  return 0;
}

}  // namespace sandbox_host::cgroup
