// The broker's wire format, the same on both transports: one JSON request (op, unit, slice,
// max, swap, args, wait, resource, input, stream), answered by reply frames (out, err, error,
// code), the last of which carries "end": true. Clients outside this repository speak it, so
// the field names stay: docs/design.md#broker-protocol, docs/broker.md.
#pragma once

#include <sandbox_host/module.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sandbox_host::broker {

// A request the broker cannot take; the message names what was wrong and goes to the
// requester. detail is for the audit alone: what the requester may not be told, such as
// host pids a sandbox cannot see.
class RequestError : public std::runtime_error {
 public:
  explicit RequestError(const std::string &message, std::string detail = {})
      : std::runtime_error(message), detail_(std::move(detail)) {}
  const std::string &detail() const noexcept { return detail_; }
  // The message with its detail, for the audit.
  std::string audited() const { return detail_.empty() ? what() : what() + (" (" + detail_ + ")"); }

 private:
  std::string detail_;
};

// The longest operation name a request may carry: module names are short.
inline constexpr std::size_t kMaxOpName = 64;
// How much of a requester's own text a refusal repeats.
inline constexpr std::size_t kEchoBytes = 64;

// text in double quotes, cut after max bytes (marked with "..."), escaped as the audit's text
// is (escape_text) and its quotes as \x22: what a refusal shows of a requester's string.
std::string echo(std::string_view text, std::size_t max = kEchoBytes);
// text in double quotes, cut after max bytes, not escaped: for the audit, whose sink escapes.
std::string quoted_prefix(std::string_view text, std::size_t max = kEchoBytes);

struct ReplyFrame {
  std::string out, err;  // output of the operation, or a part of it
  std::string error;     // the refusal; empty when the operation was done
  int code = 0;          // the exit code of a call (OpSecret and the other commands)
  bool end = false;      // the last frame of the reply
};

// Throws RequestError for a request that is not a JSON object of the known fields with
// their types, is nested deeper than a request can be, or is longer than max_bytes.
Request parse_request(std::string_view json, std::size_t max_bytes);
std::string encode_request(const Request &request);

// One frame as one JSON object, without a newline. Bytes that are not UTF-8 in out, err
// or error become U+FFFD, as encoding/json does for the broker's Go clients.
std::string encode_frame(const ReplyFrame &frame);
// Throws RequestError for a frame the broker could not have sent.
ReplyFrame parse_frame(std::string_view json);

// The largest out or err a frame carries; longer output is sent in several frames. Even
// escaped six-fold, a frame fits one message of a default unix socket buffer.
inline constexpr std::size_t kFrameChunk = 16 * 1024;

}  // namespace sandbox_host::broker
