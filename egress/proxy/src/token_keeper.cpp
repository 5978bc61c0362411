#include <sandbox_host/egress/proxy/token_keeper.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>
#include <sandbox_host/unique_fd.hpp>

#include "token_line.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace sandbox_host::egress {

using std::chrono::milliseconds;

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
