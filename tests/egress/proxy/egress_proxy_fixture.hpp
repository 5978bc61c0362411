// What the egress proxy's tests against real clients share (proxy_allow_test,
// proxy_forwarding_test, proxy_connections_test): the EgressProxyTest fixture, which gives
// each test an EgressWorld, and the clients they speak to the proxy by hand with: a socket
// to its port or its unix socket, a reader up to a marker, and TLS inside a CONNECT tunnel.
#pragma once

#include "egress_world.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sandbox_host::test {

class EgressProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the stand-in upstream listens on ports 80 and 443";
    world_ = std::make_unique<EgressWorld>();
  }
  std::unique_ptr<EgressWorld> world_;
};

// A socket of `family` connected to address, each read bounded to 10 s; -1 if refused.
inline int connect_within_10s(int family, const void *address, socklen_t length) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, static_cast<const sockaddr *>(address), length) != 0) {
    ::close(fd);
    return -1;
  }
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

// A TCP connection to the proxy, for the tests that speak the protocol by hand.
inline int connect_to_proxy(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect_within_10s(AF_INET, &address, sizeof address);
}

// A connection to the proxy's unix socket, where a write to a client that has gone fails
// with EPIPE at once (TCP answers a reset first).
inline int connect_to_proxy_socket(const std::filesystem::path &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  return connect_within_10s(AF_UNIX, &address, sizeof address);
}

inline std::string read_until(int fd, const std::string &end) {
  std::string text;
  char chunk[4096];
  while (!contains(text, end)) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  return text;
}

// A TLS client inside a CONNECT tunnel to host, offering alpn (empty: none); null when the
// handshake failed.
struct TunnelTls {
  int fd = -1;
  SSL_CTX *context = nullptr;
  SSL *ssl = nullptr;
  bool connected = false;
  TunnelTls(std::uint16_t port, const std::string &host, const std::string &ca,
            const std::vector<unsigned char> &alpn)
      : TunnelTls(connect_to_proxy(port), host, ca, alpn) {}
  // Over a connection to the proxy already made.
  TunnelTls(int connection, const std::string &host, const std::string &ca,
            const std::vector<unsigned char> &alpn)
      : fd(connection) {
    const std::string connect =
        "CONNECT " + host + ":443 HTTP/1.1\r\nHost: " + host + ":443\r\n\r\n";
    ::send(fd, connect.data(), connect.size(), 0);
    if (!contains(read_until(fd, "\r\n\r\n"), " 200 ")) return;
    context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(context, ca.c_str(), nullptr);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    ssl = SSL_new(context);
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
    if (!alpn.empty()) SSL_set_alpn_protos(ssl, alpn.data(), static_cast<unsigned>(alpn.size()));
    SSL_set_fd(ssl, fd);
    connected = SSL_connect(ssl) == 1;
  }
  std::string exchange(const std::string &bytes) {
    SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
    std::string answer;
    char chunk[4096];
    int n;
    while ((n = SSL_read(ssl, chunk, sizeof chunk)) > 0)
      answer.append(chunk, static_cast<std::size_t>(n));
    return answer;
  }
  ~TunnelTls() {
    if (ssl != nullptr) SSL_free(ssl);
    if (context != nullptr) SSL_CTX_free(context);
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace sandbox_host::test
