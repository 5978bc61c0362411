// The launch service's wire: on a unix stream socket, frames of a 4-byte big-endian length
// and a JSON object. The client's first frame is its LaunchRequest (launch_request.hpp) and
// carries its stdin, stdout and stderr (SCM_RIGHTS); later ones pass on signals. The
// service answers with started, then exited, or with refused at any point before exited.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// A peer that broke the protocol: a frame cut short, over its bound, or not in time.
class FrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Frame {
  std::string body;
  std::vector<UniqueFd> fds;  // close-on-exec
};

// Throws std::system_error when the socket fails (EPIPE: the peer is gone).
void send_frame(int socket, std::string_view body, std::span<const int> fds = {});

// One frame of at most max_bytes, waiting until deadline for all of it (none: forever).
// nullopt: the peer closed the connection before a frame began. Throws FrameError.
std::optional<Frame> receive_frame(
    int socket, std::size_t max_bytes,
    std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// What the service says about a launch.
struct LaunchReply {
  enum class Kind { started, exited, refused };
  Kind kind = Kind::refused;
  pid_t pid = 0;       // started: the plugin's process as the service sees it
  int code = 0;        // exited: its exit code, or
  int signal = 0;      // the signal that killed it
  std::string reason;  // refused: why, for the caller's stderr
  // exited: the line saying which bound killed the plugin (death_report.hpp), for the
  // caller's stderr; empty when none did. A client that predates it ignores it.
  std::string death;
};

std::string encode_reply(const LaunchReply &reply);
LaunchReply decode_reply(std::string_view json);  // throws FrameError

// What the client sends after its request: a signal it received, for the plugin.
std::string encode_signal(int signal);
int decode_signal(std::string_view json);  // throws FrameError

// The largest reply or signal frame either side sends.
inline constexpr std::size_t kMaxSmallFrame = 64 * 1024;

}  // namespace sandbox_host
