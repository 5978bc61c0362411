// The token and its keeper (token_keeper.hpp). The command reader runs real shell scripts
// the tests write: a token, a failure, a hang cut at its bound, no output, two lines, too
// much output, a stop mid-read, each leaving no process behind. The keeper renews, keeps the
// old token when a read fails, takes the cold bound while it holds none, backs off in order,
// stops promptly mid-read and mid-wait, and never says the token.
#include <sandbox_host/egress/proxy/token_command.hpp>
#include <sandbox_host/egress/proxy/token_keeper.hpp>

#include <fixtures.hpp>
#include <process.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::egress {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// What say() was told, for a test to wait on.
class Said {
 public:
  std::function<void(const std::string &)> sink() {
    return [this](const std::string &line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
      changed_.notify_all();
    };
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  // Whether there are count lines within timeout.
  bool wait_for_lines(std::size_t count, milliseconds timeout = 20s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return lines_.size() >= count; });
  }
  // No line holds any of secrets.
  void expect_none_holds(const std::vector<std::string> &secrets) const {
    for (const auto &line : lines()) {
      for (const auto &secret : secrets) {
        EXPECT_EQ(line.find(secret), std::string::npos) << "said the token: " << line;
      }
    }
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
};

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// Waits until condition holds, looking every 10 ms; false after timeout.
bool eventually(const std::function<bool()> &condition, milliseconds timeout = 20s) {
  const auto deadline = Clock::now() + timeout;
  while (!condition()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::optional<pid_t> pid_in(const fs::path &file) {
  std::ifstream in(file);
  pid_t pid = 0;
  if (in >> pid && pid > 0) return pid;
  return std::nullopt;
}

class TokenCommand : public testing::Test {
 protected:
  TokenCommand() : temp_("", "unused") {}

  // An executable /bin/sh script in the test's directory; $dir in body is that directory.
  std::string script(const std::string &name, const std::string &body) {
    const fs::path path = temp_.dir() / name;
    std::ofstream(path) << "#!/bin/sh\ndir='" << temp_.dir().string() << "'\n" << body;
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
  }

  // A file in the test's directory holding exactly content.
  fs::path file(const std::string &name, const std::string &content) {
    const fs::path path = temp_.dir() / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    return path;
  }
  const fs::path &temp_dir() const { return temp_.dir(); }

  // Writes its pid and its child's to $dir/pid and $dir/child, then waits on the child.
  std::string hanging_script() {
    return script("hang",
                  "echo $$ > \"$dir/pid.tmp\" && mv \"$dir/pid.tmp\" \"$dir/pid\"\n"
                  "sleep 1000 &\n"
                  "echo $! > \"$dir/child.tmp\" && mv \"$dir/child.tmp\" \"$dir/child\"\n"
                  "wait\n");
  }

  // A script printing tokens[i] on its i-th run (counting from 0), the last one from then
  // on; "FAIL" exits 5, "HANG" hangs.
  std::string sequence_script(const std::vector<std::string> &tokens) {
    std::string body =
        "n=$(cat \"$dir/count\" 2>/dev/null || echo 0)\n"
        "echo $((n + 1)) > \"$dir/count\"\n"
        "case $n in\n";
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      body += (i + 1 == tokens.size() ? std::string("*") : std::to_string(i)) + ") ";
      if (tokens[i] == "FAIL") {
        body += "exit 5";
      } else if (tokens[i] == "HANG") {
        body += "exec sleep 1000";
      } else {
        body += "echo '" + tokens[i] + "'";
      }
      body += " ;;\n";
    }
    return script("sequence", body + "esac\n");
  }

  // Both pids of hanging_script, once it wrote them.
  std::vector<pid_t> hanging_pids() {
    std::vector<pid_t> pids;
    EXPECT_TRUE(eventually([&] {
      return fs::exists(temp_.dir() / "pid") && fs::exists(temp_.dir() / "child");
    })) << "the hanging script did not start";
    for (const char *name : {"pid", "child"}) {
      if (auto pid = pid_in(temp_.dir() / name)) pids.push_back(*pid);
    }
    return pids;
  }

  static void expect_gone(const std::vector<pid_t> &pids) {
    for (pid_t pid : pids) EXPECT_TRUE(test::gone_within(pid, 5s)) << "process " << pid << " left";
  }

  test::TempFile temp_;
};

struct Read {
  std::optional<std::string> token;
  std::string error;  // the TokenReadError's cause
  Clock::duration took{};
};

Read read_once(const TokenReader &reader, milliseconds bound, std::stop_token stop = {}) {
  Read result;
  const auto start = Clock::now();
  try {
    result.token = reader(bound, std::move(stop));
  } catch (const TokenReadError &error) {
    result.error = error.what();
  }
  result.took = Clock::now() - start;
  return result;
}

// ---- the token ----------------------------------------------------------------------------

TEST(Token, HoldsWhatWasSetLast) {
  Token token;
  EXPECT_FALSE(token.held());
  EXPECT_EQ(token.get(), "");
  token.set("ghu_one");
  EXPECT_TRUE(token.held());
  EXPECT_EQ(token.get(), "ghu_one");
  token.set("ghu_two");
  EXPECT_EQ(token.get(), "ghu_two");
}

// ---- the command reader -------------------------------------------------------------------

TEST_F(TokenCommand, ItsTrimmedOutputIsTheToken) {
  const auto reader = command_token_reader({script("token", "printf '  ghu_abc123 \\r\\n\\n'\n")});
  const Read read = read_once(reader, 10s);
  EXPECT_EQ(read.token, "ghu_abc123") << read.error;
}

TEST_F(TokenCommand, ItsArgumentsReachItWithoutAShell) {
  const auto reader =
      command_token_reader({script("echo-arg", "printf '%s' \"$1\"\n"), "ghu_$HOME;`id`"});
  EXPECT_EQ(read_once(reader, 10s).token, "ghu_$HOME;`id`");
}

TEST_F(TokenCommand, ANonZeroExitIsAReadErrorNamingTheCode) {
  const std::string path =
      script("fail", "echo ghu_leaked_on_stderr >&2\necho ghu_partial\nexit 3\n");
  const Read read = read_once(command_token_reader({path}), 10s);
  EXPECT_FALSE(read.token);
  EXPECT_TRUE(contains(read.error, "exited with code 3")) << read.error;
  EXPECT_TRUE(contains(read.error, path)) << read.error;
  EXPECT_FALSE(contains(read.error, "ghu_")) << read.error;
}

TEST_F(TokenCommand, AHangIsCutAtTheBoundWithItsDescendants) {
  const auto reader = command_token_reader({hanging_script()});
  const Read read = read_once(reader, 700ms);
  EXPECT_FALSE(read.token);
  EXPECT_TRUE(contains(read.error, "within its bound of 700 ms")) << read.error;
  EXPECT_GE(read.took, 700ms);
  EXPECT_LT(read.took, 15s);
  expect_gone(hanging_pids());
}

TEST_F(TokenCommand, NoOutputIsNoToken) {
  for (const std::string body : {"exit 0\n", "printf ' \\n\\t\\n'\n"}) {
    const Read read = read_once(command_token_reader({script("silent", body)}), 10s);
    EXPECT_FALSE(read.token);
    EXPECT_TRUE(contains(read.error, "no token in the output of the token command ")) << read.error;
  }
}

TEST_F(TokenCommand, TwoLinesAreNoToken) {
  const Read read = read_once(
      command_token_reader({script("two-lines", "echo ghu_first\necho ghu_second\n")}), 10s);
  EXPECT_FALSE(read.token);
  EXPECT_TRUE(contains(read.error, "holds 2 lines; the token is one line")) << read.error;
  EXPECT_FALSE(contains(read.error, "ghu_")) << read.error;
}

TEST_F(TokenCommand, AControlCharacterInTheLineIsNoToken) {
  const Read read =
      read_once(command_token_reader({script("tab", "printf 'ghu_a\\tb\\n'\n")}), 10s);
  EXPECT_FALSE(read.token);
  EXPECT_TRUE(contains(read.error, "control character")) << read.error;
  EXPECT_FALSE(contains(read.error, "ghu_")) << read.error;
}

TEST_F(TokenCommand, EndlessOutputIsCutLongBeforeTheBound) {
  const Read read = read_once(command_token_reader({script("endless", "exec yes ghu_y\n")}), 60s);
  EXPECT_FALSE(read.token);
  EXPECT_TRUE(contains(read.error, "printed more than 65536 bytes")) << read.error;
  EXPECT_LT(read.took, 30s);
}

TEST_F(TokenCommand, ACommandThatCannotRunIsAReadError) {
  const Read read = read_once(command_token_reader({"/nonexistent/token-command"}), 10s);
  EXPECT_FALSE(read.token);
  EXPECT_TRUE(contains(read.error, "/nonexistent/token-command")) << read.error;
}

TEST(TokenCommandReader, RefusesAnEmptyOrRelativeCommand) {
  EXPECT_THROW(command_token_reader({}), std::invalid_argument);
  EXPECT_THROW(command_token_reader({"devctl", "token"}), std::invalid_argument);
  EXPECT_THROW(command_token_reader({""}), std::invalid_argument);
}

// ---- the file reader -----------------------------------------------------------------------

TEST_F(TokenCommand, AFilesTrimmedLineIsTheTokenAndAReplacedFileIsReadAgain) {
  const fs::path credential = file("credential", "  proxyuser:s3cret \n");
  const auto reader = file_token_reader(credential, "parent proxy credential");
  EXPECT_EQ(read_once(reader, 10s).token, "proxyuser:s3cret");
  file("credential", "proxyuser:rotated\n");
  EXPECT_EQ(read_once(reader, 10s).token, "proxyuser:rotated");
}

TEST_F(TokenCommand, WhatIsWrongWithAFileIsNamedAndNeverItsContent) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "no parent proxy credential in the parent proxy credential file "},
      {"u:first\nu:second\n", "holds 2 lines; the parent proxy credential is one line"},
      {"u:p\x01w\n", "holds a control character in its parent proxy credential"},
      {std::string(70000, 'x'), "holds more than 65536 bytes"},
  };
  for (const auto &[content, problem] : cases) {
    const fs::path credential = file("credential", content);
    const Read read = read_once(file_token_reader(credential, "parent proxy credential"), 10s);
    EXPECT_FALSE(read.token);
    EXPECT_TRUE(contains(read.error, problem)) << read.error;
    EXPECT_TRUE(contains(read.error, credential.string())) << read.error;
    EXPECT_FALSE(contains(read.error, "u:")) << read.error;
  }
  const Read missing = read_once(file_token_reader(temp_dir() / "absent"), 10s);
  EXPECT_TRUE(contains(missing.error, "cannot open the token file ")) << missing.error;
  EXPECT_TRUE(contains(missing.error, "No such file or directory")) << missing.error;
  const Read directory = read_once(file_token_reader(temp_dir()), 10s);
  EXPECT_TRUE(contains(directory.error, "is not a regular file")) << directory.error;
  EXPECT_THROW(file_token_reader("relative/credential"), std::invalid_argument);
}

TEST_F(TokenCommand, AStopEndsAReadPromptlyWithItsProcesses) {
  const auto reader = command_token_reader({hanging_script()});
  std::stop_source stop;
  std::thread stopper([&] {
    hanging_pids();
    stop.request_stop();
  });
  const Read read = read_once(reader, 60s, stop.get_token());
  stopper.join();
  EXPECT_FALSE(read.token);
  EXPECT_TRUE(contains(read.error, "stopped")) << read.error;
  EXPECT_LT(read.took, 30s);
  expect_gone(hanging_pids());
}

// ---- the keeper ---------------------------------------------------------------------------

TokenRenewal quick_renewal() {
  TokenRenewal renewal;
  renewal.every = 50ms;
  renewal.bound = 10s;
  renewal.cold_bound = 10s;
  renewal.backoff = {50ms};
  return renewal;
}

TEST_F(TokenCommand, TheKeeperRenewsTheToken) {
  const std::string path = script("counter",
                                  "n=$(cat \"$dir/count\" 2>/dev/null || echo 0)\n"
                                  "echo $((n + 1)) > \"$dir/count\"\n"
                                  "echo ghu_renewed_$((n + 1))\n");
  Token token;
  Said said;
  {
    TokenKeeper keeper(token, quick_renewal(), command_token_reader({path}), said.sink());
    // The third run's token or a later one: each run prints the next number.
    EXPECT_TRUE(eventually([&] {
      const std::string now = token.get();
      return now.starts_with("ghu_renewed_") && std::stoi(now.substr(12)) >= 3;
    })) << "token now: "
        << token.get();
  }
  const auto lines = said.lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "token read");
  EXPECT_EQ(lines[1], "token renewed");
  EXPECT_EQ(lines[2], "token renewed");
  said.expect_none_holds({"ghu_"});
}

TEST_F(TokenCommand, TheKeeperKeepsTheOldTokenWhenAReadFails) {
  Token token;
  Said said;
  TokenKeeper keeper(token, quick_renewal(),
                     command_token_reader({sequence_script({"ghu_first", "FAIL"})}), said.sink());
  ASSERT_TRUE(said.wait_for_lines(3));
  const auto lines = said.lines();
  EXPECT_EQ(lines[0], "token read");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_TRUE(contains(lines[i], "token read failed: ")) << lines[i];
    EXPECT_TRUE(contains(lines[i], "exited with code 5")) << lines[i];
    EXPECT_TRUE(contains(lines[i], "; keeping the token held")) << lines[i];
  }
  EXPECT_EQ(token.get(), "ghu_first");
  said.expect_none_holds({"ghu_first"});
}

TEST_F(TokenCommand, AHangIsCutAtTheColdBoundWithoutATokenThenAtTheBound) {
  TokenRenewal renewal = quick_renewal();
  renewal.cold_bound = 900ms;
  renewal.bound = 300ms;
  std::mutex mutex;
  std::vector<milliseconds> bounds;
  TokenReader command = command_token_reader({sequence_script({"HANG", "ghu_after_hang", "HANG"})});
  TokenReader recording = [&](milliseconds bound, std::stop_token stop) {
    {
      std::lock_guard lock(mutex);
      bounds.push_back(bound);
    }
    return command(bound, std::move(stop));
  };
  Token token;
  Said said;
  {
    TokenKeeper keeper(token, renewal, recording, said.sink());
    ASSERT_TRUE(said.wait_for_lines(3));
  }
  const auto lines = said.lines();
  EXPECT_TRUE(contains(lines[0], "within its bound of 900 ms; no token held")) << lines[0];
  EXPECT_EQ(lines[1], "token read");
  EXPECT_TRUE(contains(lines[2], "within its bound of 300 ms; keeping the token held")) << lines[2];
  std::lock_guard lock(mutex);
  ASSERT_GE(bounds.size(), 3u);
  EXPECT_EQ(bounds[0], 900ms);
  EXPECT_EQ(bounds[1], 900ms);
  EXPECT_EQ(bounds[2], 300ms);
  EXPECT_EQ(token.get(), "ghu_after_hang");
  said.expect_none_holds({"ghu_"});
}

TEST(TokenKeeper, BacksOffInOrderThenWaitsEveryAndStartsOverAfterASuccess) {
  TokenRenewal renewal;
  renewal.every = 800ms;
  renewal.bound = renewal.cold_bound = 1s;
  renewal.backoff = {50ms, 150ms, 300ms};
  std::mutex mutex;
  std::vector<Clock::time_point> calls;
  TokenReader reader = [&](milliseconds, std::stop_token) -> std::string {
    std::lock_guard lock(mutex);
    calls.push_back(Clock::now());
    if (calls.size() == 5) return "ghu_at_last";
    throw TokenReadError("no luck");
  };
  Token token;
  Said said;
  {
    TokenKeeper keeper(token, renewal, reader, said.sink());
    ASSERT_TRUE(said.wait_for_lines(6));
  }
  const auto lines = said.lines();
  const std::vector<std::string> expected{
      "token read failed: no luck; no token held; next read in 50 ms",
      "token read failed: no luck; no token held; next read in 150 ms",
      "token read failed: no luck; no token held; next read in 300 ms",
      "token read failed: no luck; no token held; next read in 800 ms",
      "token read",
      "token read failed: no luck; keeping the token held; next read in 50 ms"};
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.begin() + 6), expected);

  // The waits were taken, each at least as long as its step.
  std::lock_guard lock(mutex);
  ASSERT_GE(calls.size(), 6u);
  const std::vector<milliseconds> at_least{50ms, 150ms, 300ms, 800ms, 800ms};
  for (std::size_t i = 0; i < at_least.size(); ++i) {
    EXPECT_GE(calls[i + 1] - calls[i], at_least[i]) << "wait " << i;
  }
  EXPECT_EQ(token.get(), "ghu_at_last");
}

TEST(TokenKeeper, AnEmptyTokenIsAFailedReadThatKeepsTheOldOne) {
  std::atomic<int> calls = 0;
  TokenReader reader = [&](milliseconds, std::stop_token) -> std::string {
    return ++calls == 1 ? "ghu_kept" : "";
  };
  Token token;
  Said said;
  TokenKeeper keeper(token, quick_renewal(), reader, said.sink());
  ASSERT_TRUE(said.wait_for_lines(2));
  EXPECT_TRUE(contains(said.lines()[1], "empty token; keeping the token held")) << said.lines()[1];
  EXPECT_EQ(token.get(), "ghu_kept");
}

TEST_F(TokenCommand, ADestroyedKeeperStopsMidReadAndLeavesNoProcess) {
  TokenRenewal renewal = quick_renewal();
  renewal.cold_bound = 60s;
  Token token;
  Said said;
  auto keeper = std::make_unique<TokenKeeper>(
      token, renewal, command_token_reader({hanging_script()}), said.sink());
  const auto pids = hanging_pids();
  ASSERT_EQ(pids.size(), 2u);
  const auto start = Clock::now();
  keeper.reset();
  EXPECT_LT(Clock::now() - start, 30s) << "destruction waited for the read";
  expect_gone(pids);
  EXPECT_TRUE(said.lines().empty()) << said.lines().front();
  EXPECT_FALSE(token.held());
}

TEST(TokenKeeper, ADestroyedKeeperStopsMidWait) {
  TokenRenewal renewal;
  renewal.every = std::chrono::hours(1);
  Token token;
  Said said;
  auto keeper = std::make_unique<TokenKeeper>(
      token, renewal, [](milliseconds, std::stop_token) { return std::string("ghu_once"); },
      said.sink());
  ASSERT_TRUE(said.wait_for_lines(1));
  const auto start = Clock::now();
  keeper.reset();
  EXPECT_LT(Clock::now() - start, 30s);
  EXPECT_EQ(token.get(), "ghu_once");
}

TEST(TokenKeeper, RefusesARenewalThatIsNotPositiveAndAMissingReader) {
  Token token;
  const TokenReader reader = [](milliseconds, std::stop_token) { return std::string("t"); };
  for (const auto &broken : std::vector<std::function<void(TokenRenewal &)>>{
           [](TokenRenewal &r) { r.every = 0ms; }, [](TokenRenewal &r) { r.bound = -1ms; },
           [](TokenRenewal &r) { r.cold_bound = 0ms; },
           [](TokenRenewal &r) {
             r.backoff = {5ms, 0ms};
           }}) {
    TokenRenewal renewal;
    broken(renewal);
    EXPECT_THROW(TokenKeeper(token, renewal, reader, nullptr), std::invalid_argument);
  }
  EXPECT_THROW(TokenKeeper(token, TokenRenewal{}, nullptr, nullptr), std::invalid_argument);
  EXPECT_FALSE(token.held());
}

}  // namespace
}  // namespace sandbox_host::egress
