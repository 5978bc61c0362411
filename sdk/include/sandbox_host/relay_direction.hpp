// One way of a relayed connection, for the two relays sandbox-host has: the namespaces
// backend's init, which relays a sandbox's 127.0.0.1:<port> to the egress socket, and the
// egress proxy's tunnels. Bytes that come in small reads (a request, a short reply) are
// copied through one buffer the relay's thread owns, a read and a write, where a pipe would
// add its making, two splices and two descriptors; once a read fills the buffer the
// direction carries bulk data, and from then on its bytes move socket -> pipe -> socket with
// splice(2), never through userspace. An end of sending is passed on as a half-close once
// everything sent before it was delivered.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

namespace sandbox_host {

// What a relay's thread shares between its directions: the copy buffer, and how many more
// pipes may be grown. Pipe pages count against the user's pipe-user-pages-soft (16,384
// pages by default), and a user past it gets small pipes in every program.
struct RelayScratch {
  static constexpr std::size_t kCopyChunk = 16 << 10;
  // A bulk direction's pipe grown to 1 MiB (the default pipe-max-size) moves a GiB with a
  // sixteenth of the splices of a default 64 KiB pipe (docs/benchmarks.md).
  static constexpr int kLargePipeBytes = 1 << 20;

  explicit RelayScratch(std::size_t large_pipes) : large_pipes_left(large_pipes) {}
  std::vector<char> copy_buffer = std::vector<char>(kCopyChunk);
  std::size_t large_pipes_left;
};

class RelayDirection {
 public:
  // from's bytes go to `to`, after `prefix` (bytes the relay read already). Both sockets
  // non-blocking, owned by the caller.
  RelayDirection(int from, int to, std::string prefix = {})
      : from_(from), to_(to), prefix_(std::move(prefix)) {}

  // Moves what can be moved without blocking: until a socket would block, or, with a
  // budget, until about that many bytes moved (a level-triggered relay then comes back
  // for the rest, and no connection starves the others). True when anything moved.
  // short_read_ends: a read that did not fill the buffer found the socket drained, so the
  // next read would only say EAGAIN. Right for an edge-triggered relay woken by this
  // socket's readiness without a hang-up in the event: later bytes raise a new edge,
  // while an end that already came would raise none, so it must be read now.
  // Throws std::system_error naming `side` when a socket fails.
  bool move(RelayScratch &scratch, const char *side, std::size_t budget = 0,
            bool short_read_ends = false) {
    bool moved = false;
    std::size_t count = 0;
    auto spent = [&](std::size_t n) {
      moved = true;
      count += n;
      return budget != 0 && count >= budget;
    };
    for (;;) {
      while (!prefix_.empty()) {
        const ssize_t n = ::send(to_, prefix_.data(), prefix_.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return moved;
        if (n < 0) throw std::system_error(errno, std::generic_category(), side);
        prefix_.erase(0, static_cast<std::size_t>(n));
        if (prefix_.empty()) std::string().swap(prefix_);  // an idle direction holds no buffer
        if (spent(static_cast<std::size_t>(n))) return moved;
      }
      while (in_pipe_ > 0) {
        const ssize_t n = ::splice(pipe_out_.get(), nullptr, to_, nullptr, in_pipe_,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return moved;
        if (n <= 0) throw std::system_error(n < 0 ? errno : EPIPE, std::generic_category(), side);
        in_pipe_ -= static_cast<std::size_t>(n);
        if (spent(static_cast<std::size_t>(n))) return moved;
      }
      if (eof_) {
        if (!shut_down_) {
          if (::shutdown(to_, SHUT_WR) != 0 && errno != ENOTCONN) {
            throw std::system_error(errno, std::generic_category(), side);
          }
          shut_down_ = true;
          moved = true;
        }
        return moved;
      }
      if (!pipe_in_) {
        const std::size_t size = scratch.copy_buffer.size();
        char *buffer = scratch.copy_buffer.data();
        const ssize_t n = ::recv(from_, buffer, size, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return moved;
        if (n < 0) throw std::system_error(errno, std::generic_category(), side);
        if (n == 0) {
          eof_ = true;
          continue;
        }
        received_ += static_cast<std::size_t>(n);
        std::size_t sent = 0;
        while (sent < static_cast<std::size_t>(n)) {
          const ssize_t w =
              ::send(to_, buffer + sent, static_cast<std::size_t>(n) - sent, MSG_NOSIGNAL);
          if (w < 0 && errno == EINTR) continue;
          if (w < 0 && errno == EAGAIN) break;
          if (w < 0) throw std::system_error(errno, std::generic_category(), side);
          sent += static_cast<std::size_t>(w);
        }
        prefix_.assign(buffer + sent, static_cast<std::size_t>(n) - sent);
        if (static_cast<std::size_t>(n) == size) make_pipe(scratch, side);
        if (spent(static_cast<std::size_t>(n))) return moved;
        if (short_read_ends && static_cast<std::size_t>(n) < size && prefix_.empty()) {
          return moved;
        }
        continue;
      }
      // The pipe is empty here, so EAGAIN means the socket has nothing more for now.
      const ssize_t n = ::splice(from_, nullptr, pipe_in_.get(), nullptr, kSpliceChunk,
                                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return moved;
      if (n < 0) throw std::system_error(errno, std::generic_category(), side);
      if (n == 0) {
        eof_ = true;
      } else {
        in_pipe_ = static_cast<std::size_t>(n);
        received_ += static_cast<std::size_t>(n);
        moved = true;
      }
    }
  }

  // Reading waits for from (nothing of its own left to deliver); writing waits for to.
  bool wants_read() const noexcept { return !eof_ && prefix_.empty() && in_pipe_ == 0; }
  bool wants_write() const noexcept { return !prefix_.empty() || in_pipe_ > 0; }
  // from ended and `to` was told so.
  bool done() const noexcept { return shut_down_; }
  // Bytes read from `from` so far, beyond the prefix.
  std::uint64_t received() const noexcept { return received_; }

  // Gives the pipe back (a grown one to scratch's count); the direction moves no more.
  void release(RelayScratch &scratch) noexcept {
    pipe_out_.reset();
    pipe_in_.reset();
    if (large_pipe_) ++scratch.large_pipes_left;
    large_pipe_ = false;
  }

 private:
  static constexpr std::size_t kSpliceChunk = 1 << 20;

  void make_pipe(RelayScratch &scratch, const char *side) {
    int ends[2];
    if (::pipe2(ends, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw std::system_error(errno, std::generic_category(), side);
    }
    pipe_out_.reset(ends[0]);
    pipe_in_.reset(ends[1]);
    if (scratch.large_pipes_left > 0 &&
        ::fcntl(ends[1], F_SETPIPE_SZ, RelayScratch::kLargePipeBytes) >= 0) {
      large_pipe_ = true;
      --scratch.large_pipes_left;
    }
  }

  int from_, to_;
  std::string prefix_;  // bytes in userspace, sent before anything else
  UniqueFd pipe_out_, pipe_in_;
  bool large_pipe_ = false;
  std::size_t in_pipe_ = 0;
  bool eof_ = false;        // from sent its last byte
  bool shut_down_ = false;  // ... and `to` was told so
  std::uint64_t received_ = 0;
};

}  // namespace sandbox_host
