#include <sandbox_host/host/broker/protocol.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <openssl/evp.h>
#include <boost/json.hpp>

#include <array>

namespace sandbox_host::broker {
namespace {

namespace json = boost::json;

// A request is an object of strings, booleans and one array of strings: the parser refuses
// deeper nesting as it meets it, without recursing.
constexpr std::size_t kMaxDepth = 4;

std::string type_name(const json::value &value) {
  switch (value.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::object:
      return "an object";
    case json::kind::array:
      return "an array";
    case json::kind::string:
      return "a string";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "a number";
  }
  return "another type";
}

std::string string_field(const json::object &object, std::string_view name) {
  const json::value &value = object.at(name);
  if (!value.is_string()) {
    throw RequestError("field \"" + std::string(name) + "\" must be a string, not " +
                       type_name(value));
  }
  return std::string(value.get_string());
}

// Standard base64 with padding, as Go's encoding/json writes []byte: checked in full here,
// since OpenSSL's decoder skips the whitespace it meets.
bool is_padded_base64(std::string_view text) {
  if (text.size() % 4 != 0) return false;
  const std::size_t padding = text.size() >= 2 && text.substr(text.size() - 2) == "==" ? 2
                              : !text.empty() && text.back() == '='                    ? 1
                                                                                       : 0;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    const char c = text[i];
    const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (!alphabet) return false;
  }
  return true;
}

std::string decode_base64(std::string_view text) {
  if (!is_padded_base64(text)) {
    throw RequestError(
        "field \"input\" is not base64 (Go's []byte encoding in JSON: standard "
        "alphabet, padded)");
  }
  std::string out(text.size() / 4 * 3, '\0');
  const int decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                                      reinterpret_cast<const unsigned char *>(text.data()),
                                      static_cast<int>(text.size()));
  if (decoded < 0) throw RequestError("field \"input\" is not base64");
  // EVP_DecodeBlock counts the padding's bytes as zeros.
  const std::size_t padding = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  out.resize(static_cast<std::size_t>(decoded) - padding);
  return out;
}

std::string encode_base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                                      reinterpret_cast<const unsigned char *>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

// Valid UTF-8 as is; every byte that does not start a valid sequence becomes U+FFFD, as
// Go's encoding/json writes it (Boost.JSON serializes a string's bytes as they are).
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = c < 0x80           ? 1
                         : (c >> 5) == 0x6  ? 2
                         : (c >> 4) == 0xe  ? 3
                         : (c >> 3) == 0x1e ? 4
                                            : 0;
    bool valid = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    }
    if (valid && length > 1) {
      // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
      std::uint32_t cp = c & (0xff >> (length + 1));
      for (std::size_t k = 1; k < length; ++k) cp = (cp << 6) | (text[i + k] & 0x3f);
      constexpr std::array<std::uint32_t, 5> kMin{0, 0, 0x80, 0x800, 0x10000};
      valid = cp >= kMin[length] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append("\xef\xbf\xbd");
      ++i;
    }
  }
  return out;
}

// One JSON object: at most kMaxDepth deep, strings valid UTF-8 (Boost.JSON's default), and
// nothing after it. The error names where the text went wrong, not what it holds.
json::object parse_object(std::string_view text, const char *what) {
  json::parse_options options;
  options.max_depth = kMaxDepth;
  json::stream_parser parser({}, options);
  json::error_code ec;
  const std::size_t read = parser.write(text.data(), text.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec == json::error::too_deep) {
    throw RequestError(std::string(what) + " is nested deeper than " + std::to_string(kMaxDepth) +
                       " levels; a request is one object of strings, booleans and one array of "
                       "strings");
  }
  if (ec) {
    throw RequestError(std::string(what) + " is not valid JSON: " + ec.message() + " at byte " +
                       std::to_string(read));
  }
  json::value value = parser.release();
  if (!value.is_object()) {
    throw RequestError(std::string(what) + " must be a JSON object, not " + type_name(value));
  }
  return std::move(value.get_object());
}

}  // namespace

std::string echo(std::string_view text, std::size_t max) {
  std::string shown = "\"";
  // A quote inside would seem to end the echo; it is escaped like the rest.
  for (char c : escape_text(text.substr(0, max)))
    shown += c == '"' ? std::string("\\x22") : std::string(1, c);
  return shown + (text.size() > max ? "\"..." : "\"");
}

std::string quoted_prefix(std::string_view text, std::size_t max) {
  return "\"" + std::string(text.substr(0, max)) + (text.size() > max ? "\"..." : "\"");
}

Request parse_request(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    throw RequestError("request of " + std::to_string(text.size()) +
                       " bytes, more than the broker's max_request_bytes " +
                       std::to_string(max_bytes));
  }
  const json::object object = parse_object(text, "request");
  static const std::array<std::string_view, 10> kFields{
      "op", "unit", "slice", "max", "swap", "args", "wait", "resource", "input", "stream"};
  for (const auto &field : object) {
    if (std::find(kFields.begin(), kFields.end(), field.key()) == kFields.end()) {
      throw RequestError("unknown field " + echo(field.key()) +
                         "; fields: op, unit, slice, max, swap, args, wait, resource, input, "
                         "stream");
    }
  }
  if (!object.contains("op")) throw RequestError("field \"op\" is missing");
  Request request;
  request.op = string_field(object, "op");
  if (request.op.empty()) throw RequestError("field \"op\" is empty");
  if (request.op.size() > kMaxOpName) {
    throw RequestError("field \"op\" is " + std::to_string(request.op.size()) +
                       " bytes long; an operation's name has at most " +
                       std::to_string(kMaxOpName) + " (it starts " + echo(request.op) + ")");
  }
  for (auto [name, target] : {std::pair{"unit", &request.unit},
                              {"slice", &request.slice},
                              {"max", &request.max},
                              {"swap", &request.swap},
                              {"wait", &request.wait},
                              {"resource", &request.resource}}) {
    if (object.contains(name)) *target = string_field(object, name);
  }
  if (const json::value *args = object.if_contains("args")) {
    if (!args->is_array()) {
      throw RequestError("field \"args\" must be an array of strings, not " + type_name(*args));
    }
    const json::array &array = args->get_array();
    for (std::size_t i = 0; i < array.size(); ++i) {
      if (!array[i].is_string()) {
        throw RequestError("field \"args\"[" + std::to_string(i) + "] must be a string, not " +
                           type_name(array[i]));
      }
      request.args.emplace_back(array[i].get_string());
    }
  }
  if (object.contains("input")) request.input = decode_base64(string_field(object, "input"));
  if (const json::value *stream = object.if_contains("stream")) {
    if (!stream->is_bool()) {
      throw RequestError("field \"stream\" must be a boolean, not " + type_name(*stream));
    }
    request.stream = stream->get_bool();
  }
  return request;
}

std::string encode_request(const Request &request) {
  json::object object;
  object["op"] = valid_utf8(request.op);
  for (auto [name, value] : {std::pair{"unit", &request.unit},
                             {"slice", &request.slice},
                             {"max", &request.max},
                             {"swap", &request.swap},
                             {"wait", &request.wait},
                             {"resource", &request.resource}}) {
    if (!value->empty()) object[name] = valid_utf8(*value);
  }
  if (!request.args.empty()) {
    json::array args;
    for (const auto &arg : request.args) args.emplace_back(valid_utf8(arg));
    object["args"] = std::move(args);
  }
  if (!request.input.empty()) object["input"] = encode_base64(request.input);
  if (request.stream) object["stream"] = true;
  return json::serialize(object);
}

std::string encode_frame(const ReplyFrame &frame) {
  json::object object;
  if (!frame.error.empty()) object["error"] = valid_utf8(frame.error);
  if (!frame.out.empty()) object["out"] = valid_utf8(frame.out);
  if (!frame.err.empty()) object["err"] = valid_utf8(frame.err);
  if (frame.code != 0) object["code"] = frame.code;
  if (frame.end) object["end"] = true;
  return json::serialize(object);
}

ReplyFrame parse_frame(std::string_view text) {
  const json::object object = parse_object(text, "reply frame");
  ReplyFrame frame;
  for (auto [name, target] :
       {std::pair{"error", &frame.error}, {"out", &frame.out}, {"err", &frame.err}}) {
    const json::value *value = object.if_contains(name);
    if (value == nullptr) continue;
    if (!value->is_string()) {
      throw RequestError(std::string("reply frame field \"") + name + "\" must be a string, not " +
                         type_name(*value));
    }
    *target = std::string(value->get_string());
  }
  if (const json::value *code = object.if_contains("code")) {
    if (!code->is_int64() && !code->is_uint64()) {
      throw RequestError("reply frame field \"code\" must be an integer, not " + type_name(*code));
    }
    const bool fits =
        code->is_int64() && code->get_int64() >= INT32_MIN && code->get_int64() <= INT32_MAX;
    if (!fits) {
      throw RequestError("reply frame field \"code\" is out of range: " + json::serialize(*code));
    }
    frame.code = static_cast<int>(code->get_int64());
  }
  if (const json::value *end = object.if_contains("end")) {
    if (!end->is_bool()) {
      throw RequestError("reply frame field \"end\" must be a boolean, not " + type_name(*end));
    }
    frame.end = end->get_bool();
  }
  return frame;
}

}  // namespace sandbox_host::broker
