// The processes around broker_bench's clients: the idle processes, the broker (`sandbox-host
// serve`) and the untimed pings that wait for it, and the CPU time of processes and of the
// machine.

#include "broker_bench.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace broker_bench {

// ---- the idle processes and the broker -----------------------------------------------------

std::vector<pid_t> start_idle(int count) {
  std::vector<pid_t> pids;
  pids.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) die("fork of idle process " + std::to_string(i) + ": " + errno_text(errno));
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      // Like a typical quiet process: stdio and nothing else open.
      const int null = ::open("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
      ::close_range(3, ~0U, 0);
      for (;;) ::pause();
    }
    pids.push_back(pid);
  }
  return pids;
}

void kill_all(const std::vector<pid_t> &pids) {
  for (pid_t pid : pids) ::kill(pid, SIGKILL);
  for (pid_t pid : pids) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

double cpu_ms(const rusage &usage) {
  auto ms = [](const timeval &t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// sockets: the `--socket` values, PATH or PATH=LABEL each.
Broker start_broker(const fs::path &exe, const fs::path &config,
                    const std::vector<std::string> &sockets, const Scenario &s,
                    const fs::path &log) {
  std::vector<std::string> args{exe.string(), "serve", "--config", config.string()};
  for (const auto &socket : sockets) args.insert(args.end(), {"--socket", socket});
  if (s.wake == "poll") args.push_back("--poll");
  const pid_t pid = ::fork();
  if (pid < 0) die("fork of the broker: " + errno_text(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || null < 0) _exit(126);
    ::dup2(null, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  return {pid, log};
}

std::string read_text(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One ping, untimed; empty when answered, the error otherwise.
std::string ping_here(const Scenario &s, const fs::path &spool, const fs::path &socket,
                      std::chrono::milliseconds timeout) {
  sandbox_host::Request request;
  request.op = "ping";
  broker::AskOptions options;
  options.timeout = timeout;
  try {
    const auto answer = s.transport == "socket" ? broker::ask_socket(socket, request, options)
                                                : broker::ask(spool, request, options);
    if (answer.out != "pong" || answer.code != 0) return "wrong answer " + json_string(answer.out);
    return {};
  } catch (const std::exception &e) {
    return e.what();
  }
}

// The same from a forked child, as every client asks.
std::string ping_once(const Scenario &s, const fs::path &spool, const fs::path &socket,
                      std::chrono::milliseconds timeout) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) die("pipe: " + errno_text(errno));
  const pid_t pid = ::fork();
  if (pid < 0) die("fork: " + errno_text(errno));
  if (pid == 0) {
    ::close(out[0]);
    const std::string error = ping_here(s, spool, socket, timeout);
    write_all(out[1], error.data(), error.size());
    _exit(error.empty() ? 0 : 1);
  }
  ::close(out[1]);
  std::string error;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    error.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    error = "the pinging process ended with status " + std::to_string(status);
  }
  return error;
}

// The first and last lines of a log, for a message.
std::string excerpt(const std::string &text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.size() <= 8) return text;
  std::string out;
  for (std::size_t i = 0; i < 4; ++i) out += lines[i] + "\n";
  out += "[" + std::to_string(lines.size() - 8) + " lines]\n";
  for (std::size_t i = lines.size() - 4; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

// Busy and total jiffies of all CPUs together (/proc/stat), for the machine's load.
std::pair<long long, long long> cpu_jiffies() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  long long total = 0, idle = 0;
  for (int i = 0; i < 8; ++i) {
    long long v = 0;
    in >> v;
    total += v;
    if (i == 3 || i == 4) idle += v;  // idle, iowait
  }
  return {total - idle, total};
}

// The CPU time (user + system, all its threads) process pid has used so far, in ms.
double process_cpu_ms(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto comm_end = stat.rfind(')');
  if (comm_end == std::string::npos) return NAN;
  std::stringstream fields(stat.substr(comm_end + 2));
  std::string field;
  long long utime = 0, stime = 0;
  // From the state (field 3) on: utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) stime = std::atoll(field.c_str());
  }
  return static_cast<double>(utime + stime) * 1e3 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace broker_bench
