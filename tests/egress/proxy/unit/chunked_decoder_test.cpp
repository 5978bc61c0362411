// The egress proxy's chunked-body decoder (http_message.hpp): bodies decoded whole, a byte at
// a time and in threes alike, extensions and trailers dropped, and every refusal final.
#include <sandbox_host/egress/proxy/http_message.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress {
namespace {

struct Decoded {
  std::string data;
  std::size_t used = 0;
  bool done = false;
  std::string error;
};

Decoded decode(std::string_view body, std::size_t piece = 0, const HttpLimits &limits = {}) {
  ChunkedDecoder decoder(limits);
  Decoded result;
  try {
    if (piece == 0) {
      result.used = decoder.feed(body, result.data);
    } else {
      for (std::size_t at = 0; at < body.size() && !decoder.done(); at += piece) {
        result.used += decoder.feed(body.substr(at, piece), result.data);
      }
    }
  } catch (const HttpParseError &e) {
    EXPECT_EQ(e.error().status, 400);
    EXPECT_STREQ(e.what(), e.error().reason.c_str());
    result.error = e.error().reason;
  }
  result.done = decoder.done();
  return result;
}

// Decoding at once, a byte at a time and in threes gives the same.
Decoded decode_every_way(std::string_view body, const HttpLimits &limits = {}) {
  const Decoded whole = decode(body, 0, limits);
  for (std::size_t piece : {1, 3}) {
    const Decoded pieces = decode(body, piece, limits);
    EXPECT_EQ(pieces.data, whole.data) << "in pieces of " << piece;
    EXPECT_EQ(pieces.error, whole.error) << "in pieces of " << piece;
    EXPECT_EQ(pieces.done, whole.done) << "in pieces of " << piece;
    if (whole.error.empty()) {
      EXPECT_EQ(pieces.used, whole.used) << "in pieces of " << piece;
    }
  }
  return whole;
}

TEST(ChunkedDecoder, DecodesChunksAndStopsAtTheEnd) {
  const std::string body = "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
  const Decoded d = decode_every_way(body + "GET / HTTP/1.1\r\n");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "hello world");
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.used, body.size());
}

TEST(ChunkedDecoder, DropsExtensionsAndTrailers) {
  const std::string body =
      "A;name=value;flag\r\n0123456789\r\n1 ; q=\"a b\"\r\n!\r\n0\r\nX-Sum: abc\r\nY: \r\n\r\n";
  const Decoded d = decode_every_way(body);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "0123456789!");
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.used, body.size());
}

TEST(ChunkedDecoder, HexDigitsEitherCaseAndLeadingZeros) {
  const std::string data(0x1F, 'z');
  const Decoded d = decode_every_way("0001f\r\n" + data + "\r\n00\r\n\r\n");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, data);
  EXPECT_TRUE(d.done);
  const Decoded upper = decode_every_way("1F\r\n" + data + "\r\n0\r\n\r\n");
  EXPECT_EQ(upper.data, data);
  EXPECT_TRUE(upper.done);
}

TEST(ChunkedDecoder, IsNotDoneBeforeTheTrailerEnds) {
  for (const std::string body :
       {"5\r\nhello\r\n", "5\r\nhello\r\n0\r\n", "5\r\nhel", "5\r\nhello\r\n0\r\nX: y\r\n"}) {
    const Decoded d = decode_every_way(body);
    EXPECT_EQ(d.error, "") << body;
    EXPECT_FALSE(d.done) << body;
    EXPECT_EQ(d.used, body.size()) << body;
  }
}

TEST(ChunkedDecoder, LargestSizeFits) {
  const Decoded d = decode_every_way("ffffffffffffffff\r\nabc");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "abc");
  EXPECT_FALSE(d.done);
}

TEST(ChunkedDecoder, SizeLineLimitCountsItsCrlf) {
  const std::string longest = "1;" + std::string(ChunkedDecoder::kMaxSizeLineBytes - 4, 'e');
  const Decoded d = decode_every_way(longest + "\r\nx\r\n0\r\n\r\n");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "x");
  EXPECT_EQ(decode_every_way(longest + "e\r\nx\r\n0\r\n\r\n").error,
            "chunk size line is longer than 4096 bytes");
}

TEST(ChunkedDecoder, RefusesBadFraming) {
  struct Case {
    std::string body, words;
  };
  for (const Case &c : std::vector<Case>{
           {"x\r\n", "chunk size is not a hexadecimal number"},
           {"\r\n", "chunk size is not a hexadecimal number"},
           {";ext\r\n", "chunk size is not a hexadecimal number"},
           {"-5\r\n", "chunk size is not a hexadecimal number"},
           {"0x5\r\n", "chunk size is followed by 'x', not a chunk extension"},
           {"5 \r\n", "whitespace after the chunk size"},
           {"5\t\r\n", "whitespace after the chunk size"},
           {"5;a\x01\r\n", "control byte 0x01 in a chunk extension"},
           {"10000000000000000\r\n", "chunk size does not fit in 64 bits"},
           {"5\nhello\r\n", "bare LF in a chunk size line"},
           {"5\r5\r\n", "bare CR in a chunk size line"},
           {"5\r\nhelloXX", "chunk data is not followed by CRLF"},
           {"5\r\nhello\n", "chunk data is not followed by CRLF"},
           {"5\r\nhello\r\r\n", "chunk data is not followed by CRLF"},
           {"0\r\n\n", "bare LF in the trailer section"},
           {"0\r\nX: y\n\r\n", "bare LF in the trailer section"},
           {"0\r\nX: y\rZ\r\n", "bare CR in the trailer section"},
           {"0\r\nno colon\r\n\r\n", "trailer field: header line without a colon"},
           {"0\r\nX: y\r\n z\r\n\r\n", "trailer field: header line starts with whitespace"},
           {"0\r\nX: a\x01\r\n\r\n", "trailer field: control byte 0x01"},
           {std::string(ChunkedDecoder::kMaxSizeLineBytes + 1, '0') + "\r\n",
            "chunk size line is longer than 4096 bytes"},
           {"1;" + std::string(ChunkedDecoder::kMaxSizeLineBytes, 'e'),
            "chunk size line is longer than 4096 bytes"},
       }) {
    SCOPED_TRACE(c.body.substr(0, 40));
    const Decoded d = decode_every_way(c.body);
    EXPECT_NE(d.error.find(c.words), std::string::npos) << "\"" << d.error << "\"";
    EXPECT_FALSE(d.done);
  }
}

TEST(ChunkedDecoder, HoldsTheTrailerToTheHeadLimits) {
  HttpLimits limits;
  limits.max_headers = 2;
  EXPECT_TRUE(decode_every_way("0\r\nA: 1\r\nB: 2\r\n\r\n", limits).done);
  EXPECT_EQ(decode_every_way("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits).error,
            "trailer section has more than 2 fields");
  limits.max_head_bytes = 16;
  EXPECT_TRUE(decode_every_way("0\r\nA: 1\r\nB: 2\r\n\r\n", limits).done);
  EXPECT_EQ(decode_every_way("0\r\nA: 1\r\nB: 2222\r\n\r\n", limits).error,
            "trailer section is longer than 16 bytes");
  EXPECT_EQ(decode_every_way("0\r\nA: 123456789012345\r\n\r\n", limits).error,
            "trailer section is longer than 16 bytes");
}

TEST(ChunkedDecoder, FailureIsFinal) {
  ChunkedDecoder decoder;
  std::string out;
  EXPECT_THROW(decoder.feed("zz\r\n", out), HttpParseError);
  EXPECT_THROW(decoder.feed("5\r\nhello\r\n", out), HttpParseError);
  EXPECT_THROW(decoder.feed("", out), HttpParseError);
  EXPECT_EQ(out, "");
  EXPECT_FALSE(decoder.done());
}

TEST(ChunkedDecoder, TakesNothingOnceDone) {
  ChunkedDecoder decoder;
  std::string out;
  EXPECT_EQ(decoder.feed("0\r\n\r\n", out), 5u);
  ASSERT_TRUE(decoder.done());
  EXPECT_EQ(decoder.feed("3\r\nabc\r\n", out), 0u);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace sandbox_host::egress
