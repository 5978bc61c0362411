// tunnel_through against a stand-in parent on loopback that answers as scripted: what it
// sends after its answer's head stays in the tunnel, interim answers are skipped, and a
// parent that says nothing, or no HTTP, is named in the failure.
#include <sandbox_host/egress/proxy/parent_proxy.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace sandbox_host::egress {
namespace {

using namespace std::chrono_literals;

// Accepts one connection, reads the request head into request, then sends answer in one
// write and holds the connection until the test ends.
class ScriptedParent {
 public:
  explicit ScriptedParent(std::string answer) : answer_(std::move(answer)) {
    listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr *>(&address), length), 0);
    EXPECT_EQ(::listen(listener_.get(), 1), 0);
    ::getsockname(listener_.get(), reinterpret_cast<sockaddr *>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::jthread([this] { serve(); });
  }
  ~ScriptedParent() { ::shutdown(listener_.get(), SHUT_RDWR); }

  ParentProxy parent() const { return {"127.0.0.1", port_, nullptr}; }
  std::string request() {
    thread_.join();
    return request_;
  }

 private:
  void serve() {
    UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client) return;
    char buffer[4096];
    while (request_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t got = ::read(client.get(), buffer, sizeof buffer);
      if (got <= 0) return;
      request_.append(buffer, static_cast<std::size_t>(got));
    }
    if (!answer_.empty()) ::send(client.get(), answer_.data(), answer_.size(), MSG_NOSIGNAL);
    pollfd closed{client.get(), POLLIN, 0};
    ::poll(&closed, 1, 5000);
  }

  std::string answer_;
  UniqueFd listener_;
  std::uint16_t port_ = 0;
  std::string request_;
  std::jthread thread_;
};

const IpAddress kTarget = *parse_ip_literal("192.0.2.7");

std::string read_some(int fd) {
  pollfd ready{fd, POLLIN, 0};
  if (::poll(&ready, 1, 5000) != 1) return {};
  char buffer[256];
  const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
  return got > 0 ? std::string(buffer, static_cast<std::size_t>(got)) : std::string();
}

TEST(ParentTunnel, TheDestinationsFirstBytesAfterTheAnswerStayInTheTunnel) {
  ScriptedParent parent("HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-OpenSSH_9.2\r\n");
  ParentTunnel tunnel = tunnel_through(parent.parent(), kTarget, 22, 5s);
  ASSERT_TRUE(tunnel.fd) << tunnel.refusal;
  EXPECT_EQ(read_some(tunnel.fd.get()), "SSH-2.0-OpenSSH_9.2\r\n");
  tunnel.fd = UniqueFd();  // the stand-in holds the connection until it closes
  EXPECT_EQ(parent.request(), "CONNECT 192.0.2.7:22 HTTP/1.1\r\nHost: 192.0.2.7:22\r\n\r\n");
}

TEST(ParentTunnel, AnInterimAnswerIsSkippedAndTheCredentialSentAsBasic) {
  ScriptedParent scripted("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n");
  ParentProxy parent = scripted.parent();
  parent.credential = std::make_shared<Token>();
  parent.credential->set("user:pa ss");
  ParentTunnel tunnel = tunnel_through(parent, *parse_ip_literal("2001:db8::1"), 443, 5s);
  ASSERT_TRUE(tunnel.fd) << tunnel.refusal;
  tunnel.fd = UniqueFd();
  EXPECT_EQ(scripted.request(),
            "CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n"
            "Proxy-Authorization: Basic dXNlcjpwYSBzcw==\r\n\r\n");
}

TEST(ParentTunnel, ARefusalNamesTheParentAndWhatItSaid) {
  ScriptedParent scripted("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
  const ParentTunnel tunnel = tunnel_through(scripted.parent(), kTarget, 443, 5s);
  EXPECT_FALSE(tunnel.fd);
  EXPECT_EQ(tunnel.status, 403);
  EXPECT_TRUE(tunnel.answered);
  EXPECT_EQ(tunnel.refusal, "the parent proxy " + scripted.parent().to_string() +
                                " answered CONNECT 192.0.2.7:443 with 403 Forbidden");
}

TEST(ParentTunnel, NoHttpASilentParentAndNoCredentialYetAreFailuresNamingThem) {
  ScriptedParent garbage("SSH-2.0-not-a-proxy\r\n\r\n");
  const ParentTunnel not_http = tunnel_through(garbage.parent(), kTarget, 443, 5s);
  EXPECT_EQ(not_http.status, 502);
  EXPECT_NE(not_http.refusal.find("with something other than HTTP"), std::string::npos)
      << not_http.refusal;

  ScriptedParent silent("");
  const auto started = std::chrono::steady_clock::now();
  const ParentTunnel timed_out = tunnel_through(silent.parent(), kTarget, 443, 300ms);
  EXPECT_EQ(timed_out.status, 504);
  EXPECT_NE(timed_out.refusal.find("did not answer CONNECT 192.0.2.7:443 in time"),
            std::string::npos)
      << timed_out.refusal;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);

  ScriptedParent unused("HTTP/1.1 200 OK\r\n\r\n");
  ParentProxy waiting = unused.parent();
  waiting.credential = std::make_shared<Token>();
  const ParentTunnel no_credential = tunnel_through(waiting, kTarget, 443, 5s);
  EXPECT_EQ(no_credential.status, 502);
  EXPECT_NE(no_credential.refusal.find("no parent proxy credential is held yet"),
            std::string::npos);
  waiting.credential->set("no-colon");
  const ParentTunnel malformed = tunnel_through(waiting, kTarget, 443, 5s);
  EXPECT_NE(malformed.refusal.find("is not user:password"), std::string::npos);
  EXPECT_EQ(malformed.refusal.find("no-colon"), std::string::npos);
}

}  // namespace
}  // namespace sandbox_host::egress
