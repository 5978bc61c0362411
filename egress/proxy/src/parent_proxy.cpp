#include <sandbox_host/egress/destination/destination.hpp>
#include <sandbox_host/egress/destination/tcp_connect.hpp>
#include <sandbox_host/egress/proxy/authorization.hpp>
#include <sandbox_host/egress/proxy/http_message.hpp>
#include <sandbox_host/egress/proxy/parent_proxy.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace sandbox_host::egress {
namespace {

using Clock = std::chrono::steady_clock;

// A parent's answer to CONNECT is a status line and a few headers; one that runs past this
// is not a proxy this one understands.
constexpr std::size_t kMaxAnswerBytes = 16 * 1024;

std::string endpoint(const IpAddress &address, std::uint16_t port) {
  const std::string text = address.to_string();
  return (address.family == AF_INET6 ? "[" + text + "]" : text) + ":" + std::to_string(port);
}

ParentTunnel failed(int status, std::string why) {
  return {UniqueFd(), status, std::move(why), false};
}

bool send_all(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && errno != EAGAIN) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd ready{fd, POLLOUT, 0};
    if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) return false;
  }
  return true;
}

// The parent's answer head, read without taking a byte past it: what it has sent is looked
// at first and only the head's bytes are taken, so whatever the destination says first
// stays in the socket for the relay.
ParentTunnel read_answer(UniqueFd fd, const std::string &parent, const std::string &target,
                         Clock::time_point deadline) {
  std::string head;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd ready{fd.get(), POLLIN, 0};
    const int waited = left.count() > 0 ? ::poll(&ready, 1, static_cast<int>(left.count())) : 0;
    if (waited == 0) {
      return failed(
          504, "the parent proxy " + parent + " did not answer CONNECT " + target + " in time");
    }
    if (waited < 0 && errno == EINTR) continue;
    char buffer[kMaxAnswerBytes];
    const std::size_t room = kMaxAnswerBytes - head.size();
    const ssize_t peeked = ::recv(fd.get(), buffer, room, MSG_PEEK);
    if (peeked < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (peeked <= 0) {
      return failed(502, "the parent proxy " + parent + " closed the connection before its " +
                             "answer to CONNECT " + target +
                             (peeked < 0 ? std::string(" (") + std::strerror(errno) + ")" : ""));
    }
    const std::string seen = head + std::string(buffer, static_cast<std::size_t>(peeked));
    ResponseParse parse = parse_response_head(seen, "CONNECT", {kMaxAnswerBytes, 100, 8 * 1024});
    if (parse.state == ParseState::error ||
        (parse.state == ParseState::incomplete && seen.size() >= kMaxAnswerBytes)) {
      return failed(
          502, "the parent proxy " + parent + " answered CONNECT " + target +
                   " with something other than HTTP: " +
                   (parse.state == ParseState::error ? parse.error.reason : "no end of its head"));
    }
    // The head's bytes alone: all of what was seen while it is incomplete.
    const std::size_t take = parse.state == ParseState::complete ? parse.consumed - head.size()
                                                                 : seen.size() - head.size();
    std::size_t taken = 0;
    while (taken < take) {
      const ssize_t got = ::recv(fd.get(), buffer, take - taken, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return failed(502, "the parent proxy " + parent + " went away mid-answer");
      taken += static_cast<std::size_t>(got);
    }
    head.append(seen, head.size(), take);
    if (parse.state == ParseState::incomplete) continue;
    const int status = parse.head.status;
    if (status >= 100 && status < 200) {
      head.clear();  // an interim answer; the final one follows
      continue;
    }
    if (status >= 200 && status < 300) return {std::move(fd), 0, {}, false};
    const std::string said = "the parent proxy " + parent + " answered CONNECT " + target +
                             " with " + std::to_string(status) +
                             (parse.head.reason.empty() ? "" : " " + parse.head.reason);
    ParentTunnel refused = failed(status == 403 ? 403 : 502, said);
    if (status == 407) {
      refused.refusal +=
          " (it wants credentials: set [egress.parent] credential_file or "
          "credential_command, or check the ones it was given)";
    }
    refused.answered = true;
    return refused;
  }
}

}  // namespace

std::string ParentProxy::to_string() const {
  const auto literal = parse_ip_literal(host);
  const bool v6 = literal && literal->family == AF_INET6;
  return (v6 ? "[" + literal->to_string() + "]" : host) + ":" + std::to_string(port);
}

ParentTunnel tunnel_through(const ParentProxy &parent, const IpAddress &target, std::uint16_t port,
                            std::chrono::milliseconds bound) {
  const std::string name = parent.to_string();
  const std::string authority = endpoint(target, port);
  std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  if (parent.credential) {
    const std::string credential = parent.credential->get();
    if (credential.empty()) {
      return failed(502,
                    "no parent proxy credential is held yet (its read failed or is still "
                    "under way); the parent proxy " +
                        name + " is not asked");
    }
    try {
      request += "Proxy-Authorization: " + basic_credentials(credential) + "\r\n";
    } catch (const std::invalid_argument &e) {
      return failed(502, e.what());
    }
  }
  request += "\r\n";

  std::vector<IpAddress> addresses;
  std::string error;
  if (const auto literal = parse_ip_literal(parent.host)) {
    addresses.push_back(*literal);
  } else {
    addresses = resolve_addresses(parent.host, error);
    if (addresses.empty()) {
      return failed(502, "cannot resolve the parent proxy " + name + ": " + error);
    }
  }
  std::string failures;
  int status = 502;
  for (const IpAddress &address : addresses) {
    Connected connected = connect_within(address, parent.port, bound);
    if (!connected.fd) {
      failures += (failures.empty() ? "" : "; ") + address.to_string() + ": " +
                  std::strerror(connected.error);
      if (connected.error == ETIMEDOUT) status = 504;
      continue;
    }
    const Clock::time_point deadline = Clock::now() + bound;
    if (!send_all(connected.fd.get(), request, deadline)) {
      failures +=
          (failures.empty() ? "" : "; ") + address.to_string() + ": the request was not taken";
      continue;
    }
    return read_answer(std::move(connected.fd), name, authority, deadline);
  }
  return failed(status, "cannot connect to the parent proxy " + name + " (" + failures + ")");
}

}  // namespace sandbox_host::egress
