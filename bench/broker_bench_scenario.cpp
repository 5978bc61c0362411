// broker_bench's scenario (the --scenario spec), its error and JSON text, the numbers it
// prints, and the pipe writes of its client processes.

#include "broker_bench.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace broker_bench {

[[noreturn]] void die(const std::string &message) {
  std::cerr << "broker_bench: " << message << "\n";
  std::exit(2);
}

std::string errno_text(int error) {
  return std::strerror(error);
}

Scenario parse_scenario(const std::string &spec) {
  Scenario s;
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) die("--scenario: " + item + ": want key=value");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    auto number = [&](long low, long high) {
      char *end = nullptr;
      const long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v < low || v > high) {
        die("--scenario: " + key + "=" + value + ": want an integer in [" + std::to_string(low) +
            ", " + std::to_string(high) + "]");
      }
      return v;
    };
    if (key == "transport" && (value == "spool" || value == "socket")) {
      s.transport = value;
    } else if (key == "identity" && (value == "lock" || value == "scan")) {
      s.identity = value;
    } else if (key == "wake" && (value == "inotify" || value == "poll")) {
      s.wake = value;
    } else if (key == "tick") {
      s.tick_ms = static_cast<int>(number(10, 10000));
    } else if (key == "clients") {
      s.clients = static_cast<int>(number(1, 4096));
    } else if (key == "idle") {
      s.idle = static_cast<int>(number(0, 100000));
    } else if (key == "requests") {
      s.requests = number(1, 100000000);
    } else if (key == "rate") {
      s.rate = static_cast<int>(number(1, 1000000));
    } else if (key == "hostile") {
      s.hostile = static_cast<int>(number(0, 4096));
    } else if (key == "hostile_each") {
      s.hostile_each = static_cast<int>(number(1, 64));
    } else {
      die("--scenario: unknown or invalid " + item);
    }
  }
  if (s.transport == "socket" && s.wake == "poll") {
    die("--scenario: wake=poll is the spool's polling tick; the socket has none");
  }
  return s;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

// The kind of an error: its text with numbers and hex ids replaced, so that the same
// failure of different requests (pids, request ids) counts once.
std::string error_kind(const std::string &text) {
  std::string kind;
  for (std::size_t i = 0; i < text.size();) {
    if (std::isxdigit(static_cast<unsigned char>(text[i])) != 0) {
      std::size_t j = i;
      bool digit = false;
      while (j < text.size() && std::isxdigit(static_cast<unsigned char>(text[j])) != 0) {
        digit = digit || std::isdigit(static_cast<unsigned char>(text[j])) != 0;
        ++j;
      }
      // A run of hex letters alone ("dead", "face", "a") is a word, not a number.
      const bool word_before = i > 0 && std::isalpha(static_cast<unsigned char>(text[i - 1]));
      const bool word_after = j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]));
      if (digit && !word_before && !word_after) {
        kind += "#";
        i = j;
        continue;
      }
    }
    kind.push_back(text[i++]);
  }
  return kind;
}

void write_all(int fd, const void *data, std::size_t size) {
  const char *at = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    at += n;
    size -= static_cast<std::size_t>(n);
  }
}

double percentile(const std::vector<int64_t> &sorted, double q) {
  if (sorted.empty()) return NAN;
  const double k = (static_cast<double>(sorted.size()) - 1) * q;
  const auto lo = static_cast<std::size_t>(k);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return static_cast<double>(sorted[lo]) +
         (static_cast<double>(sorted[hi]) - static_cast<double>(sorted[lo])) *
             (k - static_cast<double>(lo));
}

std::string number(double v, int decimals) {
  if (std::isnan(v)) return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

}  // namespace broker_bench
