// Requests and frames in one line each, for the tests of the wire format and the client.
#pragma once

#include <sandbox_host/host/broker/protocol.hpp>

#include <string>
#include <utility>

namespace sandbox_host::broker {

inline Request op_only(std::string op) {
  Request request;
  request.op = std::move(op);
  return request;
}

inline ReplyFrame frame(std::string out, std::string err = {}, std::string error = {}, int code = 0,
                        bool end = false) {
  ReplyFrame frame;
  frame.out = std::move(out);
  frame.err = std::move(err);
  frame.error = std::move(error);
  frame.code = code;
  frame.end = end;
  return frame;
}

}  // namespace sandbox_host::broker
