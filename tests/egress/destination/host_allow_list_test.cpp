// The allow list (host_allow_list.hpp): host names normalised (case, trailing dot, IDN,
// IP literals), the DNS name rules with their messages, and the list's exact, wildcard,
// port and IP-literal entries, with every bad entry refused by a message naming it.
#include <sandbox_host/egress/destination/host_allow_list.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::egress {
namespace {

// The message normalize_host_name refuses host with, or "(accepted: <name>)".
std::string name_refusal(std::string_view host) {
  try {
    return "(accepted: " + normalize_host_name(host) + ")";
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
}

std::string entry_refusal(const std::vector<std::string> &entries) {
  try {
    HostAllowList::parse(entries);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "(accepted)";
}

// The rule of a decision, marked with whether it allowed.
std::string decision(const HostAllowList &list, std::string_view host, std::uint16_t port) {
  const AllowDecision decided = list.decide(host, port);
  return (decided.allowed ? "allowed by " : "refused: ") + decided.rule;
}

// ---- normalize_host_name ------------------------------------------------------------------

TEST(NormalizeHostName, LowercasesAndDropsOneTrailingDot) {
  EXPECT_EQ(normalize_host_name("GitHub.COM"), "github.com");
  EXPECT_EQ(normalize_host_name("github.com."), "github.com");
  EXPECT_EQ(normalize_host_name("API.GitHub.com."), "api.github.com");
  EXPECT_EQ(normalize_host_name("localhost"), "localhost");
  EXPECT_EQ(name_refusal("github.com.."), "host name \"github.com..\" has an empty label");
}

TEST(NormalizeHostName, TakesUnderscoresDigitsAndInnerHyphens) {
  EXPECT_EQ(normalize_host_name("_acme-challenge.my_host.example"),
            "_acme-challenge.my_host.example");
  EXPECT_EQ(normalize_host_name("a-b--c.1x.example"), "a-b--c.1x.example");
  EXPECT_EQ(normalize_host_name("123.example.com"), "123.example.com");
  EXPECT_EQ(normalize_host_name("x"), "x");
}

TEST(NormalizeHostName, WritesInternationalNamesInPunycode) {
  EXPECT_EQ(normalize_host_name("bücher.example"), "xn--bcher-kva.example");
  EXPECT_EQ(normalize_host_name("BÜCHER.Example."), "xn--bcher-kva.example");
  EXPECT_EQ(normalize_host_name("xn--bcher-kva.example"), "xn--bcher-kva.example");
  EXPECT_EQ(normalize_host_name("XN--BCHER-KVA.example"), "xn--bcher-kva.example");
  // UTS #46 maps the ideographic full stop to a dot, as browsers do.
  EXPECT_EQ(normalize_host_name("bücher\u3002example"), "xn--bcher-kva.example");
  // Nontransitional, as curl and today's browsers: ß stays ß.
  EXPECT_EQ(normalize_host_name("faß.de"), "xn--fa-hia.de");
  EXPECT_EQ(normalize_host_name("my_host.bücher.example"), "my_host.xn--bcher-kva.example");
}

TEST(NormalizeHostName, RefusesBadInternationalNames) {
  EXPECT_EQ(name_refusal("xn--zzzz.example"),
            "host name \"xn--zzzz.example\" is not a valid internationalised name: string "
            "contains invalid punycode data");
  EXPECT_EQ(name_refusal("b\xfc"
                         "cher.example"),
            "host name \"b\xfc"
            "cher.example\" is not a valid internationalised name: string "
            "encoding error");
}

TEST(NormalizeHostName, MakesIpLiteralsCanonical) {
  EXPECT_EQ(normalize_host_name("127.1"), "127.0.0.1");
  EXPECT_EQ(normalize_host_name("0x7f.0.0.1"), "127.0.0.1");
  EXPECT_EQ(normalize_host_name("[::1]"), "::1");
  EXPECT_EQ(normalize_host_name("[FE80::1%25eth0]"), "fe80::1");
  // Fullwidth digits and dots are mapped to ASCII: an address in disguise.
  EXPECT_EQ(normalize_host_name("\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11"),
            "127.0.0.1");
}

TEST(NormalizeHostName, RefusesWhatNoDnsNameIs) {
  const std::string label64(64, 'a');
  const std::string label63(63, 'a');
  const std::string long_name = label63 + "." + label63 + "." + label63 + "." + label63;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "host name \"\" is empty"},
      {".", "host name \".\" has no labels"},
      {"a..b", "host name \"a..b\" has an empty label"},
      {".example.com", "host name \".example.com\" has an empty label"},
      {"-a.example", "host name \"-a.example\" has a label that starts with a hyphen: \"-a\""},
      {"a-.example", "host name \"a-.example\" has a label that ends with a hyphen: \"a-\""},
      {label64 + ".example", "host name \"" + label64 +
                                 ".example\" has a label of 64 characters, more than 63: \"" +
                                 label64 + "\""},
      {long_name, "host name \"" + long_name + "\" is 255 characters long, more than 253"},
      {"a b.example",
       "host name \"a b.example\" has a character no host name carries: \" \" (names are "
       "letters, digits, hyphens and underscores)"},
      {"a/b.example",
       "host name \"a/b.example\" has a character no host name carries: \"/\" (names are "
       "letters, digits, hyphens and underscores)"},
      {"evil.example\r\nX-Injected: 1",
       "host name \"evil.example\\x0d\\x0aX-Injected: 1\" has a character no host name "
       "carries: \"\\x0d\" (names are letters, digits, hyphens and underscores)"},
      {std::string("b\xc3\xbc\0.evil.example", 17),
       "host name \"b\xc3\xbc\\x00.evil.example\" has a character no host name carries: "
       "\"\\x00\" (names are letters, digits, hyphens and underscores)"},
      {"1.2.3.256", "host name \"1.2.3.256\" ends in a number but is not an IPv4 address"},
      {"example.123", "host name \"example.123\" ends in a number but is not an IPv4 address"},
      {"example.0x1f", "host name \"example.0x1f\" ends in a number but is not an IPv4 address"},
      {"example.0x", "host name \"example.0x\" ends in a number but is not an IPv4 address"},
      {"08.0.0.1", "host name \"08.0.0.1\" ends in a number but is not an IPv4 address"},
      {"[github.com]",
       "host name \"[github.com]\" has a character no host name carries: \"[\" (names are "
       "letters, digits, hyphens and underscores)"},
      {"github.com:443",
       "host name \"github.com:443\" has a character no host name carries: \":\" (names are "
       "letters, digits, hyphens and underscores)"},
  };
  for (const auto &[host, message] : cases) {
    SCOPED_TRACE(host);
    EXPECT_EQ(name_refusal(host), message);
  }
}

TEST(NormalizeHostName, TakesTheLongestNameAndRefusesHugeInput) {
  const std::string label63(63, 'a');
  const std::string longest = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
  ASSERT_EQ(longest.size(), 253u);
  EXPECT_EQ(normalize_host_name(longest + "."), longest);
  const std::string huge(5000, 'a');
  const std::string message = name_refusal(huge);
  EXPECT_NE(message.find("is 5000 bytes long; a host name has at most 253 characters"),
            std::string::npos)
      << message;
  EXPECT_LT(message.size(), 400u) << "the message quotes the whole input";
}

// ---- HostAllowList: what entries allow ----------------------------------------------------

TEST(HostAllowList, ExactEntryAllowsThatHostOnPorts80And443) {
  const auto list = HostAllowList::parse({"github.com"});
  EXPECT_EQ(decision(list, "github.com", 443), "allowed by github.com");
  EXPECT_EQ(decision(list, "github.com", 80), "allowed by github.com");
  EXPECT_EQ(decision(list, "github.com", 8080),
            "refused: port 8080 is not allowed for github.com (entry github.com allows 80, 443)");
  EXPECT_EQ(decision(list, "api.github.com", 443), "refused: no entry for api.github.com");
  EXPECT_EQ(decision(list, "github.com.evil.example", 443),
            "refused: no entry for github.com.evil.example");
  EXPECT_EQ(decision(list, "notgithub.com", 443), "refused: no entry for notgithub.com");
  EXPECT_EQ(decision(list, "example.org", 443), "refused: no entry for example.org");
}

TEST(HostAllowList, WildcardAllowsSubdomainsAtAnyDepthButNeverTheApex) {
  const auto list = HostAllowList::parse({"*.github.com"});
  EXPECT_EQ(decision(list, "api.github.com", 443), "allowed by *.github.com");
  EXPECT_EQ(decision(list, "a.b.c.github.com", 80), "allowed by *.github.com");
  EXPECT_EQ(decision(list, "github.com", 443), "refused: no entry for github.com");
  EXPECT_EQ(decision(list, "xgithub.com", 443), "refused: no entry for xgithub.com");
  EXPECT_EQ(decision(list, "api.github.com.evil.example", 443),
            "refused: no entry for api.github.com.evil.example");
  EXPECT_EQ(decision(list, "api.github.com", 22),
            "refused: port 22 is not allowed for api.github.com (entry *.github.com allows 80, "
            "443)");
}

TEST(HostAllowList, ApexAndWildcardTogether) {
  const auto list = HostAllowList::parse({"github.com", "*.github.com"});
  EXPECT_EQ(decision(list, "github.com", 443), "allowed by github.com");
  EXPECT_EQ(decision(list, "codeload.github.com", 443), "allowed by *.github.com");
}

TEST(HostAllowList, ComparesWithoutCaseOrTrailingDot) {
  const auto list = HostAllowList::parse({"GitHub.com.", "*.Example.ORG"});
  EXPECT_EQ(decision(list, "GITHUB.COM", 443), "allowed by GitHub.com.");
  EXPECT_EQ(decision(list, "github.com.", 443), "allowed by GitHub.com.");
  EXPECT_EQ(decision(list, "WWW.example.org.", 443), "allowed by *.Example.ORG");
  EXPECT_EQ(decision(list, "github.com..", 443),
            "refused: host name \"github.com..\" has an empty label");
}

TEST(HostAllowList, ComparesInternationalNamesAsPunycode) {
  const auto unicode_entry = HostAllowList::parse({"bücher.example", "*.café.example"});
  EXPECT_EQ(decision(unicode_entry, "xn--bcher-kva.example", 443), "allowed by bücher.example");
  EXPECT_EQ(decision(unicode_entry, "BÜCHER.example", 443), "allowed by bücher.example");
  EXPECT_EQ(decision(unicode_entry, "www.xn--caf-dma.example", 443), "allowed by *.café.example");
  EXPECT_EQ(decision(unicode_entry, "bucher.example", 443), "refused: no entry for bucher.example");

  const auto punycode_entry = HostAllowList::parse({"xn--bcher-kva.example"});
  EXPECT_EQ(decision(punycode_entry, "bücher.example", 443), "allowed by xn--bcher-kva.example");
}

TEST(HostAllowList, EntryPortsReplaceTheDefaults) {
  const auto list = HostAllowList::parse({"github.com:443", "*.example.com:443,8443"});
  EXPECT_EQ(decision(list, "github.com", 443), "allowed by github.com:443");
  EXPECT_EQ(decision(list, "github.com", 80),
            "refused: port 80 is not allowed for github.com (entry github.com:443 allows 443)");
  EXPECT_EQ(decision(list, "a.example.com", 8443), "allowed by *.example.com:443,8443");
  EXPECT_EQ(decision(list, "a.example.com", 80),
            "refused: port 80 is not allowed for a.example.com (entry *.example.com:443,8443 "
            "allows 443, 8443)");
}

TEST(HostAllowList, EntriesForOneHostEachAllowTheirPorts) {
  const auto list = HostAllowList::parse({"github.com:8443,443", "github.com:22"});
  EXPECT_EQ(decision(list, "github.com", 22), "allowed by github.com:22");
  EXPECT_EQ(decision(list, "github.com", 443), "allowed by github.com:8443,443");
  EXPECT_EQ(decision(list, "github.com", 80),
            "refused: port 80 is not allowed for github.com (entry github.com:8443,443 allows "
            "443, 8443; entry github.com:22 allows 22)");
}

TEST(HostAllowList, ExactEntryWithOtherPortsLeavesTheWildcard) {
  const auto list = HostAllowList::parse({"api.github.com:8443", "*.github.com"});
  EXPECT_EQ(decision(list, "api.github.com", 8443), "allowed by api.github.com:8443");
  EXPECT_EQ(decision(list, "api.github.com", 443), "allowed by *.github.com");
  // The nearest rule for the host explains a refusal.
  EXPECT_EQ(decision(list, "api.github.com", 22),
            "refused: port 22 is not allowed for api.github.com (entry api.github.com:8443 allows "
            "8443)");
}

TEST(HostAllowList, IpEntriesCompareOnTheCanonicalAddress) {
  const auto list = HostAllowList::parse({"127.0.0.1:8443", "[::1]:8443", "10.0.0.1", "::2"});
  for (const std::string host : {"127.0.0.1", "127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433"}) {
    SCOPED_TRACE(host);
    EXPECT_EQ(decision(list, host, 8443), "allowed by 127.0.0.1:8443");
  }
  EXPECT_EQ(decision(list, "127.0.0.1", 443),
            "refused: port 443 is not allowed for 127.0.0.1 (entry 127.0.0.1:8443 allows 8443)");
  EXPECT_EQ(decision(list, "[::1]", 8443), "allowed by [::1]:8443");
  EXPECT_EQ(decision(list, "0:0::1", 8443), "allowed by [::1]:8443");
  EXPECT_EQ(decision(list, "10.0.0.1", 443), "allowed by 10.0.0.1");
  EXPECT_EQ(decision(list, "[::2]", 80), "allowed by ::2");
  EXPECT_EQ(decision(list, "127.0.0.2", 8443), "refused: no entry for 127.0.0.2");
  // Another spelling of another address is no match for any entry.
  EXPECT_EQ(decision(list, "::ffff:127.0.0.1", 8443), "refused: no entry for ::ffff:127.0.0.1");
}

TEST(HostAllowList, IpEntryWrittenLooselyIsCanonicalToo) {
  const auto list = HostAllowList::parse({"0x7f.1:8443", "[0:0:0:0:0:0:0:1]"});
  EXPECT_EQ(decision(list, "127.0.0.1", 8443), "allowed by 0x7f.1:8443");
  EXPECT_EQ(decision(list, "::1", 443), "allowed by [0:0:0:0:0:0:0:1]");
}

TEST(HostAllowList, WildcardNeverMatchesAnAddress) {
  const auto list = HostAllowList::parse({"*.example"});
  EXPECT_EQ(decision(list, "127.0.0.1", 443), "refused: no entry for 127.0.0.1");
}

TEST(HostAllowList, RefusesABadHostWithItsReason) {
  const auto list = HostAllowList::parse({"github.com"});
  EXPECT_EQ(decision(list, "git hub.com", 443),
            "refused: host name \"git hub.com\" has a character no host name carries: \" \" "
            "(names are letters, digits, hyphens and underscores)");
  EXPECT_EQ(decision(list, "", 443), "refused: host name \"\" is empty");
}

TEST(HostAllowList, EmptyListAllowsNothing) {
  const auto list = HostAllowList::parse({});
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(decision(list, "github.com", 443),
            "refused: no entry for github.com (the allow list is empty)");
  EXPECT_FALSE(HostAllowList::parse({"*.github.com"}).empty());
  EXPECT_FALSE(HostAllowList::parse({"127.0.0.1"}).empty());
}

// ---- HostAllowList: bad entries -----------------------------------------------------------

TEST(HostAllowList, RefusesBadEntriesNamingThem) {
  const std::string label64(64, 'a');
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "allow list entry 1 \"\": is empty"},
      {"*", "allow list entry 1 \"*\": \"*\" alone would allow every host; list them"},
      {"*:443", "allow list entry 1 \"*:443\": \"*\" alone would allow every host; list them"},
      {"*foo.com",
       "allow list entry 1 \"*foo.com\": a \"*\" stands only for the subdomains of a name, as "
       "the first label of \"*.example.com\""},
      {"foo.*.com",
       "allow list entry 1 \"foo.*.com\": a \"*\" stands only for the subdomains of a name, as "
       "the first label of \"*.example.com\""},
      {"*.*.com",
       "allow list entry 1 \"*.*.com\": a \"*\" stands only for the subdomains of a name, as "
       "the first label of \"*.example.com\""},
      {"*.", "allow list entry 1 \"*.\": host name \"\" is empty"},
      {"github.com:", "allow list entry 1 \"github.com:\": has an empty port"},
      {"github.com:443,", "allow list entry 1 \"github.com:443,\": has an empty port"},
      {"github.com:,443", "allow list entry 1 \"github.com:,443\": has an empty port"},
      {"github.com:0", "allow list entry 1 \"github.com:0\": port 0 is not between 1 and 65535"},
      {"github.com:65536",
       "allow list entry 1 \"github.com:65536\": port 65536 is not between 1 and 65535"},
      {"github.com:99999999999999999999",
       "allow list entry 1 \"github.com:99999999999999999999\": port 99999999999999999999 is "
       "not between 1 and 65535"},
      {"github.com:http", "allow list entry 1 \"github.com:http\": port \"http\" is not a number"},
      {"github.com:+443", "allow list entry 1 \"github.com:+443\": port \"+443\" is not a number"},
      {"github.com: 443", "allow list entry 1 \"github.com: 443\": port \" 443\" is not a number"},
      {"github.com:443:8443",
       "allow list entry 1 \"github.com:443:8443\": port \"443:8443\" is not a number"},
      {label64 + ".example",
       "allow list entry 1 \"" + label64 + ".example\": host name \"" + label64 +
           ".example\" has a label of 64 characters, more than 63: \"" + label64 + "\""},
      {"foo..com:443",
       "allow list entry 1 \"foo..com:443\": host name \"foo..com\" has an empty label"},
      {"github.com ",
       "allow list entry 1 \"github.com \": host name \"github.com \" has a character no host "
       "name carries: \" \" (names are letters, digits, hyphens and underscores)"},
      {"https://github.com",
       "allow list entry 1 \"https://github.com\": is a URL; an entry is a host name or an IP "
       "address, with :ports"},
      {"[::1", "allow list entry 1 \"[::1\": has a \"[\" without \"]\""},
      {"[::1]443",
       "allow list entry 1 \"[::1]443\": has something other than \":ports\" after "
       "\"]\""},
      {"[::1]:", "allow list entry 1 \"[::1]:\": has an empty port"},
      {"[github.com]:443",
       "allow list entry 1 \"[github.com]:443\": has no IPv6 address between \"[\" and \"]\""},
      {"[127.0.0.1]:443",
       "allow list entry 1 \"[127.0.0.1]:443\": has no IPv6 address between \"[\" and \"]\""},
      {"*.127.0.0.1",
       "allow list entry 1 \"*.127.0.0.1\": a \"*.\" entry covers the subdomains of a name, not "
       "an IP address"},
      {"1.2.3.256",
       "allow list entry 1 \"1.2.3.256\": host name \"1.2.3.256\" ends in a number but is not "
       "an IPv4 address"},
      {"xn--zzzz.example",
       "allow list entry 1 \"xn--zzzz.example\": host name \"xn--zzzz.example\" is not a valid "
       "internationalised name: string contains invalid punycode data"},
  };
  for (const auto &[entry, message] : cases) {
    SCOPED_TRACE(entry);
    EXPECT_EQ(entry_refusal({entry}), message);
  }
}

TEST(HostAllowList, BadEntryMessageSaysWhichEntry) {
  EXPECT_EQ(entry_refusal({"github.com", "*.github.com", "foo.*.com", "example.org"}),
            "allow list entry 3 \"foo.*.com\": a \"*\" stands only for the subdomains of a name, "
            "as the first label of \"*.example.com\"");
  EXPECT_EQ(entry_refusal({"github.com", "bad\nentry"}),
            "allow list entry 2 \"bad\\x0aentry\": host name \"bad\\x0aentry\" has a character no "
            "host name carries: \"\\x0a\" (names are letters, digits, hyphens and underscores)");
}

TEST(HostAllowList, TakesTheWidestValidEntries) {
  EXPECT_EQ(entry_refusal({"github.com:1", "github.com:65535", "*.com", "localhost",
                           "::", "[fe80::1%25eth0]:8080", "x.example:1,2,3,2"}),
            "(accepted)");
}

TEST(HostAllowListOutside, NamesTheEntriesNoDomainCoversInTheirOrder) {
  const std::vector<std::string> domains{"github.com", "*.packages.example.com", "Bücher.example"};
  EXPECT_EQ(HostAllowList::outside(
                {"github.com:443", "GitHub.com.", "registry.packages.example.com:443,8443",
                 "*.cdn.packages.example.com", "*.packages.example.com", "xn--bcher-kva.example"},
                domains),
            std::vector<std::string>{});
  EXPECT_EQ(
      HostAllowList::outside(
          {"*.github.com", "api.github.com", "packages.example.com:443", "127.0.0.1"}, domains),
      (std::vector<std::string>{"*.github.com", "api.github.com", "packages.example.com:443",
                                "127.0.0.1"}));
  EXPECT_THROW(HostAllowList::outside({"*"}, domains), std::invalid_argument);
}

}  // namespace
}  // namespace sandbox_host::egress
