// What the files of broker_bench share (broker_bench.cpp has what the program does): the
// scenario, the clients' shared counters and their results, the broker process, and the
// helpers for text, numbers, pipes and the CPU of processes.
#pragma once

#include <sandbox_host/host/broker/client.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace broker_bench {

namespace fs = std::filesystem;
namespace broker = sandbox_host::broker;
using Clock = std::chrono::steady_clock;

// ---- the scenario and the text helpers (broker_bench_scenario.cpp) -------------------------

[[noreturn]] void die(const std::string &message);
std::string errno_text(int error);

struct Scenario {
  std::string transport = "spool";  // spool | socket
  std::string identity = "lock";    // lock | scan
  std::string wake = "inotify";     // inotify | poll
  int tick_ms = 100;
  int clients = 1;
  int idle = 0;
  long requests = 10000;
  int rate = 0;          // requests per second per client; 0: back to back
  int hostile = -1;      // processes of the hostile sandbox; -1: not the attack layout
  int hostile_each = 2;  // requests each hostile process holds per transport
};

Scenario parse_scenario(const std::string &spec);
std::string json_string(std::string_view text);
// The kind of an error: its text with numbers and hex ids replaced, so that the same
// failure of different requests (pids, request ids) counts once.
std::string error_kind(const std::string &text);
void write_all(int fd, const void *data, std::size_t size);
double percentile(const std::vector<int64_t> &sorted, double q);
std::string number(double v, int decimals = 1);

// ---- the client processes (broker_bench_clients.cpp) ---------------------------------------

// Paced: the schedule's origin lies this long after the release.
constexpr auto kPacedLead = std::chrono::milliseconds(100);

struct Shared {
  std::atomic<long> next{0};          // the next request number to take (paced: requests started)
  std::atomic<long> behind{0};        // paced: requests started more than kBehind late
  std::atomic<int64_t> origin_ns{0};  // paced: the schedule's origin, steady_clock
};

[[noreturn]] void client_main(const Scenario &s, int index, const fs::path &spool,
                              const fs::path &socket, Shared *shared, int go_fd, int out_fd,
                              Clock::time_point cap);

// What one client sent, parsed as it arrives.
struct ClientStream {
  pid_t pid = -1;
  int fd = -1;
  std::string pending;
  bool done = false;
};

struct Results {
  std::vector<int64_t> latencies;  // answered requests, ns
  std::vector<int64_t> service;    // the same requests from the call, ns
  long lost = 0;
  std::map<std::string, std::pair<long, std::string>> errors;  // kind -> count, first text
};

void parse_records(ClientStream &client, Results &results);

// ---- the idle processes and the broker (broker_bench_processes.cpp) ------------------------

std::vector<pid_t> start_idle(int count);
void kill_all(const std::vector<pid_t> &pids);
double cpu_ms(const rusage &usage);

struct Broker {
  pid_t pid = -1;
  fs::path log;
};

// sockets: the `--socket` values, PATH or PATH=LABEL each.
Broker start_broker(const fs::path &exe, const fs::path &config,
                    const std::vector<std::string> &sockets, const Scenario &s,
                    const fs::path &log);
std::string read_text(const fs::path &path);
// One ping, untimed; empty when answered, the error otherwise.
std::string ping_here(const Scenario &s, const fs::path &spool, const fs::path &socket,
                      std::chrono::milliseconds timeout);
// The same from a forked child, as every client asks.
std::string ping_once(const Scenario &s, const fs::path &spool, const fs::path &socket,
                      std::chrono::milliseconds timeout);
// The first and last lines of a log, for a message.
std::string excerpt(const std::string &text);
// Busy and total jiffies of all CPUs together (/proc/stat), for the machine's load.
std::pair<long long, long long> cpu_jiffies();
// The CPU time (user + system, all its threads) process pid has used so far, in ms.
double process_cpu_ms(pid_t pid);

}  // namespace broker_bench
