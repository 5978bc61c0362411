#include <sandbox_host/egress/proxy/token_keeper.hpp>
#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
std::string run_token_command(HostCommand command, milliseconds bound, std::stop_token stop,
                              const std::string &subject) {
  const std::string name = "the " + subject + " command " + command.path;
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
                         " bytes; a " + subject + " is one short line");
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

// The one line a read gave, trimmed; what is wrong with it names where it came from.
std::string one_line(std::string_view text, const std::string &source, const std::string &subject) {
  const std::string_view line = trimmed(text);
  if (line.empty()) throw TokenReadError("no " + subject + " in " + source);
  if (const auto lines = std::count(line.begin(), line.end(), '\n'); lines > 0) {
    throw TokenReadError(source + " holds " + std::to_string(lines + 1) + " lines; the " + subject +
                         " is one line");
  }
  const bool printable = std::none_of(line.begin(), line.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (!printable) {
    throw TokenReadError(source + " holds a control character in its " + subject);
  }
  return std::string(line);
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

TokenReader command_token_reader(std::vector<std::string> argv, std::string subject) {
  if (argv.empty()) throw std::invalid_argument("the " + subject + " command is empty");
  if (argv.front().empty() || argv.front().front() != '/') {
    throw std::invalid_argument("the " + subject + " command \"" + argv.front() +
                                "\" is not an absolute path");
  }
  HostCommand command;
  command.path = argv.front();
  command.args.assign(argv.begin() + 1, argv.end());
  command.env = this_environment();
  return [command = std::move(command), subject = std::move(subject)](milliseconds bound,
                                                                      std::stop_token stop) {
    const std::string out = run_token_command(command, bound, std::move(stop), subject);
    return one_line(out, "the output of the " + subject + " command " + command.path, subject);
  };
}

TokenReader file_token_reader(std::filesystem::path path, std::string subject) {
  if (!path.is_absolute()) {
    throw std::invalid_argument("the " + subject + " file \"" + path.string() +
                                "\" is not an absolute path");
  }
  return [path = std::move(path), subject = std::move(subject)](milliseconds, std::stop_token) {
    const std::string name = "the " + subject + " file " + path.string();
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) throw TokenReadError("cannot open " + name + ": " + std::strerror(errno));
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode)) {
      throw TokenReadError(name + " is not a regular file");
    }
    std::string text(kMaxTokenOutput + 1, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw TokenReadError("cannot read " + name + ": " + std::strerror(errno));
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got > kMaxTokenOutput) {
      throw TokenReadError(name + " holds more than " + std::to_string(kMaxTokenOutput) +
                           " bytes; a " + subject + " is one short line");
    }
    text.resize(got);
    return one_line(text, name, subject);
  };
}

TokenKeeper::TokenKeeper(Token &token, TokenRenewal renewal, TokenReader read,
                         std::function<void(const std::string &)> say, std::string subject)
    : token_(token),
      renewal_(std::move(renewal)),
      read_(std::move(read)),
      say_(std::move(say)),
      subject_(std::move(subject)) {
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
  // The subject as a label value: "token", "parent_proxy_credential".
  std::string credential = subject_;
  std::replace(credential.begin(), credential.end(), ' ', '_');
  std::size_t failures_in_a_row = 0;
  while (!stop.stop_requested()) {
    const bool held = token_.held();
    milliseconds wait = renewal_.every;
    std::string event;
    try {
      std::string fresh = read_(held ? renewal_.bound : renewal_.cold_bound, stop);
      if (fresh.empty()) throw TokenReadError("the read gave an empty " + subject_);
      if (stop.stop_requested()) return;
      token_.set(std::move(fresh));
      failures_in_a_row = 0;
      event = subject_ + (held ? " renewed" : " read");
      metrics::recorder()->credential_read(credential, true);
    } catch (const std::exception &error) {
      if (stop.stop_requested()) return;
      if (failures_in_a_row < renewal_.backoff.size()) wait = renewal_.backoff[failures_in_a_row];
      ++failures_in_a_row;
      metrics::recorder()->credential_read(credential, false);
      event = subject_ + " read failed: " + error.what() +
              (held ? "; keeping the " + subject_ + " held" : "; no " + subject_ + " held") +
              "; next read in " + describe(wait);
    }
    tell(event);
    std::unique_lock lock(wait_mutex_);
    wait_.wait_for(lock, stop, wait, [] { return false; });
  }
}

}  // namespace sandbox_host::egress
