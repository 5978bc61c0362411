#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/host/egress/token_keeper.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <poll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <system_error>

extern char **environ;

namespace sandbox_host::egress {
namespace {

using std::chrono::milliseconds;

// A token is a line of a few dozen bytes; a command printing more is not printing one.
constexpr std::size_t kMaxTokenOutput = 64 * 1024;

std::string describe(milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
  return std::to_string(duration.count()) + " ms";
}

std::string_view trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

std::vector<std::string> this_environment() {
  std::vector<std::string> env;
  for (char **entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  return env;
}

// Runs the command once; what it printed is checked by the caller.
std::string run_token_command(HostCommand command, milliseconds bound, std::stop_token stop) {
  const std::string name = "the token command " + command.path;
  command.timeout = bound;
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) throw TokenReadError("cannot run " + name + ": eventfd failed");
  std::string out;
  bool too_long = false;
  broker::CommandIo io;
  io.out = [&](std::string_view bytes) {
    if (out.size() + bytes.size() > kMaxTokenOutput) {
      too_long = true;
      ::eventfd_write(wake.get(), 1);
      return;
    }
    out.append(bytes);
  };
  io.err = [](std::string_view) {};
  io.requester_gone = [&] { return too_long || stop.stop_requested(); };
  io.wake_fd = wake.get();
  io.wake_events = POLLIN;
  // Wakes the command's loop at once, which then asks requester_gone.
  std::stop_callback wake_on_stop(stop, [&] { ::eventfd_write(wake.get(), 1); });

  broker::CommandResult result;
  try {
    result = broker::run_host_command(command, io);
  } catch (const std::system_error &error) {
    throw TokenReadError(error.what());
  }
  if (stop.stop_requested()) throw TokenReadError(name + " was stopped");
  if (too_long) {
    throw TokenReadError(name + " printed more than " + std::to_string(kMaxTokenOutput) +
                         " bytes; a token is one short line");
  }
  if (!result.error.empty()) {
    if (result.error.starts_with("timed out")) {
      throw TokenReadError(name + " did not finish within its bound of " + describe(bound));
    }
    throw TokenReadError(name + " was cut short: " + result.error);
  }
  if (result.code != 0) {
    throw TokenReadError(name + " exited with code " + std::to_string(result.code));
  }
  return out;
}

}  // namespace

std::string Token::get() const {
  std::lock_guard lock(mutex_);
  return token_;
}

void Token::set(std::string token) {
  std::lock_guard lock(mutex_);
  token_ = std::move(token);
}

bool Token::held() const {
  std::lock_guard lock(mutex_);
  return !token_.empty();
}

TokenReader command_token_reader(std::vector<std::string> argv) {
  if (argv.empty()) throw std::invalid_argument("the token command is empty");
  if (argv.front().empty() || argv.front().front() != '/') {
    throw std::invalid_argument("the token command \"" + argv.front() +
                                "\" is not an absolute path");
  }
  HostCommand command;
  command.path = argv.front();
  command.args.assign(argv.begin() + 1, argv.end());
  command.env = this_environment();
  return [command = std::move(command)](milliseconds bound, std::stop_token stop) {
    const std::string out = run_token_command(command, bound, std::move(stop));
    const std::string_view token = trimmed(out);
    if (token.empty())
      throw TokenReadError("no token in the command's output (" + command.path + ")");
    if (const auto lines = std::count(token.begin(), token.end(), '\n'); lines > 0) {
      throw TokenReadError("the token command " + command.path + " printed " +
                           std::to_string(lines + 1) + " lines; the token is one line");
    }
    const bool printable = std::none_of(token.begin(), token.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (!printable) {
      throw TokenReadError("the token command " + command.path +
                           " printed a control character in its token");
    }
    return std::string(token);
  };
}

TokenKeeper::TokenKeeper(Token &token, TokenRenewal renewal, TokenReader read,
                         std::function<void(const std::string &)> say)
    : token_(token), renewal_(std::move(renewal)), read_(std::move(read)), say_(std::move(say)) {
  const bool positive = renewal_.every.count() > 0 && renewal_.bound.count() > 0 &&
                        renewal_.cold_bound.count() > 0 &&
                        std::all_of(renewal_.backoff.begin(), renewal_.backoff.end(),
                                    [](milliseconds step) { return step.count() > 0; });
  if (!positive) {
    throw std::invalid_argument(
        "the token renewal's every, bound, cold_bound and backoff steps must all be positive");
  }
  if (!read_) throw std::invalid_argument("the token keeper has no way to read the token");
  thread_ = std::jthread([this](std::stop_token stop) { keep(std::move(stop)); });
}

TokenKeeper::~TokenKeeper() = default;

void TokenKeeper::tell(const std::string &line) const {
  if (say_) say_(line);
}

void TokenKeeper::keep(std::stop_token stop) {
  std::size_t failures_in_a_row = 0;
  while (!stop.stop_requested()) {
    const bool held = token_.held();
    milliseconds wait = renewal_.every;
    std::string event;
    try {
      std::string fresh = read_(held ? renewal_.bound : renewal_.cold_bound, stop);
      if (fresh.empty()) throw TokenReadError("the read gave an empty token");
      if (stop.stop_requested()) return;
      token_.set(std::move(fresh));
      failures_in_a_row = 0;
      event = held ? "token renewed" : "token read";
    } catch (const std::exception &error) {
      if (stop.stop_requested()) return;
      if (failures_in_a_row < renewal_.backoff.size()) wait = renewal_.backoff[failures_in_a_row];
      ++failures_in_a_row;
      event = std::string("token read failed: ") + error.what() +
              (held ? "; keeping the token held" : "; no token held") + "; next read in " +
              describe(wait);
    }
    tell(event);
    std::unique_lock lock(wait_mutex_);
    wait_.wait_for(lock, stop, wait, [] { return false; });
  }
}

}  // namespace sandbox_host::egress
