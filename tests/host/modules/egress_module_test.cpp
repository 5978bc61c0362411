// The core's egress interface over egress modules: the SDK's example module (connect)
// routes, serves real CONNECT tunnels on loopback and refuses what it does not allow into
// the host's audit sink; what a module hands back is checked; a module that does not load
// or start is named.
#include "fixtures.hpp"

#include <sandbox_host/host/egress.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;
using test::TempFile;

Config egress_config(const std::string &implementation,
                     std::vector<std::pair<std::string, std::vector<std::string>>> settings) {
  Config config = test::test_config({"off"}, {});
  EgressConfig &egress = config.egress.emplace();
  egress.implementation = implementation;
  egress.module_settings = std::move(settings);
  return config;
}

// A loopback TCP listener that answers each connection with "pong:" and what it read.
class PongServer {
 public:
  PongServer() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_.get(), reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0 ||
        ::listen(fd_.get(), 8) != 0) {
      throw std::runtime_error("pong server: bind");
    }
    socklen_t size = sizeof(address);
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr *>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        pollfd p{fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        UniqueFd client(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        char buffer[256];
        const ssize_t n = ::recv(client.get(), buffer, sizeof(buffer), 0);
        if (n <= 0) continue;
        const std::string reply = "pong:" + std::string(buffer, static_cast<std::size_t>(n));
        (void)::send(client.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
      }
    });
  }
  std::uint16_t port() const { return port_; }

 private:
  UniqueFd fd_;
  std::uint16_t port_ = 0;
  std::jthread thread_;
};

// Connects to the unix socket at path, sends text and reads until the peer closes or
// `until` appears.
std::string exchange(const fs::path &path, const std::string &text, const std::string &until) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
    return "connect failed: " + std::string(std::strerror(errno));
  }
  (void)::send(fd.get(), text.data(), text.size(), MSG_NOSIGNAL);
  std::string got;
  char buffer[512];
  while (got.find(until) == std::string::npos) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    const ssize_t n = ::recv(fd.get(), buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<std::size_t>(n));
  }
  return got;
}

TEST(EgressModule, TheExampleModuleRoutesAndTunnelsWhatItAllows) {
  PongServer pong;
  TempFile place("", "unused");
  const fs::path socket = place.dir() / "connect.sock";
  const std::string allowed = "127.0.0.1:" + std::to_string(pong.port());
  test::AuditCapture audit;
  Host host(audit.apply(egress_config(
      "connect", {{"socket", {socket.string()}}, {"allow", {allowed}}, {"port", {"8080"}}})));
  const Egress *egress = host.egress();
  ASSERT_NE(egress, nullptr);
  const EgressRoute route = egress->route();
  EXPECT_EQ(route.socket, socket.string());
  EXPECT_EQ(route.port, 8080);
  EXPECT_EQ(route.directory, "");

  std::vector<std::string> logged;
  std::mutex logged_mutex;
  {
    auto running = egress->start({host.audit(),
                                  "/nonexistent/sandbox-host",
                                  [&](const std::string &line) {
                                    std::lock_guard lock(logged_mutex);
                                    logged.push_back(line);
                                  },
                                  {}});
    EXPECT_EQ(running->description(), "egress module connect 0.1.0 on " + socket.string());
    EXPECT_THROW(egress->start({host.audit(), "", {}, {}}), std::logic_error);

    const std::string tunnel = exchange(
        socket, "CONNECT " + allowed + " HTTP/1.1\r\nHost: " + allowed + "\r\n\r\nping", "pong:");
    EXPECT_EQ(tunnel, "HTTP/1.1 200 Connection established\r\n\r\npong:ping");

    const std::string other = "127.0.0.1:" + std::to_string(pong.port() == 1 ? 2 : 1);
    const std::string refused =
        exchange(socket, "CONNECT " + other + " HTTP/1.1\r\n\r\n", "\r\n\r\n");
    EXPECT_EQ(refused.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << refused;
    const std::string get =
        exchange(socket, "GET http://" + allowed + "/ HTTP/1.1\r\n\r\n", "\r\n\r\n");
    EXPECT_EQ(get.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << get;

    auto records = audit.records();
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0]["component"], "egress");
    EXPECT_EQ(records[0]["rule"], "allow");
    EXPECT_EQ(records[0]["attempted"], "CONNECT " + other);
    EXPECT_EQ(records[0]["hint"], "add the host:port to [egress.connect] allow");
    EXPECT_EQ(records[1]["rule"], "method");
  }
  // Stopped: the socket is gone, and a new start serves again.
  EXPECT_FALSE(fs::exists(socket));
  {
    std::lock_guard lock(logged_mutex);
    EXPECT_EQ(logged, std::vector<std::string>{"CONNECT " + allowed});
  }
  auto again = egress->start({host.audit(), "", {}, {}});
  EXPECT_TRUE(fs::exists(socket));
}

TEST(EgressModule, StopEndsOpenTunnelsAndReturns) {
  PongServer pong;
  TempFile place("", "unused");
  const fs::path socket = place.dir() / "connect.sock";
  const std::string allowed = "127.0.0.1:" + std::to_string(pong.port());
  Host host(egress_config("connect", {{"socket", {socket.string()}}, {"allow", {allowed}}}));
  auto running = host.egress()->start({host.audit(), "", {}, {}});
  // Clients that hold a tunnel open, and one that never finishes its head.
  std::vector<UniqueFd> clients;
  for (int i = 0; i < 8; ++i) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof(address.sun_path) - 1);
    ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof(address)), 0);
    const std::string head = i == 0 ? "CONNECT " : "CONNECT " + allowed + " HTTP/1.1\r\n\r\n";
    ASSERT_GT(::send(fd.get(), head.data(), head.size(), MSG_NOSIGNAL), 0);
    clients.push_back(std::move(fd));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  running.reset();
  // Each client sees its connection end.
  for (auto &fd : clients) {
    char buffer[256];
    ssize_t n;
    pollfd p{fd.get(), POLLIN, 0};
    do {
      ASSERT_EQ(::poll(&p, 1, 5000), 1);
      n = ::recv(fd.get(), buffer, sizeof(buffer), 0);
    } while (n > 0);
    EXPECT_EQ(n, 0);
  }
}

TEST(EgressModule, ASocketThatAnswersIsNotTakenOverAndAStaleOneIsReplaced) {
  TempFile place("", "unused");
  const fs::path socket = place.dir() / "connect.sock";
  const auto config =
      egress_config("connect", {{"socket", {socket.string()}}, {"allow", {"127.0.0.1:1"}}});
  // A socket file nobody listens on any more: what a killed egress leaves.
  {
    UniqueFd stale(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof(address.sun_path) - 1);
    ASSERT_EQ(::bind(stale.get(), reinterpret_cast<sockaddr *>(&address), sizeof(address)), 0);
  }
  Host first(config);
  auto running = first.egress()->start({first.audit(), "", {}, {}});
  EXPECT_EQ(fs::status(socket).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  Host second(config);
  try {
    second.egress()->start({second.audit(), "", {}, {}});
    ADD_FAILURE() << "a second egress took over a socket the first listens on";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(
        std::string(e.what()).find(socket.string() + " is in use: something listens on it already"),
        std::string::npos)
        << e.what();
  }
  // The first still serves.
  EXPECT_EQ(exchange(socket, "GET / HTTP/1.1\r\n\r\n", "\r\n\r\n").rfind("HTTP/1.1 405 ", 0), 0u);
}

std::string egress_error(const Config &config) {
  try {
    Host host(config);
    host.egress()->route();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

TEST(EgressModule, SettingsTheModuleRefusesAreNamed) {
  const std::string file = (fs::path(TEST_MODULE_DIR) / "egress_connect.so").string();
  EXPECT_EQ(egress_error(egress_config("connect", {{"allow", {"a.test:443"}}})),
            "[egress] implementation = \"connect\": the egress module does not load: module " +
                file +
                ": init failed: egress.connect.socket: must be an absolute path, where sandboxes "
                "are relayed to");
  EXPECT_EQ(
      egress_error(egress_config("connect", {{"socket", {"/run/x.sock"}}, {"allow", {"a.test"}}})),
      "[egress] implementation = \"connect\": the egress module does not load: module " + file +
          ": init failed: egress.connect.allow: \"a.test\" is not host:port");
  EXPECT_EQ(
      egress_error(egress_config(
          "connect", {{"socket", {"/run/x.sock"}}, {"allow", {"a.test:1"}}, {"listen", {"x"}}})),
      "[egress] implementation = \"connect\": the egress module does not load: module " + file +
          ": init failed: egress.connect.listen: unknown key; allowed: socket, "
          "allow, port");
}

TEST(EgressModule, AModuleThatIsNotThereOrNotAnEgressIsNamed) {
  const std::string missing = egress_error(egress_config("absent", {}));
  EXPECT_NE(missing.find("[egress] implementation = \"absent\": the egress module does not "
                         "load: module egress_absent.so: not installed (module directories: " +
                         std::string(TEST_MODULE_DIR)),
            std::string::npos)
      << missing;
  // A backend under an egress module's name.
  TempFile dir("", "unused");
  fs::copy_file(fs::path(TEST_MODULE_DIR) / "backend_alpha.so", dir.dir() / "egress_alpha.so");
  Config config = egress_config("alpha", {});
  config.module_dirs = {dir.dir()};
  EXPECT_EQ(egress_error(config),
            "[egress] implementation = \"alpha\": the egress module does not load: module " +
                (dir.dir() / "egress_alpha.so").string() +
                ": is a backend module, expected an egress module");
}

TEST(EgressModule, WhatAModuleRoutesToIsChecked) {
  auto route_error = [](std::vector<std::pair<std::string, std::vector<std::string>>> settings) {
    return egress_error(egress_config("route", std::move(settings)));
  };
  const std::string who = "egress module route (" +
                          (fs::path(TEST_MODULE_DIR) / "egress_route.so").string() + "): route: ";
  EXPECT_EQ(route_error({{"socket", {"relative.sock"}}}),
            who + "the socket \"relative.sock\" is not an absolute path");
  EXPECT_EQ(route_error({{"socket", {"/" + std::string(120, 'a')}}}),
            who + "the socket /" + std::string(120, 'a') +
                " is longer than a unix socket address holds (107 bytes)");
  EXPECT_EQ(route_error({{"socket", {"/run/x.sock"}}, {"directory", {"egress"}}}),
            who + "the egress directory \"egress\" is not an absolute path");
  EXPECT_EQ(route_error({{"socket", {"/run/x.sock"}}, {"port", {"0"}}}),
            who + "port 0 is not a port of 1 to 65535");
  EXPECT_EQ(route_error({{"socket", {"/run/x.sock"}}, {"fail", {"route"}}}),
            who + "no route today");
  EXPECT_EQ(route_error({{"socket", {"/run/x.sock"}}, {"directory", {"/run/egress"}}}), "");

  Host host(egress_config("route", {{"socket", {"/run/x.sock"}}, {"fail", {"start"}}}));
  try {
    host.egress()->start({host.audit(), "", {}, {}});
    ADD_FAILURE() << "a module whose start fails started";
  } catch (const std::runtime_error &e) {
    EXPECT_EQ(std::string(e.what()), "egress module route (" +
                                         (fs::path(TEST_MODULE_DIR) / "egress_route.so").string() +
                                         "): start: cannot listen");
  }
}

}  // namespace
}  // namespace sandbox_host
