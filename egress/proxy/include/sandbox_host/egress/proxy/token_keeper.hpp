// The GitHub token the egress proxy injects, and what keeps it fresh: read from the operator's
// command now and then, held in memory alone, and never named in a message
// (docs/design.md#tokens).
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::egress {

// The token now; empty while there is none. Thread-safe.
class Token {
 public:
  std::string get() const;
  void set(std::string token);
  bool held() const;

 private:
  mutable std::mutex mutex_;
  std::string token_;
};

// How TokenKeeper reads the token: every `every` while reads succeed; after each failed
// read in a row it waits the next step of backoff, and once those are spent, `every`. A
// read is cut at bound while a token is held, at cold_bound while none is: a host started
// at boot reads first while the command may still wait on what the boot has not brought
// up, and a long wait with no token fails every call in the meantime.
struct TokenRenewal {
  std::chrono::milliseconds every{std::chrono::minutes(5)}, bound{std::chrono::seconds(30)},
      cold_bound{std::chrono::minutes(2)};
  std::vector<std::chrono::milliseconds> backoff{std::chrono::seconds(5), std::chrono::seconds(15),
                                                 std::chrono::seconds(60)};
};

// A read that gave no token; its message is the cause and never holds the token.
struct TokenReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads the token once, within bound, giving up early once stop is requested. Throws
// TokenReadError on failure.
using TokenReader =
    std::function<std::string(std::chrono::milliseconds bound, std::stop_token stop)>;

// How the operator's token commands are read (token_command.hpp's command_token_reader):
// handed in where the proxy is composed, since running a host command is the broker's,
// which the proxy does not link. Given the command's argv and the subject its errors name.
using CommandTokenReaders =
    std::function<TokenReader(std::vector<std::string> argv, std::string subject)>;

// A file holding the token on one line, read whole at each read (so a file the operator
// replaces is taken at the next renewal), trimmed, with the command's checks on what it
// holds. Throws std::invalid_argument for a relative path.
TokenReader file_token_reader(std::filesystem::path path, std::string subject = "token");

// Sets token to what read returns, at once and then as renewal says, on a thread of its own
// until destroyed; destruction stops it promptly, mid-wait or mid-read. A failed read keeps the
// token held. say gets one line per read ("token read", "token renewed", "token read failed:
// <cause>; keeping the token held; next read in 5 s"), never the token.
class TokenKeeper {
 public:
  // Throws std::invalid_argument for a duration that is not positive or an empty read.
  // subject names what is kept in say's lines ("token", "parent proxy credential").
  TokenKeeper(Token &token, TokenRenewal renewal, TokenReader read,
              std::function<void(const std::string &)> say, std::string subject = "token");
  ~TokenKeeper();
  TokenKeeper(const TokenKeeper &) = delete;
  TokenKeeper &operator=(const TokenKeeper &) = delete;

 private:
  void keep(std::stop_token stop);
  void tell(const std::string &line) const;

  Token &token_;
  TokenRenewal renewal_;
  TokenReader read_;
  std::function<void(const std::string &)> say_;
  std::string subject_;
  std::mutex wait_mutex_;
  std::condition_variable_any wait_;
  std::jthread thread_;  // last: stopped and joined before the members it uses go
};

}  // namespace sandbox_host::egress
