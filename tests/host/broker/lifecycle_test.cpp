// The broker over time: streamed operations tied to their requester, a broker that dies
// under its clients, and a flood of requests that leaves nothing behind.
#include "served_broker.hpp"

#include <gtest/gtest.h>

#include <sandbox_host/host/identity/process_identity.hpp>

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace sandbox_host::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A host command for `watch`: reports its pid and its child's, then ticks until killed.
constexpr const char *kWatchScript = R"(#!/bin/sh
sleep 1000 &
echo "child $!"
echo "self $$"
while :; do echo tick; sleep 0.05; done
)";

pid_t pid_after(const std::string &line, const std::string &prefix) {
  EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
  return static_cast<pid_t>(std::stol(line.substr(prefix.size())));
}

// Waits, bounded, until every pid is gone; returns how long that took.
milliseconds until_gone(const std::vector<pid_t> &pids, milliseconds bound) {
  const auto start = Clock::now();
  while (Clock::now() - start < bound) {
    bool all = true;
    for (pid_t pid : pids) all = all && process_gone(pid);
    if (all) break;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

class Lifecycle : public testing::TestWithParam<unsigned> {};

TEST_P(Lifecycle, AStreamedWatchEndsWithinOneTickOfItsClientsDeath) {
  // A long tick: the command must end within it, so the end cannot be the tick's luck.
  BrokerSetup setup = setup_for(GetParam());
  setup.tick_ms = 2000;
  setup.ops = {"ping", "watch"};
  setup.scripts = {{"watch.sh", kWatchScript}};
  setup.op_tables = "[ops.watch]\ncommand = \"{root}/watch.sh\"\n";
  ServedBroker watching(setup);
  const auto argv = watching.ask_argv({"watch", "--stream"});
  RunningProcess client(argv);
  auto first = client.read_line(milliseconds(5000));
  auto second = client.read_line(milliseconds(5000));
  ASSERT_TRUE(first && second) << "the watch streamed nothing";
  const pid_t child = pid_after(*first, "child ");
  const pid_t command = pid_after(*second, "self ");
  ASSERT_TRUE(client.read_line(milliseconds(5000)).value_or("") == "tick");
  EXPECT_FALSE(process_gone(command));

  ::kill(client.pid(), SIGKILL);
  const auto took = until_gone({command, child}, milliseconds(10000));
  EXPECT_TRUE(process_gone(command) && process_gone(child));
  EXPECT_LT(took, milliseconds(2000)) << "the command outlived its requester by more than a tick";
  EXPECT_EQ(watching.ask({"ping"}).out, "pong");
}

TEST_P(Lifecycle, AWatchAskedWithoutStreamIsRefused) {
  BrokerSetup setup = setup_for(GetParam());
  setup.ops = {"ping", "watch"};
  setup.op_tables = "[ops.watch]\ncommand = \"/bin/true\"\n";
  ServedBroker broker(setup);
  auto result = broker.ask({"watch"});
  EXPECT_EQ(result.code, 126);
  EXPECT_NE(result.err.find("watch: streams only; ask with stream: true"), std::string::npos)
      << result.err;
}

TEST_P(Lifecycle, StreamedOutputArrivesWhileTheOperationRuns) {
  ServedBroker broker(setup_for(GetParam()));
  const auto argv = broker.ask_argv({"whoami", "--arg", "stream", "--arg", "40", "--stream"});
  RunningProcess client(argv);
  // The first line comes long before the 40 lines' 2 s are over.
  const auto start = Clock::now();
  EXPECT_EQ(client.read_line(milliseconds(5000)).value_or(""), "line 0");
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
  auto result = client.wait(milliseconds(10000));
  EXPECT_EQ(result.code, 0);
}

TEST_P(Lifecycle, ASlowOperationHoldsUpNoOther) {
  BrokerSetup setup = setup_for(GetParam());
  setup.ops = {"ping", "secret"};
  setup.op_tables = "[ops.secret]\ncommand = \"/bin/sleep\"\n";
  ServedBroker broker(setup);
  const auto argv = broker.ask_argv({"secret", "--arg", "3"});
  RunningProcess slow(argv);
  std::this_thread::sleep_for(milliseconds(300));
  const auto start = Clock::now();
  EXPECT_EQ(broker.ask({"ping"}).out, "pong");
  EXPECT_LT(Clock::now() - start, milliseconds(2000)) << "ping waited for the slow secret";
  EXPECT_FALSE(process_gone(slow.pid())) << "the slow secret ended early";
  EXPECT_EQ(slow.wait(milliseconds(10000)).code, 0);
}

TEST_P(Lifecycle, WithoutInotifyTheScanEveryTickStillFindsRequests) {
  BrokerSetup setup = setup_for(GetParam());
  setup.poll = true;
  ServedBroker broker(setup);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(broker.ask({"ping"}).out, "pong");
}

TEST_P(Lifecycle, AKilledBrokerGivesItsClientNoBrokerNotAHang) {
  BrokerSetup setup = setup_for(GetParam());
  setup.ops = {"ping", "secret"};
  // secret's command runs long enough to be in flight when the broker dies.
  setup.op_tables = "[ops.secret]\ncommand = \"/bin/sleep\"\n";
  ServedBroker broker(setup);
  const auto argv = broker.ask_argv({"secret", "--arg", "7.25"});
  RunningProcess client(argv);
  // The command, found below the broker, so that this test kills its own sleep only; and
  // once it is sleep, past its exec: before that, the child of the broker's fork still
  // shares the broker's descriptors, the spool's lock among them, and would hold it a
  // moment past the broker's death.
  const auto is_sleep = [](pid_t pid) {
    std::string comm;
    std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/comm"), comm);
    return comm == "sleep";
  };
  std::vector<pid_t> left_behind;
  for (int attempt = 0; attempt < 100 && left_behind.empty(); ++attempt) {
    std::this_thread::sleep_for(milliseconds(20));
    left_behind = broker::descendants("/proc", broker.pid());
    if (!std::all_of(left_behind.begin(), left_behind.end(), is_sleep)) left_behind.clear();
  }
  ASSERT_FALSE(left_behind.empty()) << "secret's command never started";
  broker.stop(SIGKILL);
  const auto start = Clock::now();
  auto result = client.wait(milliseconds(5000));
  EXPECT_FALSE(result.timed_out);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_EQ(result.code, 125);
  EXPECT_EQ(result.err,
            "sandbox-host ask: no sandbox-host broker answered: the broker closed the reply "
            "without answering (it exited or was killed)\n");
  // The command a SIGKILLed broker leaves behind (docs/broker.md says so).
  for (pid_t pid : left_behind) {
    EXPECT_FALSE(process_gone(pid));
    if (UniqueFd pidfd = broker::open_pidfd(pid)) {
      ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    }
  }

  // And with no broker at all, the answer is immediate.
  auto none = broker.ask({"ping"});
  EXPECT_EQ(none.code, 125);
  EXPECT_EQ(none.err, "sandbox-host ask: no sandbox-host broker answered: no broker serves " +
                          broker.spool().string() + "\n");
}

TEST_P(Lifecycle, AFloodOfRequestsLeavesNoDescriptorOrFileBehind) {
  ServedBroker broker(setup_for(GetParam()));
  ASSERT_EQ(broker.ask({"ping"}).out, "pong");
  const int baseline = settled_descriptors(broker.pid());
  std::vector<std::string> ask = broker.as_user();
  ask.push_back(broker.sandbox_host());
  ask.push_back("ask");
  constexpr int kRounds = 8, kWidth = 24;
  int answered = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::unique_ptr<RunningProcess>> clients;
    for (int i = 0; i < kWidth; ++i) {
      auto argv = ask;
      // Every third client streams and is killed while its operation runs.
      const bool doomed = i % 3 == 0;
      for (const std::string &arg : doomed ? std::vector<std::string>{"whoami", "--arg", "stream",
                                                                      "--arg", "100", "--stream"}
                                           : std::vector<std::string>{"ping"}) {
        argv.push_back(arg);
      }
      argv.push_back("--spool");
      argv.push_back(broker.spool().string());
      clients.push_back(std::make_unique<RunningProcess>(argv));
    }
    for (int i = 0; i < kWidth; ++i) {
      if (i % 3 == 0) {
        // Killed once its operation streams, so the broker is mid-answer.
        EXPECT_TRUE(clients[i]->read_line(milliseconds(5000)).has_value());
        ::kill(clients[i]->pid(), SIGKILL);
        clients[i]->wait(milliseconds(5000));
      } else {
        auto result = clients[i]->wait(milliseconds(10000));
        answered += result.out == "pong" ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(answered, kRounds * (kWidth - kWidth / 3));
  // The killed clients' operations notice within a tick that nobody holds them any more.
  int left = -1;
  for (int attempt = 0; attempt < 100 && left != baseline; ++attempt) {
    std::this_thread::sleep_for(milliseconds(50));
    left = open_descriptors(broker.pid());
  }
  EXPECT_EQ(left, baseline);
  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(broker.spool())) {
    if (entry.path().filename() != ".broker") files.push_back(entry.path().filename());
  }
  EXPECT_TRUE(files.empty()) << testing::PrintToString(files);
}

INSTANTIATE_TEST_SUITE_P(Broker, Lifecycle, testing::Values(0u, kNobody),
                         [](const testing::TestParamInfo<unsigned> &info) {
                           return info.param == 0 ? std::string("Root") : std::string("Nobody");
                         });

}  // namespace
}  // namespace sandbox_host::test
