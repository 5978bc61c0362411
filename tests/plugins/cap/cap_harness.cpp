#include "cap_harness.hpp"

#include <sandbox_host/strings.hpp>

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace cap_test {
namespace fs = std::filesystem;
using sandbox_host::to_sh_str;

Requester::Requester()
    : process_(std::make_unique<sandbox_host::test::RunningProcess>(
          std::vector<std::string>{"/bin/sleep", "120"})),
      pid_(process_->pid()),
      pidfd_(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0))) {
  if (!pidfd_) throw std::system_error(errno, std::generic_category(), "pidfd_open");
}

void Requester::end() {
  process_.reset();
}

sandbox_host::Request cap_request(const std::string &op, std::string slice, std::string max,
                                  std::string swap, std::string unit) {
  sandbox_host::Request request;
  request.op = op;
  request.slice = std::move(slice);
  request.max = std::move(max);
  request.swap = std::move(swap);
  request.unit = std::move(unit);
  return request;
}

ops_test::Outcome ask(const ops_test::Op &op, const sandbox_host::Request &request,
                      const Requester &requester) {
  ops_test::Call call;
  call.request = request;
  call.requester_pid = requester.pid();
  call.requester_pidfd = requester.pidfd();
  return op.handle(call);
}

std::string read_file(const fs::path &file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string cgroup_of(pid_t pid, const std::string &controllers) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (line.substr(first + 1, second - first - 1) == controllers) return line.substr(second + 1);
  }
  return "";
}

fs::path own_memory_cgroup() {
  return fs::path("/sys/fs/cgroup/memory") / cgroup_of(::getpid(), "memory").substr(1);
}

fs::path unified_mount() {
  return "/sys/fs/cgroup/unified";
}

TestCgroup::TestCgroup(const fs::path &under) {
  std::random_device random;
  path_ = under / ("cap-test-" + std::to_string(::getpid()) + "-" + std::to_string(random()));
  if (::mkdir(path_.c_str(), 0755) != 0) {
    throw std::system_error(errno, std::generic_category(), "mkdir " + path_.string());
  }
}

TestCgroup::~TestCgroup() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec)) dirs.push_back(it->path());
  }
  // Deepest first; a cgroup whose last process just went may stay busy for a moment.
  std::sort(dirs.begin(), dirs.end(), [](const fs::path &a, const fs::path &b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  dirs.push_back(path_);
  for (const auto &dir : dirs) {
    for (int attempt = 0; attempt < 100 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace cap_test
