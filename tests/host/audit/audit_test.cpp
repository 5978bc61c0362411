#include "fixtures.hpp"

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/host/text_escape.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {
namespace {

const AuditRecord kRecord{"spec", "git", "spec-BinaryPath", "launch \"bin/git\"\nsecond line",
                          "use an absolute path"};

TEST(Audit, TextIsOneLineForPeople) {
  EXPECT_EQ(format_text(kRecord),
            "sandbox-host: refused: spec plugin=git rule=spec-BinaryPath: launch \"bin/git\"\\n"
            "second line (hint: use an absolute path)\n");
}

TEST(Audit, JsonIsOneObjectPerLineForMachines) {
  std::string line = format_json(kRecord);
  ASSERT_EQ(line.find('\n'), line.size() - 1);
  auto object = Poco::JSON::Parser().parse(line).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(object->getValue<std::string>("component"), "spec");
  EXPECT_EQ(object->getValue<std::string>("plugin"), "git");
  EXPECT_EQ(object->getValue<std::string>("rule"), "spec-BinaryPath");
  EXPECT_EQ(object->getValue<std::string>("attempted"), "launch \"bin/git\"\nsecond line");
  EXPECT_EQ(object->getValue<std::string>("hint"), "use an absolute path");
  EXPECT_GT(object->getValue<long long>("time_ms"), 0);
}

// Every field of a record, each of which may carry a hostile client's text.
constexpr std::array<std::pair<const char *, std::string AuditRecord::*>, 5> kFields{{
    {"component", &AuditRecord::component},
    {"plugin", &AuditRecord::plugin},
    {"rule", &AuditRecord::rule},
    {"attempted", &AuditRecord::attempted},
    {"hint", &AuditRecord::hint},
}};

std::string hex_escape(unsigned value, const char *prefix, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "%s%0*x", prefix, digits, value);
  return text;
}

// What one byte on its own (so never valid UTF-8 when >= 0x80) shows as in a text record.
std::string shown_alone(unsigned char byte) {
  switch (byte) {
    case '\\':
      return "\\\\";
    case '\a':
      return "\\a";
    case '\b':
      return "\\b";
    case '\t':
      return "\\t";
    case '\n':
      return "\\n";
    case '\v':
      return "\\v";
    case '\f':
      return "\\f";
    case '\r':
      return "\\r";
    default:
      break;
  }
  if (byte >= 0x20 && byte < 0x7f) return std::string(1, static_cast<char>(byte));
  return hex_escape(byte, "\\x", 2);
}

std::string text_line(const AuditRecord &r) {
  return "sandbox-host: refused: " + r.component + " plugin=" + r.plugin + " rule=" + r.rule +
         ": " + r.attempted + " (hint: " + r.hint + ")\n";
}

bool printable_ascii_line(const std::string &line) {
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || c >= 0x7f) return false;
  }
  return !line.empty() && line.back() == '\n';
}

std::string utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

boost::json::object parsed(const std::string &line) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(line, ec);
  if (ec || !value.is_object()) {
    ADD_FAILURE() << "not one JSON object (" << ec.message() << "): " << line;
    return {};
  }
  return value.get_object();
}

TEST(Audit, TextShowsEveryByteOfEveryFieldAsAnEscapeOrItself) {
  for (const auto &[name, field] : kFields) {
    for (int b = 0; b < 256; ++b) {
      const auto byte = static_cast<unsigned char>(b);
      AuditRecord record{"c", "p", "r", "a", "h"};
      record.*field = std::string("<") + static_cast<char>(byte) + ">";
      AuditRecord shown = record;
      shown.*field = "<" + shown_alone(byte) + ">";
      const std::string line = format_text(record);
      EXPECT_EQ(line, text_line(shown)) << name << " holds byte " << b;
      EXPECT_TRUE(printable_ascii_line(line)) << name << " holds byte " << b << ": " << line;
    }
  }
}

TEST(Audit, JsonStaysOneValidLineWhateverByteAFieldHolds) {
  for (const auto &[name, field] : kFields) {
    for (int b = 0; b < 256; ++b) {
      const auto byte = static_cast<unsigned char>(b);
      AuditRecord record{"c", "p", "r", "a", "h"};
      record.*field = std::string("<") + static_cast<char>(byte) + ">";
      const std::string line = format_json(record);
      ASSERT_TRUE(printable_ascii_line(line)) << name << " holds byte " << b << ": " << line;
      const boost::json::object object = parsed(line);
      for (const auto &[other, other_field] : kFields) {
        const auto *value = object.if_contains(other);
        ASSERT_TRUE(value != nullptr && value->is_string()) << other << " in " << line;
        // Text reads back as it was; a byte that is no UTF-8 as the \xNN of the text form.
        const std::string expected = other_field != field ? record.*other_field
                                     : byte < 0x80        ? record.*field
                                                          : "<" + hex_escape(byte, "\\x", 2) + ">";
        EXPECT_EQ(std::string(value->get_string()), expected) << other << " in " << line;
      }
    }
  }
}

TEST(Audit, TextKeepsUtf8AndEscapesC1InvalidUtf8BidiAndTheBackslash) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"grüße, 日本語, 🙂 \xc2\xa0 \xef\xbf\xbd \xf4\x8f\xbf\xbf",
       "grüße, 日本語, 🙂 \xc2\xa0 \xef\xbf\xbd \xf4\x8f\xbf\xbf"},
      {"ping\x1b[2K\x1b[1Gforged", "ping\\x1b[2K\\x1b[1Gforged"},
      // The backslash itself: text that spells an escape cannot pass for one.
      {"ping\\x1b[2K", "ping\\\\x1b[2K"},
      // C1 controls as UTF-8: U+009B is CSI to some terminals, U+0085 a new line.
      {"\xc2\x9b"
       "2K",
       "\\u009b2K"},
      {"\xc2\x80 \xc2\x85 \xc2\x9f", "\\u0080 \\u0085 \\u009f"},
      // Not UTF-8: a lone continuation byte (8-bit CSI), overlong forms, a surrogate, above
      // U+10FFFF, bytes no sequence starts with, a sequence cut short.
      {"\x9b"
       "2K",
       "\\x9b2K"},
      {"\xc0\xaf \xc1\xbf \xe0\x80\xaf \xf0\x80\x80\xaf",
       "\\xc0\\xaf \\xc1\\xbf \\xe0\\x80\\xaf "
       "\\xf0\\x80\\x80\\xaf"},
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      {"\xf5\x80 \xfe \xff", "\\xf5\\x80 \\xfe \\xff"},
      {"\xe6\x97", "\\xe6\\x97"},
      {"\xe6\x97x\xe6\x97\xa5", "\\xe6\\x97x日"},
      // Bidi embeddings, overrides and isolates reorder the rest of the line as shown; the
      // line and paragraph separators start a new one in some viewers.
      {"a\xe2\x80\xae"
       "b",
       "a\\u202eb"},
      {"\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", "\\u202a\\u202b\\u202c\\u202d"},
      {"\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "\\u2066\\u2067\\u2068\\u2069"},
      {"\xe2\x80\xa8\xe2\x80\xa9", "\\u2028\\u2029"},
  };
  for (const auto &[bytes, shown] : cases) {
    EXPECT_EQ(escape_text(bytes), shown);
    for (const auto &[name, field] : kFields) {
      AuditRecord record{"c", "p", "r", "a", "h"};
      record.*field = bytes;
      AuditRecord expected = record;
      expected.*field = shown;
      EXPECT_EQ(format_text(record), text_line(expected)) << name;
    }
  }
}

// The code points a record shows as \uNNNN rather than as themselves.
bool escaped_code_point(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

TEST(Audit, EveryCodePointAboveAsciiIsKeptOrEscapedWhole) {
  for (char32_t c = 0x80; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const std::string shown = escape_text(utf8(c));
    if (escaped_code_point(c)) {
      ASSERT_EQ(shown, hex_escape(c, "\\u", 4)) << std::hex << static_cast<unsigned>(c);
    } else {
      ASSERT_EQ(shown, utf8(c)) << std::hex << static_cast<unsigned>(c);
    }
  }
}

TEST(Audit, JsonReadsBackEveryValidCodePoint) {
  std::string text;
  const auto check = [&] {
    AuditRecord record{"c", "p", "r", text, "h"};
    const std::string line = format_json(record);
    ASSERT_EQ(line.find('\n'), line.size() - 1);
    for (const char *raw : {"\x1b", "\x7f", "\xc2\x9b", "\xe2\x80\xae", "\xe2\x80\xa8"}) {
      ASSERT_EQ(line.find(raw), std::string::npos) << "a raw control in " << line.substr(0, 80);
    }
    const boost::json::object object = parsed(line);
    const auto *attempted = object.if_contains("attempted");
    ASSERT_TRUE(attempted != nullptr && attempted->is_string());
    ASSERT_EQ(std::string(attempted->get_string()), text);
    text.clear();
  };
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    text += utf8(c);
    if (text.size() >= 16384) check();
  }
  check();
}

TEST(Audit, ARefusedSpecIsRecorded) {
  test::AuditCapture audit;
  Host host(audit.apply(test::test_config({"off"}, {})));
  sandboxtest::TempSpec t("git", REPORT_PLUGIN);
  t.spec.binary_path = "bin/git";
  EXPECT_THROW(host.command(t.spec, "off"), SpecError);
  auto records = audit.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("component"), "spec");
  EXPECT_EQ(records[0].at("plugin"), "git");
  EXPECT_EQ(records[0].at("rule"), "spec-BinaryPath");
  EXPECT_EQ(records[0].at("attempted"),
            "plugin \"git\": spec BinaryPath: \"bin/git\" is not an absolute path");
}

// A client that makes the host refuse it in a loop gets kAuditBurst records a minute for
// each plugin and rule; the rest are counted in one record, written when the sink closes at
// the latest. Records of what was let through are never held back.
TEST(Audit, RefusalsPastTheBurstAreCountedInOneRecord) {
  test::AuditCapture audit;
  const Config config = audit.apply(test::test_config({"off"}, {}));
  {
    AuditSink sink(AuditFormat::json, config.audit_path);
    for (int i = 0; i < 250; ++i) {
      sink.record({"launcher", "a", "launcher-sandboxed-peer", "try " + std::to_string(i), ""});
      sink.record({"launcher", "b", "launcher-sandboxed-peer", "try " + std::to_string(i), ""});
      sink.record({"launcher", "a", "launcher-request", "bad " + std::to_string(i), ""});
      sink.record({"launcher", "a", "launcher-launch", "ran " + std::to_string(i), "", false});
    }
  }
  std::map<std::string, int> written;
  std::vector<std::map<std::string, std::string>> counts;
  for (const auto &record : audit.records()) {
    if (record.at("attempted").find("more refusals of this rule") != std::string::npos) {
      counts.push_back(record);
    } else {
      ++written[record.at("plugin") + " " + record.at("rule")];
    }
  }
  EXPECT_EQ(written["a launcher-sandboxed-peer"], static_cast<int>(kAuditBurst));
  EXPECT_EQ(written["b launcher-sandboxed-peer"], static_cast<int>(kAuditBurst));
  EXPECT_EQ(written["a launcher-request"], static_cast<int>(kAuditBurst));
  EXPECT_EQ(written["a launcher-launch"], 250);
  ASSERT_EQ(counts.size(), 3u);
  std::set<std::string> counted;
  for (const auto &count : counts) {
    counted.insert(count.at("plugin") + " " + count.at("rule"));
    EXPECT_TRUE(count.at("attempted").starts_with(std::to_string(250 - kAuditBurst) + " more"))
        << count.at("attempted");
  }
  EXPECT_EQ(counted, (std::set<std::string>{"a launcher-sandboxed-peer",
                                            "b launcher-sandboxed-peer", "a launcher-request"}));
}

// Names a client chose cannot grow the sink's memory without bound: past 1,024 plugins a
// rule's refusals share one bound, and none goes uncounted.
TEST(Audit, ManyPluginNamesShareOneBoundAndAreStillCounted) {
  test::AuditCapture audit;
  const Config config = audit.apply(test::test_config({"off"}, {}));
  constexpr int kNames = 3000;
  {
    AuditSink sink(AuditFormat::json, config.audit_path);
    for (int i = 0; i < kNames; ++i) {
      sink.record({"broker", "p" + std::to_string(i), "request-busy", "flood", ""});
    }
  }
  std::uint64_t total = 0;
  for (const auto &record : audit.records()) {
    const std::string &attempted = record.at("attempted");
    total += attempted == "flood" ? 1 : std::stoull(attempted.substr(0, attempted.find(' ')));
  }
  EXPECT_EQ(total, static_cast<std::uint64_t>(kNames));
  EXPECT_LE(audit.records().size(), 1024u + kAuditBurst + 1);
}

}  // namespace
}  // namespace sandbox_host
