#include <sandbox_host/egress/proxy/peer_identity.hpp>
#include <sandbox_host/host/identity/sock_diag.hpp>
#include <sandbox_host/host/sandbox_mark.hpp>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sandbox_host::egress {
namespace {

std::string address_text(const sockaddr_storage &address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto &in = reinterpret_cast<const sockaddr_in &>(address);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(in.sin_port));
  }
  const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(address);
  ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
  return "[" + std::string(text) + "]:" + std::to_string(ntohs(in6.sin6_port));
}

// An IPv4 peer of a dual-stack socket shows as ::ffff:a.b.c.d; its own socket is AF_INET.
sockaddr_storage unmapped(const sockaddr_storage &address) {
  if (address.ss_family != AF_INET6) return address;
  const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(address);
  if (!IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) return address;
  sockaddr_storage v4{};
  auto &in = reinterpret_cast<sockaddr_in &>(v4);
  in.sin_family = AF_INET;
  in.sin_port = in6.sin6_port;
  std::memcpy(&in.sin_addr, in6.sin6_addr.s6_addr + 12, 4);
  return v4;
}

void fill_endpoint(const sockaddr_storage &address, __be16 &port, __be32 (&bytes)[4]) {
  if (address.ss_family == AF_INET) {
    const auto &in = reinterpret_cast<const sockaddr_in &>(address);
    port = in.sin_port;
    std::memcpy(bytes, &in.sin_addr, 4);
  } else {
    const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(address);
    port = in6.sin6_port;
    std::memcpy(bytes, &in6.sin6_addr, 16);
  }
}

std::string tcp_state_name(unsigned state) {
  static const char *const names[] = {
      "?",     "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",   "TIME_WAIT",
      "CLOSE", "CLOSE_WAIT",  "LAST_ACK", "LISTEN",   "CLOSING",   "NEW_SYN_RECV"};
  if (state < sizeof names / sizeof *names) return names[state];
  return "number " + std::to_string(state);
}

// The states the socket of a client connected to the proxy can be in while it is open:
// sending, done sending (shutdown(SHUT_WR): FIN_WAIT1, then FIN_WAIT2 once acknowledged),
// or told the proxy is done. A LISTEN answer is the kernel's fallback when the peer's
// socket is gone and something listens on its port; SYN_SENT is a new socket that took
// the gone peer's address; neither is the peer.
bool connected_state(unsigned state) {
  return state == TCP_ESTABLISHED || state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 ||
         state == TCP_CLOSE_WAIT;
}

}  // namespace

std::string Peer::describe() const {
  std::string text = address;
  if (pid > 0) text += " pid " + std::to_string(pid);
  text += uid ? " (uid " + std::to_string(*uid) + ")" : " (uid unknown)";
  return text;
}

// The owner of the TCP socket whose source is `source` and destination `destination`: one
// exact lookup in the kernel's socket table, not a walk through /proc/net/tcp, which grows
// with every connection on the host.
PeerIdentifier::Owner PeerIdentifier::tcp_socket_owner(const sockaddr_storage &source,
                                                       const sockaddr_storage &destination) {
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.request.sdiag_family = static_cast<__u8>(source.ss_family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  // An exact lookup answers whatever it finds, in any state; asking for all of them says
  // so, and the answer's state and inode are what decide.
  message.request.idiag_states = ~0U;
  auto &id = message.request.id;
  fill_endpoint(source, id.idiag_sport, id.idiag_src);
  fill_endpoint(destination, id.idiag_dport, id.idiag_dst);
  id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  SockDiagReply reply;
  try {
    if (!diag_) diag_.emplace();
    reply = diag_->ask(message, sizeof(inet_diag_msg));
  } catch (const SockDiagError &e) {
    diag_.reset();  // a fresh socket next time, whatever went wrong with this one
    return {std::nullopt, e.what()};
  }
  if (reply.error == ENOENT) {
    return {std::nullopt,
            "no socket on this host is its other end (the peer is not local, or its "
            "socket is gone)"};
  }
  if (reply.error != 0) {
    return {std::nullopt, std::string("the kernel's socket table refused the lookup (") +
                              std::strerror(reply.error) + ")"};
  }
  const auto &answer = *static_cast<const inet_diag_msg *>(NLMSG_DATA(reply.answer));
  // A socket no process holds any more (closed, or a TIME_WAIT or FIN_WAIT2 minisocket)
  // has no inode, and the kernel reports its uid as 0: nobody's, not root's.
  if (answer.idiag_inode == 0) {
    return {std::nullopt, "the peer's socket was already closed when the proxy asked (TCP state " +
                              tcp_state_name(answer.idiag_state) +
                              ", held by no process, so it has no owner)"};
  }
  if (!connected_state(answer.idiag_state)) {
    return {std::nullopt,
            "the peer's socket is gone; the socket the kernel found at its "
            "address is in TCP state " +
                tcp_state_name(answer.idiag_state) + ", not the peer's"};
  }
  return {answer.idiag_uid, {}, answer.idiag_inode};
}

Peer PeerIdentifier::identify(int fd) {
  sockaddr_storage local{}, remote{};
  socklen_t local_length = sizeof local, remote_length = sizeof remote;
  if (::getsockname(fd, reinterpret_cast<sockaddr *>(&local), &local_length) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr *>(&remote), &remote_length) != 0) {
    Peer peer;
    peer.address = "unknown";
    peer.unknown = std::string("the connection ended before the proxy could ask (") +
                   std::strerror(errno) + ")";
    return peer;
  }
  return identify(fd, local, remote);
}

Peer PeerIdentifier::identify(int fd, const sockaddr_storage &local_address,
                              const sockaddr_storage &remote_address) {
  Peer peer;
  if (local_address.ss_family == AF_UNIX) {
    peer.address = "unix";
    ucred credentials{};
    socklen_t length = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0) {
      peer.uid = credentials.uid;
      peer.pid = credentials.pid;
    } else {
      peer.unknown = std::string("SO_PEERCRED failed (") + std::strerror(errno) + ")";
    }
    return peer;
  }
  const sockaddr_storage remote = unmapped(remote_address);
  const sockaddr_storage local = unmapped(local_address);
  peer.address = address_text(remote);
  // The peer's socket runs from its address to ours.
  Owner owner = tcp_socket_owner(remote, local);
  peer.uid = owner.uid;
  peer.unknown = std::move(owner.unknown);
  peer.socket_inode = owner.inode;
  return peer;
}

std::string same_user_refusal(const Peer &peer, uid_t uid) {
  if (!peer.uid) {
    return "the connection's owner is unknown: " + peer.unknown + "; the proxy serves uid " +
           std::to_string(uid) + " only";
  }
  if (*peer.uid != uid) {
    return "the connection belongs to uid " + std::to_string(*peer.uid) +
           "; the proxy serves uid " + std::to_string(uid) + " only";
  }
  return {};
}

namespace {

// How many pid namespaces, from this process's /proc down, process pid is in (its NSpid
// line, which /proc/<pid>/status shows without ptrace access); 0 when it cannot be read.
std::size_t pid_namespace_depth(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (!line.starts_with("NSpid:")) continue;
    std::istringstream pids(line.substr(6));
    std::size_t depth = 0;
    for (std::string one; pids >> one;) ++depth;
    return depth;
  }
  return 0;
}

}  // namespace

std::string unproxied_sandbox_refusal(int connection, const Peer &peer) {
  bool shares_host_pids = false;
  try {
    read_pinned_peer(connection, peer.pid, [&] {
      shares_host_pids = carries_sandbox_mark(peer.pid) && pid_namespace_depth(peer.pid) == 1;
    });
  } catch (const std::exception &e) {
    // Another user's, with same_user = false: the kernel tells its limits to root alone.
    if (peer.uid && *peer.uid != ::geteuid()) return {};
    return std::string("cannot tell whether the peer is sandboxed: ") + e.what();
  }
  if (!shares_host_pids) return {};
  return "the peer is a sandbox without namespaces of its own (Landlock), which never runs a "
         "plugin with network proxied; served, a plugin of network none would reach the network";
}

}  // namespace sandbox_host::egress
