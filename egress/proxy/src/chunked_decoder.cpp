// A chunked body (RFC 9112 7.1) decoded as it arrives (http_message.hpp's ChunkedDecoder).
#include <sandbox_host/egress/proxy/http_message.hpp>

#include <algorithm>

#include "http_grammar.hpp"

namespace sandbox_host::egress {

using namespace http;

ChunkedDecoder::ChunkedDecoder(const HttpLimits &limits) : limits_(limits) {}

bool ChunkedDecoder::done() const noexcept {
  return stage_ == Stage::done;
}

void ChunkedDecoder::fail(std::string reason) {
  stage_ = Stage::failed;
  failure_ = HttpError{400, std::move(reason)};
  throw HttpParseError(failure_);
}

std::size_t ChunkedDecoder::feed(std::string_view in, std::string &out) {
  std::size_t used = 0;
  while (used < in.size()) {
    switch (stage_) {
      case Stage::failed:
        throw HttpParseError(failure_);
      case Stage::done:
        return used;
      case Stage::data: {
        const auto take =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, in.size() - used));
        out.append(in.substr(used, take));
        used += take;
        remaining_ -= take;
        if (remaining_ == 0) stage_ = Stage::data_end;
        break;
      }
      case Stage::data_end:
        if (in[used] != kCrlf[data_end_seen_]) fail("chunk data is not followed by CRLF");
        ++used;
        if (++data_end_seen_ == kCrlf.size()) {
          data_end_seen_ = 0;
          stage_ = Stage::size_line;
        }
        break;
      case Stage::size_line:
      case Stage::trailer: {
        // A line is held to its limit, LF included, as its bytes come.
        const bool size_line = stage_ == Stage::size_line;
        const std::string_view rest = in.substr(used);
        const auto lf = rest.find('\n');
        const bool ended = lf != std::string_view::npos;
        const std::size_t take = ended ? lf + 1 : rest.size();
        const std::size_t limit = size_line ? kMaxSizeLineBytes : limits_.max_head_bytes;
        if ((size_line ? line_.size() : trailer_bytes_) + take > limit) {
          fail(size_line ? "chunk size line is longer than " + std::to_string(limit) + " bytes"
                         : "trailer section is longer than " + std::to_string(limit) + " bytes");
        }
        line_.append(rest.substr(0, take));
        if (!size_line) trailer_bytes_ += take;
        used += take;
        if (!ended) break;
        line_.pop_back();
        if (size_line) {
          finish_size_line();
        } else {
          finish_trailer_line();
        }
        line_.clear();
        break;
      }
    }
  }
  if (stage_ == Stage::failed) throw HttpParseError(failure_);
  return used;
}

void ChunkedDecoder::finish_size_line() {
  if (line_.empty() || line_.back() != '\r')
    fail("bare LF in a chunk size line: lines end in CRLF");
  const std::string_view line = std::string_view(line_).substr(0, line_.size() - 1);
  if (line.find('\r') != std::string_view::npos) fail("bare CR in a chunk size line");
  std::size_t digits = 0;
  std::uint64_t size = 0;
  for (; digits < line.size(); ++digits) {
    const char c = lower(line[digits]);
    const int value = is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (value < 0) break;
    if (size > (UINT64_MAX >> 4)) fail("chunk size does not fit in 64 bits");
    size = (size << 4) | static_cast<std::uint64_t>(value);
  }
  if (digits == 0) fail("chunk size is not a hexadecimal number");
  // RFC 9112 7.1.1: chunk extensions, BWS ";" name ["=" value], checked for stray bytes and
  // dropped.
  std::string_view extensions = line.substr(digits);
  while (!extensions.empty() && is_ows(extensions.front())) extensions.remove_prefix(1);
  if (extensions.empty() && digits != line.size()) fail("whitespace after the chunk size");
  if (!extensions.empty() && extensions.front() != ';') {
    fail("chunk size is followed by " + describe_byte(extensions.front()) +
         ", not a chunk extension (';') or CRLF");
  }
  const auto control = std::find_if(extensions.begin(), extensions.end(), is_forbidden_control);
  if (control != extensions.end()) {
    fail("control " + describe_byte(*control) + " in a chunk extension");
  }
  if (size == 0) {
    stage_ = Stage::trailer;
  } else {
    remaining_ = size;
    stage_ = Stage::data;
  }
}

void ChunkedDecoder::finish_trailer_line() {
  if (line_.empty() || line_.back() != '\r')
    fail("bare LF in the trailer section: lines end in CRLF");
  const std::string_view line = std::string_view(line_).substr(0, line_.size() - 1);
  if (line.find('\r') != std::string_view::npos) fail("bare CR in the trailer section");
  if (line.empty()) {
    stage_ = Stage::done;
    return;
  }
  if (trailer_fields_ == limits_.max_headers) {
    fail("trailer section has more than " + std::to_string(limits_.max_headers) + " fields");
  }
  try {
    parse_field_line(line);
  } catch (const HttpParseError &e) {
    fail("trailer field: " + e.error().reason);
  }
  ++trailer_fields_;
}

}  // namespace sandbox_host::egress
