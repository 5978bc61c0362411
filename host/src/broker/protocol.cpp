#include <sandbox_host/host/broker/protocol.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <Poco/Base64Decoder.h>
#include <Poco/Base64Encoder.h>
#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <Poco/JSON/Stringifier.h>
#include <Poco/UTF8String.h>

#include <array>
#include <sstream>

namespace sandbox_host::broker {
namespace {

using Poco::JSON::Object;

// A request is an object of strings, booleans and one array of strings: deeper nesting is
// refused before the parser recurses into it.
constexpr int kMaxDepth = 4;

void check_depth(std::string_view json) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) {
        throw RequestError("request is nested deeper than " + std::to_string(kMaxDepth) +
                           " levels; a request is one object of strings, booleans and "
                           "one array of strings");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

std::string type_name(const Poco::Dynamic::Var &value) {
  if (value.isEmpty()) return "null";
  if (value.type() == typeid(Object::Ptr)) return "an object";
  if (value.type() == typeid(Poco::JSON::Array::Ptr)) return "an array";
  if (value.isString()) return "a string";
  if (value.isBoolean()) return "a boolean";
  if (value.isNumeric()) return "a number";
  return "another type";
}

std::string string_field(const Object &object, const std::string &name) {
  const auto value = object.get(name);
  if (!value.isString()) {
    throw RequestError("field \"" + name + "\" must be a string, not " + type_name(value));
  }
  return value.extract<std::string>();
}

// Standard base64 with padding, as Go's encoding/json writes []byte: checked here in full,
// since Poco's decoder stops quietly at the first bad character.
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

std::string decode_base64(const std::string &text) {
  if (!is_padded_base64(text)) {
    throw RequestError(
        "field \"input\" is not base64 (the seed's []byte encoding: standard "
        "alphabet, padded)");
  }
  std::istringstream in(text);
  Poco::Base64Decoder decoder(in);
  std::string out;
  std::array<char, 4096> buffer{};
  while (decoder.read(buffer.data(), buffer.size()) || decoder.gcount() > 0) {
    out.append(buffer.data(), static_cast<std::size_t>(decoder.gcount()));
  }
  if (decoder.bad()) throw RequestError("field \"input\" is not base64");
  return out;
}

std::string encode_base64(std::string_view bytes) {
  std::ostringstream out;
  Poco::Base64Encoder encoder(out);
  encoder.rdbuf()->setLineLength(0);
  encoder.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  encoder.close();
  return out.str();
}

// Valid UTF-8 as is; every byte that does not start a valid sequence becomes U+FFFD.
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

std::string stringify(const Object &object) {
  std::ostringstream out;
  // Escape what JSON needs and nothing else: the text is UTF-8 already.
  Poco::JSON::Stringifier::stringify(object, out, 0, -1, Poco::JSON_WRAP_STRINGS);
  return out.str();
}

// The kind of a JSON text that is valid but not an object, or "" otherwise. Poco refuses a
// scalar at the top as if it were no JSON at all; inside an array it takes one.
std::string top_level_kind(std::string_view json) {
  const auto start = json.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || json[start] == '{') return {};
  try {
    Poco::JSON::Parser parser;
    const auto wrapped = parser.parse("[" + std::string(json) + "]");
    const auto array = wrapped.extract<Poco::JSON::Array::Ptr>();
    return array->size() == 1 ? type_name(array->get(0)) : std::string();
  } catch (const Poco::Exception &) {
    return {};
  }
}

Object::Ptr parse_object(std::string_view json, const char *what) {
  if (const auto kind = top_level_kind(json); !kind.empty()) {
    throw RequestError(std::string(what) + " must be a JSON object, not " + kind);
  }
  Poco::Dynamic::Var parsed;
  try {
    Poco::JSON::Parser parser;
    parsed = parser.parse(std::string(json));
  } catch (const Poco::Exception &e) {
    // Poco's message quotes the byte it stopped at, which is the requester's.
    throw RequestError(std::string(what) + " is not valid JSON: " + echo(e.displayText(), 200));
  }
  if (parsed.type() != typeid(Object::Ptr)) {
    throw RequestError(std::string(what) + " must be a JSON object, not " + type_name(parsed));
  }
  return parsed.extract<Object::Ptr>();
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

Request parse_request(std::string_view json, std::size_t max_bytes) {
  if (json.size() > max_bytes) {
    throw RequestError("request of " + std::to_string(json.size()) +
                       " bytes, more than the broker's max_request_bytes " +
                       std::to_string(max_bytes));
  }
  check_depth(json);
  const Object::Ptr object = parse_object(json, "request");
  static const std::array<const char *, 10> kFields{"op",   "unit", "slice",    "max",   "swap",
                                                    "args", "wait", "resource", "input", "stream"};
  for (const auto &name : object->getNames()) {
    if (std::find(kFields.begin(), kFields.end(), name) == kFields.end()) {
      throw RequestError("unknown field " + echo(name) +
                         "; fields: op, unit, slice, max, swap, args, wait, resource, input, "
                         "stream");
    }
  }
  if (!object->has("op")) throw RequestError("field \"op\" is missing");
  Request request;
  request.op = string_field(*object, "op");
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
    if (object->has(name)) *target = string_field(*object, name);
  }
  if (object->has("args")) {
    const auto args = object->get("args");
    if (args.type() != typeid(Poco::JSON::Array::Ptr)) {
      throw RequestError("field \"args\" must be an array of strings, not " + type_name(args));
    }
    const auto array = args.extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < array->size(); ++i) {
      const auto arg = array->get(static_cast<unsigned>(i));
      if (!arg.isString()) {
        throw RequestError("field \"args\"[" + std::to_string(i) + "] must be a string, not " +
                           type_name(arg));
      }
      request.args.push_back(arg.extract<std::string>());
    }
  }
  if (object->has("input")) request.input = decode_base64(string_field(*object, "input"));
  if (object->has("stream")) {
    const auto stream = object->get("stream");
    if (!stream.isBoolean()) {
      throw RequestError("field \"stream\" must be a boolean, not " + type_name(stream));
    }
    request.stream = stream.extract<bool>();
  }
  return request;
}

std::string encode_request(const Request &request) {
  Object object(Poco::JSON_PRESERVE_KEY_ORDER);
  object.set("op", valid_utf8(request.op));
  for (auto [name, value] : {std::pair{"unit", &request.unit},
                             {"slice", &request.slice},
                             {"max", &request.max},
                             {"swap", &request.swap},
                             {"wait", &request.wait},
                             {"resource", &request.resource}}) {
    if (!value->empty()) object.set(name, valid_utf8(*value));
  }
  if (!request.args.empty()) {
    Poco::JSON::Array args;
    for (const auto &arg : request.args) args.add(valid_utf8(arg));
    object.set("args", args);
  }
  if (!request.input.empty()) object.set("input", encode_base64(request.input));
  if (request.stream) object.set("stream", true);
  return stringify(object);
}

std::string encode_frame(const ReplyFrame &frame) {
  Object object(Poco::JSON_PRESERVE_KEY_ORDER);
  if (!frame.error.empty()) object.set("error", valid_utf8(frame.error));
  if (!frame.out.empty()) object.set("out", valid_utf8(frame.out));
  if (!frame.err.empty()) object.set("err", valid_utf8(frame.err));
  if (frame.code != 0) object.set("code", frame.code);
  if (frame.end) object.set("end", true);
  return stringify(object);
}

ReplyFrame parse_frame(std::string_view json) {
  const Object::Ptr object = parse_object(json, "reply frame");
  ReplyFrame frame;
  for (auto [name, target] :
       {std::pair{"error", &frame.error}, {"out", &frame.out}, {"err", &frame.err}}) {
    if (!object->has(name)) continue;
    const auto value = object->get(name);
    if (!value.isString()) {
      throw RequestError(std::string("reply frame field \"") + name + "\" must be a string, not " +
                         type_name(value));
    }
    *target = value.extract<std::string>();
  }
  if (object->has("code")) {
    const auto code = object->get("code");
    if (!code.isInteger() || code.isBoolean()) {
      throw RequestError("reply frame field \"code\" must be an integer, not " + type_name(code));
    }
    const auto value = code.convert<Poco::Int64>();
    if (value < INT32_MIN || value > INT32_MAX) {
      throw RequestError("reply frame field \"code\" is out of range: " + std::to_string(value));
    }
    frame.code = static_cast<int>(value);
  }
  if (object->has("end")) {
    const auto end = object->get("end");
    if (!end.isBoolean()) {
      throw RequestError("reply frame field \"end\" must be a boolean, not " + type_name(end));
    }
    frame.end = end.extract<bool>();
  }
  return frame;
}

}  // namespace sandbox_host::broker
