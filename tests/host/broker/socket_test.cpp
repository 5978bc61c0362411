// The socket transport against the real broker: the kernel names the peer, so the answer
// goes to the process that connected, a peer of another user is refused, and a peer that
// hangs up ends its streamed operation.
#include "served_broker.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

namespace sandbox_host::test {
namespace {

using std::chrono::milliseconds;

class Socket : public testing::TestWithParam<unsigned> {
 protected:
  static BrokerSetup with_socket(BrokerSetup setup) {
    setup.socket = true;
    return setup;
  }
};

TEST_P(Socket, AnswersTheProcessThatConnected) {
  ServedBroker broker(with_socket(setup_for(GetParam())));
  EXPECT_EQ(run_process(broker.ask_argv({"ping"}, true)).out, "pong");
  RunningProcess client(broker.ask_argv({"whoami"}, true));
  const pid_t pid = client.pid();
  auto result = client.wait(milliseconds(10000));
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(field(result.out, "pid"), std::to_string(pid));
  EXPECT_EQ(field(result.out, "uid"), std::to_string(GetParam()));
  EXPECT_EQ(field(result.out, "pidfd"), "yes");
  EXPECT_EQ(field(result.out, "sandboxed"), "no");
}

TEST_P(Socket, RefusesBadRequestsAndKeepsServing) {
  BrokerSetup setup = with_socket(setup_for(GetParam()));
  setup.max_request_bytes = 1024;
  ServedBroker broker(setup);
  auto big = run_process(broker.ask_argv({"ping", "--arg", std::string(2000, 'x')}, true));
  EXPECT_EQ(big.code, 126);
  EXPECT_NE(big.err.find("bytes, more than the broker's max_request_bytes 1024"), std::string::npos)
      << big.err;
  auto unknown = run_process(broker.ask_argv({"teleport"}, true));
  EXPECT_EQ(unknown.code, 126);
  EXPECT_NE(unknown.err.find("unknown operation \"teleport\""), std::string::npos);
  // Not JSON at all, from a client that is not sandbox-host's.
  std::vector<std::string> raw = broker.as_user();
  for (const std::string &arg :
       {std::string("/usr/bin/python3"), std::string("-c"),
        std::string("import socket,sys\n"
                    "s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)\n"
                    "s.connect(sys.argv[1]); s.send(b'{not json')\n"
                    "while True:\n"
                    "  m=s.recv(65536)\n"
                    "  if not m: break\n"
                    "  print(m.decode())\n"),
        broker.socket().string()}) {
    raw.push_back(arg);
  }
  auto garbage = run_process(raw);
  EXPECT_NE(garbage.out.find("request is not valid JSON"), std::string::npos) << garbage.out;
  EXPECT_EQ(run_process(broker.ask_argv({"ping"}, true)).out, "pong");
}

TEST_P(Socket, AHungUpPeerEndsItsStreamedCommand) {
  BrokerSetup setup = with_socket(setup_for(GetParam()));
  setup.tick_ms = 2000;
  setup.ops = {"ping", "watch"};
  setup.scripts = {
      {"watch.sh", "#!/bin/sh\necho \"self $$\"\nwhile :; do echo tick; sleep 0.05; done\n"}};
  setup.op_tables = "[ops.watch]\ncommand = \"{root}/watch.sh\"\n";
  ServedBroker broker(setup);
  RunningProcess client(broker.ask_argv({"watch", "--stream"}, true));
  const auto line = client.read_line(milliseconds(5000)).value_or("");
  ASSERT_EQ(line.rfind("self ", 0), 0u) << line;
  const pid_t command = static_cast<pid_t>(std::stol(line.substr(5)));
  ::kill(client.pid(), SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  while (!process_gone(command) && std::chrono::steady_clock::now() - start < milliseconds(10000)) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_TRUE(process_gone(command));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

// How a client command finds the broker when the command line names none: through
// $SANDBOX_HOST_BROKER (a spool or a socket), which a sandboxed command's environment
// carries; a --config on the command line wins over it.
TEST_P(Socket, SandboxHostBrokerNamesTheSpoolOrTheSocketAndAConfigWinsOverIt) {
  ServedBroker broker(with_socket(setup_for(GetParam())));
  auto ask_with = [&](const std::string &named, std::vector<std::string> extra) {
    std::vector<std::string> argv = broker.as_user();
    for (const std::string &arg :
         {std::string("/usr/bin/env"), "SANDBOX_HOST_BROKER=" + named, broker.sandbox_host(),
          std::string("ask"), std::string("ping")}) {
      argv.push_back(arg);
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv);
  };
  EXPECT_EQ(ask_with(broker.spool().string(), {}).out, "pong");
  EXPECT_EQ(ask_with(broker.socket().string(), {}).out, "pong");
  const auto nowhere = ask_with("/nonexistent/spool", {});
  EXPECT_EQ(nowhere.code, 125);
  EXPECT_EQ(nowhere.err,
            "sandbox-host ask: no sandbox-host broker answered: "
            "SANDBOX_HOST_BROKER=/nonexistent/spool: No such file or directory\n");
  const auto configured =
      ask_with("/nonexistent/spool", {"--config", (broker.root() / "config.toml").string()});
  EXPECT_EQ(configured.out, "pong") << configured.err;
}

INSTANTIATE_TEST_SUITE_P(Broker, Socket, testing::Values(0u, kNobody),
                         [](const testing::TestParamInfo<unsigned> &info) {
                           return info.param == 0 ? std::string("Root") : std::string("Nobody");
                         });

TEST(SocketPeer, RefusesAPeerOfAnotherUser) {
  BrokerSetup setup = setup_for(0);
  setup.socket = true;
  ServedBroker broker(setup);
  // Only the mode keeps other users out; opened up, the broker still refuses them.
  ASSERT_EQ(::chmod(broker.socket().c_str(), 0666), 0);
  std::vector<std::string> argv = as_nobody();
  for (const std::string &arg : {broker.sandbox_host(), std::string("ask"), std::string("ping"),
                                 std::string("--socket"), broker.socket().string()}) {
    argv.push_back(arg);
  }
  auto result = run_process(argv);
  EXPECT_EQ(result.code, 126);
  EXPECT_EQ(result.err,
            "sandbox-host ask: refused: the asking process runs as uid 65534; this "
            "broker answers uid 0 only\n");
  const auto records = broker.audit(1);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back().at("rule"), "request-uid");
  EXPECT_EQ(records.back().at("plugin"), "test-sandbox");
}

}  // namespace
}  // namespace sandbox_host::test
