// Round trip of the broker's `ping` under concurrency: the real broker (`sandbox-host serve`)
// as a child process, and C client *processes* (fork) that each ask in a loop, over the
// spool (broker::ask) or over a SOCK_SEQPACKET socket (broker::ask_socket), with K extra
// idle processes of the same user on the host when asked. A plain program rather than
// Google Benchmark: it needs percentiles of individual requests made side by side.
//
//   broker_bench --sandbox-host EXE --work DIR [--cap-s 120] [--warmup 20]
//                [--hostile-client EXE]
//                --scenario
//                transport=spool,identity=lock,wake=inotify,tick=100,clients=64,idle=1000,requests=10000[,rate=25][,hostile=64[,hostile_each=2]]
//                [--scenario ...]...
//
// Per scenario: writes DIR/<n>/config.toml ([broker] state_dir, identity, tick_ms; [ops]
// enabled = ["ping"]; module_dirs beside EXE), forks the idle processes (they pause()),
// starts `EXE serve --config F [--socket DIR/<n>/broker.sock] [--poll]`, asks ping until
// it answers, asks `warmup` more pings untimed (each from a forked child, as the clients
// ask), then releases the clients at once. Each client sends each request's latency
// (steady_clock, ns) or its error back over a pipe. A request that threw, or answered
// anything but "pong" with code 0, is lost. After cap-s seconds no client starts another
// request, and the scenario reports what it did. Then the broker gets SIGTERM and its last
// line gives the broker's own count of answered and refused requests; wait4 gives its CPU
// time. From the release to the last answer (the timed part) it also takes the broker's CPU
// time (/proc/<pid>/stat) and the share of all CPUs busy, anyone's (/proc/stat).
//
// Under attack (`hostile=N`, N >= 0): the layout of tests/host/broker/abuse_test.cpp's hostile
// sandbox. The spool lies in DIR/<n>/sandbox/state (DIR/<n>/sandbox is the hostile sandbox's
// socket directory), the broker also enables `whoami` (the test module op_whoami.so, beside
// the other modules) and serves two labelled sockets, DIR/<n>/hostile.sock=hostile and
// DIR/<n>/honest.sock=honest; the clients ask over the spool or honest.sock, from this
// process's pid namespace. After the warm-up, `EXE run` launches `--hostile-client hold
// <spool> <hostile.sock> N <hostile_each>` in a namespaces sandbox (the hostile processes
// ask for 1 MB replies over the spool and the socket and never read them, hold idle
// connections and send a 100 KB op name), and once it prints "ready" the clients are
// released; it is killed when they are done. hostile=0 is the same layout, quiet: the
// baseline the attacked rows are compared with.
//
// Two ways to ask:
// - back to back (closed loop, no `rate`): the clients take request numbers from one
//   counter in shared memory until `requests` are taken, so all of them stay busy to the
//   end and each asks again as soon as it has its answer. A request's latency is from the
//   call to its return.
// - paced (open loop, `rate=R` requests per second per client): client i makes its share
//   of `requests` (requests / clients, the first requests % clients one more) at the
//   absolute times origin + phase_i + k / R, k = 0, 1, ..., where origin is 100 ms after
//   the release (so that every client is awake before its first request) and phase_i is
//   pseudo-random in [0, 1/R) (a fixed seed per client, so the clients do not fire in
//   lockstep and a rerun has the same schedule). It sleeps until a request's time
//   (clock_nanosleep, TIMER_ABSTIME, timer slack 1 ns); when the previous answer came
//   later than that, it asks at once. A request's latency is ALWAYS from its scheduled
//   time to the answer, so the time a request waited behind a slow previous one (and the
//   client's own wake-up) is counted: no "coordinated omission". The time from the call
//   itself (the service time) is reported beside it, and how many requests started more
//   than 1 ms behind their schedule.
//
// Prints one JSON object per scenario on stdout, one line each; progress and every kind
// of error (once) on stderr. bench/broker_report.py drives it.

#include "broker_bench.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace broker_bench;

// The hostile sandbox of an attacked scenario: `sandbox-host run` (namespaces backend) of
// `hostile_client hold`, from its launch until it printed "ready" (every hostile request is
// in) and then until it is destroyed: the launcher gets SIGKILL, and the sandbox dies with it.
class HostileSandbox {
 public:
  HostileSandbox(const fs::path &exe, const fs::path &hostile_client, const fs::path &sandbox_dir,
                 const fs::path &spool, const fs::path &socket, const Scenario &s,
                 const fs::path &log)
      : log_(log) {
    const std::vector<std::string> args{exe.string(),
                                        "run",
                                        "--socket-dir",
                                        sandbox_dir.string(),
                                        "--read",
                                        hostile_client.parent_path().string(),
                                        "--read",
                                        socket.string(),
                                        "--",
                                        hostile_client.string(),
                                        "hold",
                                        spool.string(),
                                        socket.string(),
                                        std::to_string(s.hostile),
                                        std::to_string(s.hostile_each)};
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) die("pipe: " + errno_text(errno));
    const auto launched = Clock::now();
    pid_ = ::fork();
    if (pid_ < 0) die("fork of the hostile sandbox: " + errno_text(errno));
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (err < 0 || null < 0) _exit(126);
      ::dup2(null, 0);
      ::dup2(out[1], 1);
      ::dup2(err, 2);
      // The backend of the test: a sandbox that is a pid namespace of its own.
      ::setenv("CLAWPATROL_SANDBOX_BACKEND", "namespaces", 1);
      std::vector<char *> argv;
      for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      _exit(127);
    }
    ::close(out[1]);
    stdout_ = out[0];
    wait_ready(std::chrono::seconds(60));
    ready_s_ = std::chrono::duration<double>(Clock::now() - launched).count();
  }
  ~HostileSandbox() {
    if (stdout_ >= 0) ::close(stdout_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
  HostileSandbox(const HostileSandbox &) = delete;
  HostileSandbox &operator=(const HostileSandbox &) = delete;

  // Seconds from the launch to "ready".
  double ready_s() const noexcept { return ready_s_; }

 private:
  void wait_ready(std::chrono::seconds limit) {
    const auto deadline = Clock::now() + limit;
    std::string seen;
    char buffer[256];
    while (seen.find('\n') == std::string::npos) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        die("the hostile sandbox did not print \"ready\" within " + std::to_string(limit.count()) +
            " s: " + excerpt(read_text(log_)));
      }
      pollfd fd{stdout_, POLLIN, 0};
      const int n = ::poll(&fd, 1, static_cast<int>(left.count()));
      if (n < 0 && errno != EINTR) die("poll: " + errno_text(errno));
      if (n <= 0) continue;
      const ssize_t got = ::read(stdout_, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        die("the hostile sandbox ended before it was ready (its output: " + json_string(seen) +
            "): " + excerpt(read_text(log_)));
      }
      seen.append(buffer, static_cast<std::size_t>(got));
    }
    if (seen.rfind("ready\n", 0) != 0) {
      die("the hostile sandbox printed " + json_string(seen) +
          ", not \"ready\": " + excerpt(read_text(log_)));
    }
  }

  fs::path log_;
  pid_t pid_ = -1;
  int stdout_ = -1;
  double ready_s_ = 0;
};

void run_scenario(const Scenario &s, int index, const fs::path &exe, const fs::path &hostile_client,
                  const fs::path &work, int cap_s, int warmup) {
  const bool attack_layout = s.hostile >= 0;
  const fs::path dir = work / std::to_string(index);
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0700);
  // Attacked: the spool in the hostile sandbox's socket directory, so that it can ask there.
  const fs::path sandbox_dir = dir / "sandbox";
  const fs::path state = attack_layout ? sandbox_dir / "state" : dir / "state";
  const fs::path spool = state / "spool";
  const fs::path socket = dir / (attack_layout ? "honest.sock" : "broker.sock");
  const fs::path hostile_socket = dir / "hostile.sock";
  const fs::path config = dir / "config.toml";
  const fs::path modules =
      (exe.parent_path() / ".." / "lib" / "sandbox-host" / "modules").lexically_normal();
  std::vector<std::string> sockets;
  if (attack_layout) {
    if (!fs::exists(modules / "op_whoami.so")) {
      die(modules.string() +
          ": no op_whoami.so; the hostile sandbox asks `whoami` for its large replies (the "
          "test module: build op_whoami with tests on and copy it there)");
    }
    fs::create_directories(sandbox_dir);
    sockets = {socket.string() + "=honest", hostile_socket.string() + "=hostile"};
  } else if (s.transport == "socket") {
    sockets = {socket.string()};
  }
  {
    std::ofstream out(config);
    out << "module_dirs = [" << json_string(modules.string()) << "]\n\n"
        << "[ops]\nenabled = [\"ping\"" << (attack_layout ? ", \"whoami\"" : "") << "]\n\n"
        << "[broker]\nstate_dir = " << json_string(state.string()) << "\n"
        << "identity = \"" << s.identity << "\"\n"
        << "tick_ms = " << s.tick_ms << "\n";
    if (!out) die("cannot write " + config.string());
  }
  std::cerr << "broker_bench: scenario " << index << ": transport=" << s.transport
            << " identity=" << s.identity << " wake=" << s.wake << " tick=" << s.tick_ms
            << " clients=" << s.clients << " idle=" << s.idle << " requests=" << s.requests
            << (s.rate > 0 ? " rate=" + std::to_string(s.rate) : std::string())
            << (attack_layout ? " hostile=" + std::to_string(s.hostile) +
                                    " hostile_each=" + std::to_string(s.hostile_each)
                              : std::string())
            << "\n";

  const auto idle_start = Clock::now();
  const std::vector<pid_t> idle = start_idle(s.idle);
  const double idle_start_s = std::chrono::duration<double>(Clock::now() - idle_start).count();
  const auto procs = [] {
    long n = 0;
    for (const auto &entry : fs::directory_iterator("/proc")) {
      const auto name = entry.path().filename().string();
      if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) ++n;
    }
    return n;
  };
  const Broker server = start_broker(exe, config, sockets, s, dir / "broker.log");

  // Ready once a ping is answered (the spool's lock and, for the socket, the file exist).
  const auto ready_deadline = Clock::now() + std::chrono::seconds(20);
  std::string last_error;
  for (;;) {
    const bool up = attack_layout ? fs::exists(spool / ".broker") && fs::exists(socket) &&
                                        fs::exists(hostile_socket)
                    : s.transport == "socket" ? fs::exists(socket)
                                              : fs::exists(spool / ".broker");
    last_error = !up ? "not up yet" : ping_once(s, spool, socket, std::chrono::milliseconds(2000));
    if (last_error.empty()) break;
    int status = 0;
    if (::waitpid(server.pid, &status, WNOHANG) == server.pid) {
      die("the broker exited before it answered (status " + std::to_string(status) +
          "): " + excerpt(read_text(server.log)));
    }
    if (Clock::now() >= ready_deadline) {
      ::kill(server.pid, SIGKILL);
      die("the broker did not answer ping within 20 s: " + last_error + "\n" +
          excerpt(read_text(server.log)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  long warmup_lost = 0;
  for (int i = 0; i < warmup; ++i) {
    if (!ping_once(s, spool, socket, std::chrono::milliseconds(10000)).empty()) ++warmup_lost;
  }
  const long processes = procs();
  std::unique_ptr<HostileSandbox> hostile;
  if (s.hostile > 0) {
    std::cerr << "broker_bench:   launching the hostile sandbox (" << s.hostile << " processes)\n";
    hostile = std::make_unique<HostileSandbox>(exe, hostile_client, sandbox_dir, spool,
                                               hostile_socket, s, dir / "hostile.log");
  }

  // The clients.
  void *memory =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) die("mmap: " + errno_text(errno));
  auto *shared = new (memory) Shared();
  int go[2];
  if (::pipe2(go, O_CLOEXEC) != 0) die("pipe: " + errno_text(errno));
  const auto cap = Clock::now() + std::chrono::seconds(cap_s);
  std::vector<ClientStream> clients(static_cast<std::size_t>(s.clients));
  for (std::size_t index = 0; index < clients.size(); ++index) {
    ClientStream &client = clients[index];
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) die("pipe: " + errno_text(errno));
    const pid_t pid = ::fork();
    if (pid < 0) die("fork of a client: " + errno_text(errno));
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::close(go[1]);
      ::close(out[0]);
      // Other clients' pipes: not this one's business.
      for (const auto &other : clients) {
        if (other.fd >= 0) ::close(other.fd);
      }
      client_main(s, static_cast<int>(index), spool, socket, shared, go[0], out[1], cap);
    }
    ::close(out[1]);
    client.pid = pid;
    client.fd = out[0];
  }
  ::close(go[0]);
  const auto jiffies_before = cpu_jiffies();
  const double broker_cpu_before = process_cpu_ms(server.pid);
  const auto released = Clock::now();
  // Paced, the clock starts at the schedule's origin.
  const auto start = s.rate > 0 ? released + kPacedLead : released;
  shared->origin_ns.store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count(),
      std::memory_order_release);
  ::close(go[1]);  // go

  Results results;
  results.latencies.reserve(static_cast<std::size_t>(s.requests));
  const auto hard_deadline = cap + std::chrono::seconds(30);
  bool killed = false;
  Clock::time_point last_done = start;
  std::vector<char> buffer(1 << 16);
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<ClientStream *> owners;
    for (auto &client : clients) {
      if (client.done) continue;
      fds.push_back({client.fd, POLLIN, 0});
      owners.push_back(&client);
    }
    if (fds.empty()) break;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(hard_deadline - Clock::now());
    if (left.count() <= 0) {
      // Clients stuck in a request past the cap: the requests they hold are not counted.
      for (auto *client : owners) ::kill(client->pid, SIGKILL);
      killed = true;
      for (auto *client : owners) {
        ::close(client->fd);
        client->done = true;
      }
      break;
    }
    const int n =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) die("poll: " + errno_text(errno));
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      ClientStream &client = *owners[i];
      const ssize_t got = ::read(client.fd, buffer.data(), buffer.size());
      if (got > 0) {
        client.pending.append(buffer.data(), static_cast<std::size_t>(got));
        parse_records(client, results);
      } else if (got == 0 || (got < 0 && errno != EINTR)) {
        ::close(client.fd);
        client.done = true;
        last_done = Clock::now();
      }
    }
  }
  const double wall_s = std::chrono::duration<double>(last_done - start).count();
  const auto jiffies_after = cpu_jiffies();
  const double broker_cpu_timed = process_cpu_ms(server.pid) - broker_cpu_before;
  const double machine_busy =
      static_cast<double>(jiffies_after.first - jiffies_before.first) /
      static_cast<double>(std::max(1LL, jiffies_after.second - jiffies_before.second));
  rusage client_usage{};
  double clients_cpu = 0;
  for (auto &client : clients) {
    int status = 0;
    if (::wait4(client.pid, &status, 0, &client_usage) == client.pid)
      clients_cpu += cpu_ms(client_usage);
  }
  const bool capped = Clock::now() >= cap || killed;
  const long taken = std::min(shared->next.load(), s.requests);
  const long behind = shared->behind.load();
  ::munmap(memory, sizeof(Shared));
  const double hostile_ready_s = hostile ? hostile->ready_s() : NAN;
  hostile.reset();  // the sandbox dies with its launcher; its requests go with it

  // The broker's own counts, from the line it prints when it stops.
  ::kill(server.pid, SIGTERM);
  rusage broker_usage{};
  int broker_status = 0;
  const auto stop_deadline = Clock::now() + std::chrono::seconds(10);
  pid_t reaped = 0;
  while ((reaped = ::wait4(server.pid, &broker_status, WNOHANG, &broker_usage)) == 0 &&
         Clock::now() < stop_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (reaped == 0) {
    ::kill(server.pid, SIGKILL);
    ::wait4(server.pid, &broker_status, 0, &broker_usage);
  }
  kill_all(idle);
  const std::string log = read_text(server.log);
  long broker_answered = -1, broker_refused = -1;
  if (const auto at = log.rfind("answered "); at != std::string::npos) {
    std::sscanf(log.c_str() + at, "answered %ld, refused %ld", &broker_answered, &broker_refused);
  }
  std::string log_tail;  // refusals the broker recorded (its audit goes to the log)
  {
    std::stringstream lines(log);
    std::string line;
    long refusal_lines = 0;
    while (std::getline(lines, line)) {
      if (line.find("refused:") != std::string::npos && refusal_lines++ < 3)
        log_tail += line + "\n";
    }
  }

  std::vector<int64_t> sorted = results.latencies;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> service = results.service;
  std::sort(service.begin(), service.end());
  const long answered = static_cast<long>(sorted.size());
  const long attempted = answered + results.lost;
  double sum = 0;
  for (auto v : sorted) sum += static_cast<double>(v);
  std::ostringstream json;
  json << "{\"transport\":" << json_string(s.transport)
       << ",\"identity\":" << json_string(s.transport == "socket" ? "peercred" : s.identity)
       << ",\"wake\":" << json_string(s.transport == "socket" ? "socket" : s.wake)
       << ",\"tick_ms\":" << s.tick_ms << ",\"clients\":" << s.clients << ",\"idle\":" << s.idle
       << ",\"requests\":" << s.requests << ",\"rate\":" << s.rate
       << ",\"offered_per_s\":" << static_cast<long>(s.rate) * s.clients
       << ",\"behind\":" << (s.rate > 0 ? behind : 0) << ",\"taken\":" << taken
       << ",\"attempted\":" << attempted << ",\"answered\":" << answered
       << ",\"lost\":" << results.lost << ",\"not_run\":" << (s.requests - attempted)
       << ",\"capped\":" << (capped ? "true" : "false")
       << ",\"clients_killed\":" << (killed ? "true" : "false") << ",\"cap_s\":" << cap_s
       << ",\"warmup\":" << warmup << ",\"warmup_lost\":" << warmup_lost
       << ",\"p50_us\":" << number(percentile(sorted, 0.50) / 1e3)
       << ",\"p90_us\":" << number(percentile(sorted, 0.90) / 1e3)
       << ",\"p99_us\":" << number(percentile(sorted, 0.99) / 1e3)
       << ",\"p999_us\":" << number(percentile(sorted, 0.999) / 1e3)
       << ",\"min_us\":" << number(sorted.empty() ? NAN : sorted.front() / 1e3)
       << ",\"max_us\":" << number(sorted.empty() ? NAN : sorted.back() / 1e3)
       << ",\"mean_us\":" << number(sorted.empty() ? NAN : sum / sorted.size() / 1e3)
       << ",\"service_p50_us\":" << number(percentile(service, 0.50) / 1e3)
       << ",\"service_p99_us\":" << number(percentile(service, 0.99) / 1e3)
       << ",\"service_max_us\":" << number(service.empty() ? NAN : service.back() / 1e3)
       << ",\"wall_s\":" << number(wall_s, 3)
       << ",\"requests_per_s\":" << number(wall_s > 0 ? answered / wall_s : NAN)
       << ",\"broker_cpu_ms\":" << number(cpu_ms(broker_usage))
       << ",\"clients_cpu_ms\":" << number(clients_cpu)
       << ",\"broker_answered\":" << broker_answered << ",\"broker_refused\":" << broker_refused
       << ",\"processes\":" << processes << ",\"idle_start_s\":" << number(idle_start_s, 3)
       << ",\"broker_cpu_timed_ms\":" << number(broker_cpu_timed)
       << ",\"machine_busy\":" << number(machine_busy, 3) << ",\"hostile\":" << s.hostile
       << ",\"hostile_each\":" << s.hostile_each
       << ",\"hostile_ready_s\":" << number(hostile_ready_s, 3) << ",\"errors\":[";
  bool first = true;
  for (const auto &[kind, entry] : results.errors) {
    json << (first ? "" : ",") << "{\"kind\":" << json_string(kind) << ",\"count\":" << entry.first
         << ",\"first\":" << json_string(entry.second) << "}";
    first = false;
  }
  json << "],\"broker_refusals\":" << json_string(log_tail) << "}";
  std::cout << json.str() << std::endl;
  std::cerr << "broker_bench:   answered " << answered << "/" << s.requests << ", lost "
            << results.lost << ", p50 " << number(percentile(sorted, 0.5) / 1e3) << " us, p99 "
            << number(percentile(sorted, 0.99) / 1e3) << " us, " << number(wall_s, 2) << " s"
            << (capped ? " (capped)" : "") << "\n";
}

}  // namespace

int main(int argc, char **argv) {
  fs::path exe, work, hostile_client;
  int cap_s = 120, warmup = 20;
  std::vector<Scenario> scenarios;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--sandbox-host") {
      exe = value();
    } else if (arg == "--work") {
      work = value();
    } else if (arg == "--cap-s") {
      cap_s = std::atoi(value().c_str());
    } else if (arg == "--warmup") {
      warmup = std::atoi(value().c_str());
    } else if (arg == "--hostile-client") {
      hostile_client = value();
    } else if (arg == "--scenario") {
      scenarios.push_back(parse_scenario(value()));
    } else {
      die("unknown argument " + arg +
          "; usage: broker_bench --sandbox-host EXE --work DIR [--cap-s S] [--warmup N] "
          "[--hostile-client EXE] --scenario k=v,... [--scenario ...]");
    }
  }
  if (exe.empty() || work.empty() || scenarios.empty()) {
    die("--sandbox-host, --work and at least one --scenario are required");
  }
  if (cap_s < 1 || warmup < 0) die("--cap-s must be at least 1, --warmup not negative");
  const bool attacked = std::any_of(scenarios.begin(), scenarios.end(),
                                    [](const Scenario &s) { return s.hostile > 0; });
  if (attacked) {
    const std::string want =
        "a scenario with hostile=N > 0 needs --hostile-client, the executable of "
        "tests/fixtures/hostile_client.cpp (build target hostile_client)";
    if (hostile_client.empty()) die(want);
    if (::access(hostile_client.c_str(), X_OK) != 0) {
      die(want + ": " + hostile_client.string() + ": " + errno_text(errno));
    }
  }
  // A client that leaves mid-reply must not end this process.
  ::signal(SIGPIPE, SIG_IGN);
  fs::create_directories(work);
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    run_scenario(scenarios[i], static_cast<int>(i), fs::absolute(exe),
                 hostile_client.empty() ? fs::path() : fs::absolute(hostile_client),
                 fs::absolute(work), cap_s, warmup);
  }
  return 0;
}
