// egress_bench's connections: to the upstream or a proxy, the CONNECT tunnel through it, the
// GET request, and the errors and JSON text of what it prints.

#include "egress_bench.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace egress_bench {

[[noreturn]] void fail_errno(const std::string &what) {
  throw Failure(what + ": " + std::strerror(errno));
}

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// "a.b.c.d:port" (IPv4 only: the bench runs on 127.0.0.0/8).
sockaddr_in parse_address(const std::string &text) {
  const auto colon = text.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (colon == std::string::npos ||
      ::inet_pton(AF_INET, text.substr(0, colon).c_str(), &address.sin_addr) != 1) {
    throw Failure("\"" + text + "\" is not an IPv4 address and port");
  }
  address.sin_port = htons(static_cast<std::uint16_t>(std::stoul(text.substr(colon + 1))));
  return address;
}

// The name of the upstream without its port, for Host.
std::string target_host(const Options &o) {
  if (o.target.empty()) return "localhost";
  return o.target.substr(0, o.target.rfind(':'));
}

std::string ssl_error(const std::string &what) {
  std::string text = what;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    text += std::string(": ") + buffer;
  }
  return text;
}

Fd connect_to(const sockaddr_in &address) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) fail_errno("socket");
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // No read waits for ever: a proxy that stops answering fails the measurement.
  const timeval timeout{30, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  for (;;) {
    if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0) {
      return fd;
    }
    if (errno != EINTR) fail_errno("connect");
  }
}

// CONNECT target through the proxy on stream; returns when the proxy answered 200.
void open_tunnel(Stream &stream, const std::string &target) {
  stream.write_all("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
  // Read byte by byte up to the end of the head: nothing past it may be consumed, since
  // the tunnel's bytes (the upstream's, or TLS) follow.
  std::string head;
  char c;
  while (head.size() < 4 || head.compare(head.size() - 4, 4, "\r\n\r\n") != 0) {
    if (stream.read_some(&c, 1) == 0) throw Failure("the proxy closed the CONNECT");
    head += c;
    if (head.size() > 16 * 1024) throw Failure("a CONNECT answer of more than 16 KiB");
  }
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12 || head.substr(9, 3) != "200") {
    throw Failure("CONNECT " + target + " answered: " + head.substr(0, head.find('\r')));
  }
}

std::string get_request(const Options &o, bool keep_alive) {
  const std::string host = target_host(o);
  const std::string target = o.via == "forward" ? "http://" + o.target + o.path : o.path;
  return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: egress_bench\r\n" +
         (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace egress_bench
