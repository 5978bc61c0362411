// The broker's wire format (protocol.hpp): requests parsed with every field and type, each
// refusal with its exact message, requests and frames through a round trip, and the JSON
// the encoder writes read back by two other parsers (Poco's and python3's json module).
#include <sandbox_host/host/broker/protocol.hpp>

#include "wire.hpp"

#include <fixtures.hpp>
#include <process.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <fcntl.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::broker {
namespace {

using namespace std::string_literals;

constexpr std::size_t kMax = 1 << 20;
const std::string kFieldList =
    "fields: op, unit, slice, max, swap, args, wait, resource, input, stream";
const std::string kTooDeep =
    "request is nested deeper than 4 levels; a request is one object of strings, booleans and "
    "one array of strings";
const std::string kReplacement = "\xef\xbf\xbd";

// The message parse_request refuses json with, or "(accepted)".
std::string refusal(std::string_view json, std::size_t max_bytes = kMax) {
  try {
    parse_request(json, max_bytes);
  } catch (const RequestError &e) {
    return e.what();
  }
  return "(accepted)";
}

std::string frame_refusal(std::string_view json) {
  try {
    const ReplyFrame frame = parse_frame(json);
    return "(accepted: out \"" + frame.out + "\", err \"" + frame.err + "\", error \"" +
           frame.error + "\", code " + std::to_string(frame.code) + (frame.end ? ", end)" : ")");
  } catch (const RequestError &e) {
    return e.what();
  }
}

std::string all_bytes() {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  return bytes;
}

void expect_same(const Request &a, const Request &b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.unit, b.unit);
  EXPECT_EQ(a.slice, b.slice);
  EXPECT_EQ(a.max, b.max);
  EXPECT_EQ(a.swap, b.swap);
  EXPECT_EQ(a.args, b.args);
  EXPECT_EQ(a.wait, b.wait);
  EXPECT_EQ(a.resource, b.resource);
  EXPECT_EQ(a.input, b.input);
  EXPECT_EQ(a.stream, b.stream);
}

// ---- parse_request: what it takes ---------------------------------------------------------

TEST(ParseRequest, TakesEveryFieldWithItsType) {
  const Request request = parse_request(
      R"({"op":"o","unit":"u.service","slice":"s.slice","max":"1G","swap":"0","args":["a","b c",""],)"
      R"("wait":"w","resource":"r","input":"aGVsbG8gd29ybGQ=","stream":true})",
      kMax);
  EXPECT_EQ(request.op, "o");
  EXPECT_EQ(request.unit, "u.service");
  EXPECT_EQ(request.slice, "s.slice");
  EXPECT_EQ(request.max, "1G");
  EXPECT_EQ(request.swap, "0");
  EXPECT_EQ(request.args, (std::vector<std::string>{"a", "b c", ""}));
  EXPECT_EQ(request.wait, "w");
  EXPECT_EQ(request.resource, "r");
  EXPECT_EQ(request.input, "hello world");
  EXPECT_TRUE(request.stream);
}

TEST(ParseRequest, TakesAnOpAloneWithEverythingElseEmpty) {
  const Request request = parse_request(R"({"op":"ping"})", kMax);
  expect_same(request, op_only("ping"));
}

TEST(ParseRequest, TakesStreamFalseEmptyArgsAndEmptyInput) {
  const Request request = parse_request(R"({"op":"x","args":[],"input":"","stream":false})", kMax);
  EXPECT_TRUE(request.args.empty());
  EXPECT_TRUE(request.input.empty());
  EXPECT_FALSE(request.stream);
}

TEST(ParseRequest, TakesBracketsQuotesAndEscapesInsideStrings) {
  // Brackets inside strings are no nesting, however many; an escaped quote ends no string.
  const std::string deep_text(50, '[');
  const Request request = parse_request(
      R"({"op":"a\"[[[[[[","args":[")" + deep_text + R"(","}}}}\\","\u00e9\n"]})", kMax);
  EXPECT_EQ(request.op, "a\"[[[[[[");
  EXPECT_EQ(request.args, (std::vector<std::string>{deep_text, "}}}}\\", "\xc3\xa9\n"}));
}

TEST(ParseRequest, TakesARequestOfExactlyMaxBytes) {
  const std::string json = R"({"op":"ping"})";
  EXPECT_EQ(parse_request(json, json.size()).op, "ping");
}

// ---- parse_request: what it refuses, and with which message -------------------------------

TEST(ParseRequest, RefusesWhatIsNotJson) {
  for (const std::string json :
       {"", "not json", "{\"op\":", "{\"op\":\"x\"", "{'op':'x'}", "{\"op\":\"x\",}"}) {
    const std::string message = refusal(json);
    EXPECT_TRUE(message.starts_with("request is not valid JSON: ")) << json << " -> " << message;
  }
}

TEST(ParseRequest, RefusesAnArrayAsNotAnObject) {
  EXPECT_EQ(refusal(R"(["op","x"])"), "request must be a JSON object, not an array");
  EXPECT_EQ(refusal("[]"), "request must be a JSON object, not an array");
}

// A lone string, number, boolean or null is valid JSON (RFC 8259), just not an object.
TEST(ParseRequest, RefusesAScalarAsNotAnObject) {
  EXPECT_EQ(refusal(R"("op")"), "request must be a JSON object, not a string");
  EXPECT_EQ(refusal("42"), "request must be a JSON object, not a number");
  EXPECT_EQ(refusal("true"), "request must be a JSON object, not a boolean");
  EXPECT_EQ(refusal("null"), "request must be a JSON object, not null");
}

TEST(ParseRequest, RefusesAMissingEmptyOrMistypedOp) {
  EXPECT_EQ(refusal("{}"), "field \"op\" is missing");
  EXPECT_EQ(refusal(R"({"unit":"u"})"), "field \"op\" is missing");
  EXPECT_EQ(refusal(R"({"op":""})"), "field \"op\" is empty");
  EXPECT_EQ(refusal(R"({"op":7})"), "field \"op\" must be a string, not a number");
  EXPECT_EQ(refusal(R"({"op":1.5})"), "field \"op\" must be a string, not a number");
  EXPECT_EQ(refusal(R"({"op":true})"), "field \"op\" must be a string, not a boolean");
  EXPECT_EQ(refusal(R"({"op":null})"), "field \"op\" must be a string, not null");
  EXPECT_EQ(refusal(R"({"op":["x"]})"), "field \"op\" must be a string, not an array");
  EXPECT_EQ(refusal(R"({"op":{"x":"y"}})"), "field \"op\" must be a string, not an object");
}

TEST(ParseRequest, RefusesEachStringFieldGivenANumber) {
  for (const std::string field : {"unit", "slice", "max", "swap", "wait", "resource", "input"}) {
    EXPECT_EQ(refusal(R"({"op":"x",")" + field + R"(":1})"),
              "field \"" + field + "\" must be a string, not a number");
    EXPECT_EQ(refusal(R"({"op":"x",")" + field + R"(":false})"),
              "field \"" + field + "\" must be a string, not a boolean");
    EXPECT_EQ(refusal(R"({"op":"x",")" + field + R"(":null})"),
              "field \"" + field + "\" must be a string, not null");
  }
}

TEST(ParseRequest, RefusesArgsThatAreNotAnArray) {
  EXPECT_EQ(refusal(R"({"op":"x","args":"a b"})"),
            "field \"args\" must be an array of strings, not a string");
  EXPECT_EQ(refusal(R"({"op":"x","args":3})"),
            "field \"args\" must be an array of strings, not a number");
  EXPECT_EQ(refusal(R"({"op":"x","args":{"0":"a"}})"),
            "field \"args\" must be an array of strings, not an object");
  EXPECT_EQ(refusal(R"({"op":"x","args":null})"),
            "field \"args\" must be an array of strings, not null");
}

TEST(ParseRequest, RefusesAnArgThatIsNotAStringNamingItsIndex) {
  EXPECT_EQ(refusal(R"({"op":"x","args":[1]})"),
            "field \"args\"[0] must be a string, not a number");
  EXPECT_EQ(refusal(R"({"op":"x","args":["a","b",true]})"),
            "field \"args\"[2] must be a string, not a boolean");
  EXPECT_EQ(refusal(R"({"op":"x","args":["a",null]})"),
            "field \"args\"[1] must be a string, not null");
  EXPECT_EQ(refusal(R"({"op":"x","args":["a",["b"]]})"),
            "field \"args\"[1] must be a string, not an array");
  EXPECT_EQ(refusal(R"({"op":"x","args":["a",{}]})"),
            "field \"args\"[1] must be a string, not an object");
}

TEST(ParseRequest, RefusesAStreamThatIsNotABoolean) {
  EXPECT_EQ(refusal(R"({"op":"x","stream":"true"})"),
            "field \"stream\" must be a boolean, not a string");
  EXPECT_EQ(refusal(R"({"op":"x","stream":1})"),
            "field \"stream\" must be a boolean, not a number");
  EXPECT_EQ(refusal(R"({"op":"x","stream":null})"), "field \"stream\" must be a boolean, not null");
}

TEST(ParseRequest, RefusesInputThatIsNotBase64) {
  const std::string message =
      "field \"input\" is not base64 (Go's []byte encoding in JSON: standard alphabet, padded)";
  // Go's []byte is standard base64 with padding: what it refuses is refused here.
  const std::string long_valid(10000, 'A');
  for (const std::string &input :
       std::vector<std::string>{"!!!!", "aGVs!G8=", "aGVsbG8=!", "a\\u00e9bc", "*", "aGVsbG8",
                                long_valid + "!", long_valid + "AAA", "!" + long_valid}) {
    EXPECT_EQ(refusal(R"({"op":"x","input":")" + input + R"("})"), message)
        << input.substr(0, 20) << "... (" << input.size() << " characters)";
  }
}

// Whatever it refuses, it never takes part of the input for all of it.
TEST(ParseRequest, NeverTakesATruncatedInput) {
  const std::string valid(10000, 'A');  // 7500 zero bytes
  EXPECT_EQ(parse_request(R"({"op":"x","input":")" + valid + R"("})", kMax).input,
            std::string(7500, '\0'));
  try {
    const Request request = parse_request(R"({"op":"x","input":")" + valid + R"(!"})", kMax);
    ADD_FAILURE() << "accepted a corrupt input as " << request.input.size() << " bytes";
  } catch (const RequestError &) {
  }
}

TEST(ParseRequest, RefusesAnUnknownField) {
  EXPECT_EQ(refusal(R"({"op":"x","extra":"y"})"), "unknown field \"extra\"; " + kFieldList);
  EXPECT_EQ(refusal(R"({"Op":"x"})"), "unknown field \"Op\"; " + kFieldList);
  EXPECT_EQ(refusal(R"({"op":"x","stream ":true})"), "unknown field \"stream \"; " + kFieldList);
}

TEST(ParseRequest, RefusesNestingDeeperThanTheLimit) {
  // Four levels pass the depth check (and are refused for the element's type)...
  EXPECT_EQ(refusal(R"({"op":"x","args":[[[]]]})"),
            "field \"args\"[0] must be a string, not an array");
  // ... five do not, whichever brackets.
  EXPECT_EQ(refusal(R"({"op":"x","args":[[[[]]]]})"), kTooDeep);
  EXPECT_EQ(refusal(R"({"op":"x","unit":{"a":{"b":{"c":{}}}}})"), kTooDeep);
  EXPECT_EQ(refusal("[[[[[]]]]]"), kTooDeep);
}

TEST(ParseRequest, RefusesAHundredThousandOpenBracketsQuicklyWithoutRecursing) {
  for (const std::string &json :
       {std::string(100000, '['), R"({"op":"x","args":)" + std::string(100000, '['),
        std::string(50000, '[') + std::string(50000, ']')}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(refusal(json), kTooDeep);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
  // An object's first member needs a key: the second brace is wrong before it is deep.
  EXPECT_EQ(refusal(std::string(100000, '{')), "request is not valid JSON: syntax error at byte 1");
}

TEST(ParseRequest, RefusesAnOversizeRequestBeforeParsingIt) {
  const std::string json = R"({"op":"ping"})";
  EXPECT_EQ(refusal(json, json.size() - 1),
            "request of 13 bytes, more than the broker's max_request_bytes 12");
  // The size comes first: an oversize request is refused as such whatever it holds.
  EXPECT_EQ(refusal(std::string(100, '['), 10),
            "request of 100 bytes, more than the broker's max_request_bytes 10");
}

// ---- encode_request / parse_request --------------------------------------------------------

TEST(EncodeRequest, WritesOnlyWhatIsSet) {
  EXPECT_EQ(encode_request(op_only("ping")), R"({"op":"ping"})");
  Request streamed = op_only("watch");
  streamed.stream = true;
  EXPECT_EQ(encode_request(streamed), R"({"op":"watch","stream":true})");
}

TEST(EncodeRequest, RoundTripsEveryFieldWithBinaryInputAndUtf8Args) {
  Request request;
  request.op = "op-\xc3\xa9";
  request.unit = "unit \"quoted\"";
  request.slice = "slice\\back";
  request.max = "1G";
  request.swap = "0";
  request.args = {"",
                  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
                  "line\nbreak\ttab",
                  "\x01\x1f",
                  "[{\"json\":[1]}]",
                  "/slash/",
                  std::string(1000, 'x')};
  request.wait = "5s";
  request.resource = "res";
  request.input = all_bytes() + all_bytes();
  request.stream = true;
  const std::string json = encode_request(request);
  EXPECT_EQ(json.find('\n'), std::string::npos) << json;
  expect_same(parse_request(json, kMax), request);
}

TEST(EncodeRequest, RoundTripsLargeBinaryInputAsOneBase64Line) {
  Request request = op_only("x");
  for (int i = 0; i < 300000; ++i)
    request.input.push_back(static_cast<char>((i * 7 + i / 256) & 0xff));
  const std::string json = encode_request(request);
  EXPECT_EQ(json.find('\n'), std::string::npos);
  EXPECT_EQ(json.find('\r'), std::string::npos);
  EXPECT_EQ(parse_request(json, 2 * kMax).input, request.input);
}

TEST(EncodeRequest, RoundTripsEveryInputLengthModuloThree) {
  for (std::size_t length = 0; length < 10; ++length) {
    Request request = op_only("x");
    request.input = all_bytes().substr(250, length);
    EXPECT_EQ(parse_request(encode_request(request), kMax).input, request.input) << length;
  }
}

TEST(EncodeRequest, RoundTripsAnArgWithANulByte) {
  Request request = op_only("x");
  request.args = {"before\0after"s};
  EXPECT_EQ(parse_request(encode_request(request), kMax).args, request.args);
}

// ---- encode_frame ---------------------------------------------------------------------------

TEST(EncodeFrame, OmitsEmptyFields) {
  EXPECT_EQ(encode_frame(ReplyFrame{}), "{}");
  EXPECT_EQ(encode_frame(frame("", "", "", 0, true)), R"({"end":true})");
  EXPECT_EQ(encode_frame(frame("x")), R"({"out":"x"})");
  EXPECT_EQ(encode_frame(frame("", "e", "", 3)), R"({"err":"e","code":3})");
  EXPECT_EQ(encode_frame(frame("o", "e", "no", 2, true)),
            R"({"error":"no","out":"o","err":"e","code":2,"end":true})");
}

TEST(EncodeFrame, KeepsValidMultibyteUtf8AsIs) {
  const std::string text = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\xe2\x80\xa8";
  EXPECT_EQ(encode_frame(frame(text)), "{\"out\":\"" + text + "\"}");
}

// Each case: the bytes, and what they must come back as (U+FFFD per byte that does not
// start a valid sequence, as Go's encoding/json does).
struct Utf8Case {
  std::string name, bytes, expected;
};

std::vector<Utf8Case> utf8_cases() {
  const std::string r = kReplacement;
  return {
      {"overlong slash",
       "a\xc0\xaf"
       "b",
       "a" + r + r + "b"},
      {"overlong NUL", "\xc0\x80", r + r},
      {"overlong three bytes", "\xe0\x80\xaf", r + r + r},
      {"overlong four bytes", "\xf0\x80\x80\xaf", r + r + r + r},
      {"high surrogate", "\xed\xa0\x80", r + r + r},
      {"low surrogate", "x\xed\xbf\xbfy", "x" + r + r + r + "y"},
      {"past U+10FFFF", "\xf4\x90\x80\x80", r + r + r + r},
      {"truncated in the middle",
       "\xe2\x82"
       "A",
       r + r + "A"},
      {"truncated at the end", "ok\xf0\x9f\x98", "ok" + r + r + r},
      {"lone continuation", "\x80\xbf", r + r},
      {"0xff and 0xfe", "\xff\xfe", r + r},
      {"five-byte form", "\xf8\x88\x80\x80\x80", r + r + r + r + r},
      {"lead then ASCII", "\xc3(", r + "("},
      {"valid around invalid", "\xc3\xa9\xff\xe2\x82\xac", "\xc3\xa9" + r + "\xe2\x82\xac"},
  };
}

TEST(EncodeFrame, ReplacesInvalidUtf8ByteByByteInEveryTextField) {
  for (const auto &c : utf8_cases()) {
    const std::string json = encode_frame(frame(c.bytes, c.bytes, c.bytes));
    const ReplyFrame back = parse_frame(json);
    EXPECT_EQ(back.out, c.expected) << c.name << ": " << json;
    EXPECT_EQ(back.err, c.expected) << c.name;
    EXPECT_EQ(back.error, c.expected) << c.name;
  }
}

TEST(EncodeFrame, EscapesControlCharacters) {
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls.push_back(static_cast<char>(c));
  controls += "\x7f\"\\";
  const std::string json = encode_frame(frame(controls));
  for (char c : json) {
    EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "raw control byte in " << json;
  }
  EXPECT_NE(json.find("\\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\\\""), std::string::npos) << json;
  EXPECT_EQ(parse_frame(json).out, controls);
}

// ---- parse_frame ---------------------------------------------------------------------------

TEST(ParseFrame, RoundTripsEveryField) {
  const ReplyFrame sent = frame("out\n\xc3\xa9", "err\t", "refused \"x\"", 255, true);
  const ReplyFrame back = parse_frame(encode_frame(sent));
  EXPECT_EQ(back.out, sent.out);
  EXPECT_EQ(back.err, sent.err);
  EXPECT_EQ(back.error, sent.error);
  EXPECT_EQ(back.code, 255);
  EXPECT_TRUE(back.end);
  const ReplyFrame negative = parse_frame(encode_frame(frame("", "", "", -1)));
  EXPECT_EQ(negative.code, -1);
  EXPECT_FALSE(negative.end);
}

TEST(ParseFrame, RoundTripsAnEmptyFrameAndALargeChunk) {
  const ReplyFrame empty = parse_frame(encode_frame(ReplyFrame{}));
  EXPECT_TRUE(empty.out.empty() && empty.err.empty() && empty.error.empty());
  EXPECT_EQ(empty.code, 0);
  EXPECT_FALSE(empty.end);
  std::string chunk;
  for (std::size_t i = 0; i < kFrameChunk; ++i) chunk.push_back(static_cast<char>(0x20 + i % 95));
  EXPECT_EQ(parse_frame(encode_frame(frame(chunk))).out, chunk);
}

TEST(ParseFrame, RoundTripsANulByteInOutput) {
  const std::string out = "binary\0output\0"s;
  EXPECT_EQ(parse_frame(encode_frame(frame(out))).out, out);
}

TEST(ParseFrame, RefusesWhatIsNotAJsonObject) {
  EXPECT_TRUE(frame_refusal("nope").starts_with("reply frame is not valid JSON: "));
  EXPECT_TRUE(frame_refusal("").starts_with("reply frame is not valid JSON: "));
  EXPECT_EQ(frame_refusal("[1]"), "reply frame must be a JSON object, not an array");
}

TEST(ParseFrame, RefusesAScalarAsNotAnObject) {
  EXPECT_EQ(frame_refusal("\"out\""), "reply frame must be a JSON object, not a string");
  EXPECT_EQ(frame_refusal("0"), "reply frame must be a JSON object, not a number");
}

TEST(ParseFrame, RefusesFieldsOfTheWrongType) {
  const std::string prefix = "reply frame field \"";
  for (const std::string json :
       {R"({"code":"x"})", R"({"error":null})", R"({"out":5})", R"({"err":true})",
        R"({"out":{"a":1}})", R"({"error":["e"]})", R"({"code":"12"})", R"({"code":true})",
        R"({"code":1.5})", R"({"end":"yes"})", R"({"end":1})", R"({"code":4294967296})"}) {
    EXPECT_TRUE(frame_refusal(json).starts_with(prefix)) << json << " -> " << frame_refusal(json);
  }
}

// ---- the encoder's JSON read by other parsers ----------------------------------------------

struct Nasty {
  std::string bytes, expected;
};

// Every kind of trouble in one string: quotes, backslashes, slashes, control characters, a
// NUL, DEL, U+2028/9, multibyte and astral characters, and invalid UTF-8 of each kind.
Nasty nasty_string() {
  Nasty n;
  auto same = [&](const std::string &s) {
    n.bytes += s;
    n.expected += s;
  };
  auto replaced = [&](const std::string &s, int count) {
    n.bytes += s;
    for (int i = 0; i < count; ++i) n.expected += kReplacement;
  };
  same("plain \"quoted\" back\\slash /slash/ </script> ");
  same("\n\r\t\b\f\x01\x07\x0b\x1b\x1f\x7f");
  same("nul:"s + '\0' + ":");
  same("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x80\xa8\xe2\x80\xa9\xef\xbb\xbf\xef\xbf\xbd");
  replaced("\xc0\xaf", 2);
  replaced("\xe0\x80\xaf", 3);
  replaced("\xed\xa0\x80", 3);
  replaced("\xf4\x90\x80\x80", 4);
  replaced("\xff", 1);
  replaced("\x80", 1);
  replaced("\xe2\x82", 2);
  same("A");
  same("\\u0041 \\\" ");
  replaced("\xf0\x9f\x98", 3);
  return n;
}

TEST(EncodedJson, PocosParserReadsTheNastyStringBack) {
  const Nasty nasty = nasty_string();
  const std::string json = encode_frame(frame(nasty.bytes, "", "", 0, true));
  const auto object = Poco::JSON::Parser().parse(json).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(object->getValue<std::string>("out"), nasty.expected) << json;
  EXPECT_TRUE(object->getValue<bool>("end"));
  EXPECT_EQ(parse_frame(json).out, nasty.expected);
}

TEST(EncodedJson, PythonsJsonModuleReadsTheNastyStringBack) {
  const Nasty nasty = nasty_string();
  const std::string json = encode_frame(frame(nasty.bytes, "", "", 7, true));
  test::TempFile file(json, "frame.json");
  const UniqueFd in(::open(file.path().c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(in);
  test::ProcessOptions options;
  options.stdin_fd = in.get();
  options.timeout = std::chrono::seconds(30);
  // Strict UTF-8 and strict JSON (no raw control characters); lone surrogates would fail
  // the encode back to UTF-8.
  const auto result = test::run_process(
      {"/usr/bin/python3", "-c",
       "import json, sys\n"
       "frame = json.loads(sys.stdin.buffer.read().decode('utf-8', 'strict'), strict=True)\n"
       "assert sorted(frame) == ['code', 'end', 'out'], sorted(frame)\n"
       "assert frame['code'] == 7 and frame['end'] is True, frame\n"
       "sys.stdout.buffer.write(frame['out'].encode('utf-8', 'strict'))\n"},
      options);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, nasty.expected);
}

TEST(EncodedJson, PythonsJsonModuleReadsAnEncodedRequest) {
  Request request;
  request.op = "op";
  request.args = {"\xc3\xa9", "a\"b", "\x01", "x\xffy"};
  request.input = all_bytes();
  request.stream = true;
  test::TempFile file(encode_request(request), "request.json");
  const UniqueFd in(::open(file.path().c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(in);
  test::ProcessOptions options;
  options.stdin_fd = in.get();
  options.timeout = std::chrono::seconds(30);
  const auto result = test::run_process(
      {"/usr/bin/python3", "-c",
       "import base64, json, sys\n"
       "r = json.loads(sys.stdin.buffer.read().decode('utf-8', 'strict'))\n"
       "assert base64.b64decode(r['input'], validate=True) == bytes(range(256))\n"
       "assert r['stream'] is True\n"
       "print('|'.join(a.encode('unicode_escape').decode() for a in r['args']))\n"},
      options);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "\\xe9|a\"b|\\x01|x\\ufffdy\n");
}

}  // namespace
}  // namespace sandbox_host::broker
