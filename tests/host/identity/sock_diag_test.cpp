// The kernel's socket table asked once (sock_diag.hpp), as the broker's and the proxy's peer
// checks ask it: on a real NETLINK_SOCK_DIAG socket, a reply is taken only for the request
// whose sequence number it carries, and an NLMSG_ERROR is an error with its errno, never an
// answer; what no kernel sends (a short datagram, a message of another kind) is refused.
#include <sandbox_host/host/identity/sock_diag.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace sandbox_host::test {
namespace {

struct UnixRequest {
  nlmsghdr header;
  unix_diag_req request;
};

struct TcpRequest {
  nlmsghdr header;
  inet_diag_req_v2 request;
};

ino_t inode_of(int fd) {
  struct stat status {};
  EXPECT_EQ(::fstat(fd, &status), 0);
  return status.st_ino;
}

UnixRequest unix_request(ino_t inode) {
  UnixRequest message{};
  message.request.sdiag_family = AF_UNIX;
  message.request.udiag_states = ~0U;
  message.request.udiag_ino = static_cast<__u32>(inode);
  message.request.udiag_show = UDIAG_SHOW_PEER;
  message.request.udiag_cookie[0] = INET_DIAG_NOCOOKIE;
  message.request.udiag_cookie[1] = INET_DIAG_NOCOOKIE;
  return message;
}

// A lookup of a TCP socket from 127.0.0.1:1 to 127.0.0.1:2, which none is.
TcpRequest absent_tcp_request() {
  TcpRequest message{};
  message.request.sdiag_family = AF_INET;
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = ~0U;
  const __be32 loopback = htonl(INADDR_LOOPBACK);
  std::memcpy(message.request.id.idiag_src, &loopback, sizeof loopback);
  std::memcpy(message.request.id.idiag_dst, &loopback, sizeof loopback);
  message.request.id.idiag_sport = htons(1);
  message.request.id.idiag_dport = htons(2);
  message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  return message;
}

// A raw NETLINK_SOCK_DIAG socket, so that the test can leave a reply unread and then read
// the kernel's own datagrams one at a time.
class RawDiag {
 public:
  RawDiag() : fd_(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) {
    if (!fd_) ADD_FAILURE() << "socket(NETLINK_SOCK_DIAG): " << std::strerror(errno);
  }

  template <typename Request>
  void send(Request message, std::uint32_t sequence) {
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.header.nlmsg_seq = sequence;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    ASSERT_EQ(::sendto(fd_.get(), &message, sizeof message, 0,
                       reinterpret_cast<sockaddr *>(&kernel), sizeof kernel),
              static_cast<ssize_t>(sizeof message))
        << std::strerror(errno);
  }

  std::vector<char> receive() {
    std::vector<char> datagram(8192);
    const ssize_t length = ::recv(fd_.get(), datagram.data(), datagram.size(), MSG_DONTWAIT);
    EXPECT_GT(length, 0) << std::strerror(errno);
    datagram.resize(length > 0 ? static_cast<std::size_t>(length) : 0);
    return datagram;
  }

 private:
  UniqueFd fd_;
};

TEST(SockDiag, AnswersAUnixSocketLookupWithThatSocket) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const UniqueFd ours(pair[0]), theirs(pair[1]);
  SockDiag diag;
  auto message = unix_request(inode_of(ours.get()));
  const SockDiagReply reply = diag.ask(message, sizeof(unix_diag_msg));
  ASSERT_NE(reply.answer, nullptr);
  EXPECT_EQ(reply.error, 0);
  const auto *answer = static_cast<const unix_diag_msg *>(NLMSG_DATA(reply.answer));
  EXPECT_EQ(answer->udiag_ino, inode_of(ours.get()));
  // A second request on the same socket is answered as well, under its own number.
  auto again = unix_request(inode_of(theirs.get()));
  const SockDiagReply second = diag.ask(again, sizeof(unix_diag_msg));
  ASSERT_NE(second.answer, nullptr);
  EXPECT_EQ(static_cast<const unix_diag_msg *>(NLMSG_DATA(second.answer))->udiag_ino,
            inode_of(theirs.get()));
}

TEST(SockDiag, TheKernelsNlmsgErrorIsAnErrorWithItsErrno) {
  SockDiag diag;
  auto message = absent_tcp_request();
  const SockDiagReply reply = diag.ask(message, sizeof(inet_diag_msg));
  EXPECT_EQ(reply.answer, nullptr);
  EXPECT_EQ(reply.error, ENOENT);
}

TEST(SockDiag, AReplyWithAnotherSequenceNumberIsPassedOver) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const UniqueFd ours(pair[0]), theirs(pair[1]);
  RawDiag raw;
  // A request given up on (number 7), then the one that is read (number 8): the kernel's
  // answer to the first is no answer to the second, and neither is its error.
  raw.send(unix_request(inode_of(ours.get())), 7);
  raw.send(absent_tcp_request(), 8);
  raw.send(unix_request(inode_of(ours.get())), 9);
  const std::vector<char> stale = raw.receive();
  EXPECT_FALSE(reply_to(stale, 8, sizeof(unix_diag_msg)).has_value());
  const auto answered = reply_to(stale, 7, sizeof(unix_diag_msg));
  ASSERT_TRUE(answered.has_value());
  EXPECT_NE(answered->answer, nullptr);

  const std::vector<char> refused = raw.receive();
  EXPECT_FALSE(reply_to(refused, 9, sizeof(inet_diag_msg)).has_value());
  const auto error = reply_to(refused, 8, sizeof(inet_diag_msg));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->answer, nullptr);
  EXPECT_EQ(error->error, ENOENT);

  const std::vector<char> current = raw.receive();
  EXPECT_FALSE(reply_to(current, 8, sizeof(unix_diag_msg)).has_value());
  EXPECT_TRUE(reply_to(current, 9, sizeof(unix_diag_msg)).has_value());
}

TEST(SockDiag, WhatNoKernelSendsIsRefused) {
  struct {
    nlmsghdr header;
    nlmsgerr error;
  } message{};
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_seq = 3;
  const auto bytes = [&] {
    return std::span<const char>(reinterpret_cast<const char *>(&message), sizeof message);
  };
  // An NLMSG_ERROR of another request is passed over; of this one, it is its errno.
  message.header.nlmsg_type = NLMSG_ERROR;
  message.error.error = -EACCES;
  EXPECT_FALSE(reply_to(bytes(), 4, sizeof(inet_diag_msg)).has_value());
  EXPECT_EQ(reply_to(bytes(), 3, sizeof(inet_diag_msg))->error, EACCES);
  // An acknowledgement (error 0), a message of another type, an answer too short for its
  // kind, and a datagram shorter than its header are no answer.
  message.error.error = 0;
  EXPECT_THROW(reply_to(bytes(), 3, sizeof(inet_diag_msg)), SockDiagError);
  message.header.nlmsg_type = NLMSG_DONE;
  EXPECT_THROW(reply_to(bytes(), 3, sizeof(inet_diag_msg)), SockDiagError);
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  EXPECT_THROW(reply_to(bytes(), 3, sizeof(inet_diag_msg)), SockDiagError);
  EXPECT_THROW(reply_to(bytes().first(sizeof(nlmsghdr) - 1), 3, sizeof(inet_diag_msg)),
               SockDiagError);
  message.header.nlmsg_len = sizeof message + 64;
  EXPECT_THROW(reply_to(bytes(), 3, sizeof(inet_diag_msg)), SockDiagError);
}

}  // namespace
}  // namespace sandbox_host::test
