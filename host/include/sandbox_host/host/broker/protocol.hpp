// The broker's wire format, the same on both transports: one JSON request (seed 000's
// Request: op, unit, slice, max, swap, args, wait, resource, input, stream), answered by reply
// frames (seed 000's Reply fields out, err, error, code), the last of which carries
// "end": true. See docs/broker.md.
#pragma once

#include <sandbox_host/module.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sandbox_host::broker {

// A request the broker cannot take; the message names what was wrong.
class RequestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
// or error become U+FFFD, as encoding/json does for the seed's Go clients.
std::string encode_frame(const ReplyFrame &frame);
// Throws RequestError for a frame the broker could not have sent.
ReplyFrame parse_frame(std::string_view json);

// The largest out or err a frame carries; longer output is sent in several frames. Even
// escaped six-fold, a frame fits one message of a default unix socket buffer.
inline constexpr std::size_t kFrameChunk = 16 * 1024;

}  // namespace sandbox_host::broker
