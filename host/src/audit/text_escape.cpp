#include <sandbox_host/host/text_escape.hpp>

#include <array>
#include <cstddef>
#include <span>

namespace sandbox_host {
namespace {

// The valid UTF-8 sequence that starts bytes: its code point and length, or length 0 when
// the first byte starts none (a continuation byte, 0xC0, 0xC1, 0xF5..0xFF, an overlong form, a
// surrogate, a code point above U+10FFFF, or a sequence cut short).
struct Utf8Sequence {
  char32_t code_point = 0;
  std::size_t length = 0;
};

Utf8Sequence decode_utf8(std::string_view bytes) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  char32_t code_point = 0;
  // The second byte's range is narrower after these leads (RFC 3629, section 4).
  unsigned char second_low = 0x80, second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    if (lead == 0xE0) second_low = 0xA0;   // overlong
    if (lead == 0xED) second_high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    if (lead == 0xF0) second_low = 0x90;   // overlong
    if (lead == 0xF4) second_high = 0x8F;  // above U+10FFFF
  } else {
    return {};
  }
  if (bytes.size() < length) return {};
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char low = i == 1 ? second_low : 0x80;
    const unsigned char high = i == 1 ? second_high : 0xBF;
    if (byte(i) < low || byte(i) > high) return {};
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  return {code_point, length};
}

// What a terminal or a viewer acts on rather than shows.
bool is_control(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x2028 && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

// The escapes of a backslash and one character: the text form's, and JSON's.
struct NamedEscape {
  char32_t c;
  std::string_view text;
};
constexpr std::array<NamedEscape, 8> kTextEscapes{{{'\\', "\\\\"},
                                                   {'\a', "\\a"},
                                                   {'\b', "\\b"},
                                                   {'\t', "\\t"},
                                                   {'\n', "\\n"},
                                                   {'\v', "\\v"},
                                                   {'\f', "\\f"},
                                                   {'\r', "\\r"}}};
constexpr std::array<NamedEscape, 7> kJsonEscapes{{{'"', "\\\""},
                                                   {'\\', "\\\\"},
                                                   {'\b', "\\b"},
                                                   {'\f', "\\f"},
                                                   {'\n', "\\n"},
                                                   {'\r', "\\r"},
                                                   {'\t', "\\t"}}};

bool append_named(std::string &out, char32_t c, std::span<const NamedEscape> escapes) {
  for (const auto &escape : escapes) {
    if (escape.c == c) {
      out += escape.text;
      return true;
    }
  }
  return false;
}

void append_hex(std::string &out, std::string_view prefix, char32_t value, int digits) {
  constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

// bytes with each code point that escape(out, code point) writes an escape for replaced by
// it, and each byte outside valid UTF-8 by invalid(out, byte); everything else copied.
template <typename Escape, typename Invalid>
std::string escaped(std::string_view bytes, Escape escape, Invalid invalid) {
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    const Utf8Sequence sequence = decode_utf8(bytes);
    if (sequence.length == 0) {
      invalid(out, static_cast<unsigned char>(bytes.front()));
      bytes.remove_prefix(1);
      continue;
    }
    if (!escape(out, sequence.code_point)) out += bytes.substr(0, sequence.length);
    bytes.remove_prefix(sequence.length);
  }
  return out;
}

}  // namespace

std::string escape_text(std::string_view bytes) {
  const auto escape = [](std::string &out, char32_t c) {
    if (append_named(out, c, kTextEscapes)) return true;
    if (!is_control(c)) return false;
    if (c <= 0x7F) {
      append_hex(out, "\\x", c, 2);
    } else {
      append_hex(out, "\\u", c, 4);
    }
    return true;
  };
  return escaped(bytes, escape,
                 [](std::string &out, unsigned char b) { append_hex(out, "\\x", b, 2); });
}

std::string json_quoted(std::string_view bytes) {
  const auto escape = [](std::string &out, char32_t c) {
    if (append_named(out, c, kJsonEscapes)) return true;
    if (!is_control(c)) return false;
    append_hex(out, "\\u", c, 4);
    return true;
  };
  // The JSON string \\xNN reads back as the text \xNN.
  return "\"" +
         escaped(bytes, escape,
                 [](std::string &out, unsigned char b) { append_hex(out, "\\\\x", b, 2); }) +
         "\"";
}

}  // namespace sandbox_host
