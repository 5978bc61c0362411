// cgroupfs control files (cgroup_control.hpp).
#include "cgroup_control.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace sandbox_host::cgroup {
namespace fs = std::filesystem;

std::string read_control(const fs::path &file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::string text(std::istreambuf_iterator<char>(in), {});
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

void write_control(const fs::path &file, const std::string &value) {
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

std::uint64_t read_counter(const fs::path &file, const std::string &key) {
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
