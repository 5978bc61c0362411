#include "serve_fixture.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sandbox_host::test {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string user_name(User user) {
  return user == User::root ? "root" : "nobody";
}

std::string read_file(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto &task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t child; in >> child;) out.push_back(child);
  }
  return out;
}

std::vector<pid_t> descendants(pid_t pid) {
  std::vector<pid_t> all;
  std::vector<pid_t> next{pid};
  while (!next.empty()) {
    const pid_t at = next.back();
    next.pop_back();
    for (pid_t child : children_of(at)) {
      all.push_back(child);
      next.push_back(child);
    }
  }
  return all;
}

std::string cmdline(pid_t pid) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

std::size_t descriptors(pid_t pid) {
  std::size_t count = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    ++count;
  }
  return count;
}

Service::Service(User user, const std::string &launcher_lines, const std::string &config_lines,
                 const std::vector<std::string> &wrapper, const std::vector<std::string> &modules)
    : user_(user), wrapped_(!wrapper.empty()) {
  for (const auto &module : modules) install_.add_module(module);
  const fs::path dir = home_.dir();
  if (user == User::nobody) {
    if (::chown(dir.c_str(), kNobody, kNobody) != 0) throw std::runtime_error("chown");
  }
  socket_ = (dir / "l/launch.sock").string();
  audit_ = dir / "audit.log";
  std::ofstream(dir / "config.toml")
      << config_lines << "\n[launcher]\nsocket = \"" << socket_ << "\"\n"
      << launcher_lines << "\n[broker]\nstate_dir = \"" << (dir / "state").string()
      << "\"\n[audit]\npath = \"" << audit_.string() << "\"\nformat = \"json\"\n";
  std::vector<std::string> argv = prefix();
  argv.insert(argv.end(), wrapper.begin(), wrapper.end());
  argv.insert(argv.end(),
              {install_.sandbox_host(), "serve", "--config", (dir / "config.toml").string()});
  process_ = std::make_unique<RunningProcess>(argv);
  if (!eventually([&] { return answers() || process_gone(process_->pid()); }, 20s) || !answers()) {
    throw std::runtime_error("the launch service did not start: " + process_->wait(1s).err);
  }
}

Service::~Service() {
  if (!stopped_) stop();
}

void Service::stop() {
  // A wrapper that is a tracer detaches on SIGTERM and leaves serve running: serve first.
  ::kill(pid(), SIGTERM);
  process_->wait(10s);
  stopped_ = true;
}

std::vector<std::string> Service::prefix() const {
  return user_ == User::nobody ? as_nobody() : std::vector<std::string>{};
}

std::vector<std::string> Service::launch(std::vector<std::string> args) const {
  std::vector<std::string> argv = prefix();
  argv.insert(argv.end(), {install_.sandbox_host_launch(), "--via", socket_});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

bool Service::answers() const {
  return static_cast<bool>(connect_raw());
}

UniqueFd Service::connect_raw() const {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_.c_str(), sizeof address.sun_path - 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    return UniqueFd();
  }
  return fd;
}

pid_t Service::pid() const {
  if (!wrapped_) return process_->pid();
  const std::vector<pid_t> children = children_of(process_->pid());
  return children.empty() ? process_->pid() : children.front();
}

std::vector<pid_t> Service::plugins(const std::string &marker) const {
  std::vector<pid_t> found;
  for (pid_t p : descendants(pid())) {
    if (cmdline(p).find(marker) != std::string::npos) found.push_back(p);
  }
  return found;
}

std::vector<pid_t> Service::zombies() const {
  std::vector<pid_t> found;
  for (pid_t child : children_of(pid())) {
    const std::string stat = read_file("/proc/" + std::to_string(child) + "/stat");
    const auto close = stat.rfind(')');
    if (close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z') {
      found.push_back(child);
    }
  }
  return found;
}

}  // namespace sandbox_host::test
