// Asking the broker (docs/design.md#broker-protocol): over the spool, or over a sandbox's
// broker socket.
#pragma once

#include <sandbox_host/host/broker/protocol.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sandbox_host::broker {

// No broker took the request in time, or the broker went away before it answered. what():
// "no sandbox-host broker answered: <why>".
class NoBroker : public std::runtime_error {
 public:
  explicit NoBroker(const std::string &why);
};

// The broker's refusal (the reply's error).
class Refused : public std::runtime_error {
 public:
  Refused(const std::string &error, std::string out, std::string err, int code);
  std::string out, err;
  int code;
};

struct Answer {
  std::string out, err;  // all of it, unless on_output took it as it came
  int code = 0;
};

struct AskOptions {
  // How long to wait for a broker to take the request; once taken, the answer is awaited
  // as long as the broker lives.
  std::chrono::milliseconds timeout{10000};
  // Streamed output as it arrives (is_err for err); without it, output is collected.
  std::function<void(std::string_view bytes, bool is_err)> on_output;
};

// Over the spool directory. Throws NoBroker or Refused.
Answer ask(const std::filesystem::path &spool, const Request &request,
           const AskOptions &options = {});
// Over a broker socket. Throws NoBroker or Refused.
Answer ask_socket(const std::filesystem::path &socket, const Request &request,
                  const AskOptions &options = {});

}  // namespace sandbox_host::broker
