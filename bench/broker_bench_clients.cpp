// broker_bench's client processes: each asks the broker `ping` in a loop, back to back or
// paced, and sends each request's latency or error to the parent over a pipe, which parses
// them as they arrive.

#include "broker_bench.hpp"

#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>

namespace broker_bench {

// ---- the client processes ------------------------------------------------------------------
//
// Records on the pipe: 'L' + int64 latency ns + int64 service ns (answered), or 'E' + int64
// latency ns + uint32 length + text (lost). Back to back the two times are the same; paced,
// the latency is from the scheduled time and the service time from the call. Flushed every
// kFlushRecords answered requests and at the end, so that the parent is not woken per
// request.

constexpr std::size_t kFlushRecords = 256;
// A paced request that starts later than this after its scheduled time counts as behind.
constexpr auto kBehind = std::chrono::milliseconds(1);

void sleep_until(Clock::time_point when) {
  // steady_clock is CLOCK_MONOTONIC (libstdc++): one clock for all the processes.
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch());
  timespec at{};
  at.tv_sec = static_cast<time_t>(ns.count() / 1000000000);
  at.tv_nsec = static_cast<long>(ns.count() % 1000000000);
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

[[noreturn]] void client_main(const Scenario &s, int index, const fs::path &spool,
                              const fs::path &socket, Shared *shared, int go_fd, int out_fd,
                              Clock::time_point cap) {
  sandbox_host::Request request;
  request.op = "ping";
  broker::AskOptions options;
  options.timeout = std::chrono::milliseconds(10000);
  const bool paced = s.rate > 0;
  // Paced: this client's share of the requests and its phase.
  const long mine = s.requests / s.clients + (index < s.requests % s.clients ? 1 : 0);
  const auto interval = std::chrono::nanoseconds(1000000000LL / std::max(1, s.rate));
  std::mt19937_64 random(0x5eedULL + static_cast<uint64_t>(index));
  const auto phase = std::chrono::nanoseconds(
      static_cast<int64_t>(std::uniform_real_distribution<double>(0.0, 1.0)(random) *
                           static_cast<double>(interval.count())));
  if (paced) ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // wake on time, not up to 50 µs late
  char byte = 0;
  // Every client starts when the parent closes the write end: read returns 0 to all.
  while (::read(go_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(go_fd);
  const Clock::time_point origin{
      std::chrono::nanoseconds(shared->origin_ns.load(std::memory_order_acquire))};
  std::string buffer;
  std::size_t records = 0;
  for (long k = 0;; ++k) {
    Clock::time_point scheduled;
    if (paced) {
      if (k >= mine) break;
      scheduled = origin + phase + k * interval;
      if (scheduled >= cap) break;
      if (Clock::now() < scheduled) sleep_until(scheduled);
    }
    if (Clock::now() >= cap) break;
    if (!paced && shared->next.fetch_add(1, std::memory_order_relaxed) >= s.requests) break;
    std::string error;
    const auto start = Clock::now();
    if (paced) {
      shared->next.fetch_add(1, std::memory_order_relaxed);
      if (start - scheduled > kBehind) shared->behind.fetch_add(1, std::memory_order_relaxed);
    } else {
      scheduled = start;
    }
    try {
      const broker::Answer answer = s.transport == "socket"
                                        ? broker::ask_socket(socket, request, options)
                                        : broker::ask(spool, request, options);
      if (answer.out != "pong" || answer.code != 0 || !answer.err.empty()) {
        error = "wrong answer: out " + json_string(answer.out) + ", err " +
                json_string(answer.err) + ", code " + std::to_string(answer.code);
      }
    } catch (const broker::Refused &e) {
      error = std::string("refused: ") + e.what();
    } catch (const std::exception &e) {
      error = e.what();
    }
    const auto end = Clock::now();
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - scheduled).count();
    const int64_t service_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
    if (error.empty()) {
      buffer.push_back('L');
      buffer.append(reinterpret_cast<const char *>(&ns), sizeof ns);
      buffer.append(reinterpret_cast<const char *>(&service_ns), sizeof service_ns);
    } else {
      buffer.push_back('E');
      buffer.append(reinterpret_cast<const char *>(&ns), sizeof ns);
      const auto size = static_cast<uint32_t>(std::min<std::size_t>(error.size(), 4096));
      buffer.append(reinterpret_cast<const char *>(&size), sizeof size);
      buffer.append(error.data(), size);
    }
    if (++records >= kFlushRecords) {
      write_all(out_fd, buffer.data(), buffer.size());
      buffer.clear();
      records = 0;
    }
  }
  write_all(out_fd, buffer.data(), buffer.size());
  _exit(0);
}

void parse_records(ClientStream &client, Results &results) {
  std::size_t at = 0;
  const std::string &p = client.pending;
  while (at < p.size()) {
    const char type = p[at];
    if (type == 'L') {
      if (p.size() - at < 1 + 2 * sizeof(int64_t)) break;
      int64_t ns = 0, service_ns = 0;
      std::memcpy(&ns, p.data() + at + 1, sizeof ns);
      std::memcpy(&service_ns, p.data() + at + 1 + sizeof ns, sizeof service_ns);
      results.latencies.push_back(ns);
      results.service.push_back(service_ns);
      at += 1 + sizeof ns + sizeof service_ns;
    } else if (type == 'E') {
      const std::size_t head = 1 + sizeof(int64_t) + sizeof(uint32_t);
      if (p.size() - at < head) break;
      uint32_t size = 0;
      std::memcpy(&size, p.data() + at + 1 + sizeof(int64_t), sizeof size);
      if (p.size() - at < head + size) break;
      const std::string text = p.substr(at + head, size);
      ++results.lost;
      auto &entry = results.errors[error_kind(text)];
      if (entry.first++ == 0) {
        entry.second = text;
        std::cerr << "broker_bench: lost request: " << text << "\n";
      }
      at += head + size;
    } else {
      die("a client sent a malformed record");
    }
  }
  client.pending.erase(0, at);
}

}  // namespace broker_bench
