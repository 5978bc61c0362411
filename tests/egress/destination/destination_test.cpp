// The destination rules (destination.hpp): the operator's allowed blocks and their
// messages, the proxy's own addresses, and resolve_checked on IP literals, resolver
// overrides (a rebinding answer among them), the real resolver on "localhost", and a
// resolver that fails (in a network namespace of its own, so that nothing leaves the host).
#include <sandbox_host/egress/destination/destination.hpp>

#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::egress {
namespace {

const std::string kHint = "; allow it with [egress] allow_addresses";

IpAddress address(std::string_view text) {
  const auto parsed = parse_ip_literal(text);
  if (!parsed) throw std::invalid_argument("test address does not parse: " + std::string(text));
  return *parsed;
}

std::string policy_refusal(const std::vector<std::string> &allowed) {
  try {
    AddressPolicy::parse(allowed);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "(accepted)";
}

std::string verdict(const AddressPolicy &policy, std::string_view text) {
  return policy.refusal(address(text)).value_or("(may dial)");
}

std::vector<std::string> texts(const std::vector<IpAddress> &addresses) {
  std::vector<std::string> out;
  for (const auto &a : addresses) out.push_back(a.to_string());
  return out;
}

// ---- AddressPolicy ------------------------------------------------------------------------

TEST(AddressPolicy, RefusesSpecialRangesByDefaultNamingTheRule) {
  const AddressPolicy policy;
  EXPECT_EQ(verdict(policy, "127.0.0.1"), "127.0.0.1 is loopback 127.0.0.0/8" + kHint);
  EXPECT_EQ(verdict(policy, "10.1.2.3"), "10.1.2.3 is private 10.0.0.0/8" + kHint);
  EXPECT_EQ(verdict(policy, "169.254.169.254"),
            "169.254.169.254 is link-local 169.254.0.0/16" + kHint);
  EXPECT_EQ(verdict(policy, "100.64.0.1"), "100.64.0.1 is CGNAT 100.64.0.0/10" + kHint);
  EXPECT_EQ(verdict(policy, "::1"), "::1 is loopback ::1" + kHint);
  EXPECT_EQ(verdict(policy, "::ffff:127.0.0.1"),
            "::ffff:127.0.0.1 is IPv4-mapped ::ffff:0:0/96 wrapping 127.0.0.1, loopback "
            "127.0.0.0/8" +
                kHint);
  EXPECT_EQ(verdict(policy, "8.8.8.8"), "(may dial)");
  EXPECT_EQ(verdict(policy, "2606:4700::1111"), "(may dial)");
}

TEST(AddressPolicy, AllowedAddressLetsThatAddressThroughAndNothingElse) {
  const auto policy = AddressPolicy::parse({"127.0.0.1"});
  EXPECT_EQ(verdict(policy, "127.0.0.1"), "(may dial)");
  // A dual-stack socket dials the mapped form as the same IPv4 address.
  EXPECT_EQ(verdict(policy, "::ffff:127.0.0.1"), "(may dial)");
  EXPECT_EQ(verdict(policy, "127.0.0.2"), "127.0.0.2 is loopback 127.0.0.0/8" + kHint);
  EXPECT_EQ(verdict(policy, "::1"), "::1 is loopback ::1" + kHint);
  EXPECT_EQ(verdict(policy, "10.0.0.1"), "10.0.0.1 is private 10.0.0.0/8" + kHint);
  // Other forms that carry 127.0.0.1 reach another host (a gateway, a relay): still refused.
  EXPECT_EQ(
      verdict(policy, "64:ff9b::127.0.0.1"),
      "64:ff9b::7f00:1 is NAT64 64:ff9b::/96 wrapping 127.0.0.1, loopback 127.0.0.0/8" + kHint);
}

TEST(AddressPolicy, AllowedBlocksCoverTheirAddresses) {
  const auto policy = AddressPolicy::parse({"127.0.0.0/8", "::1/128", "10.1.0.0/16", "fd00::/8"});
  EXPECT_EQ(verdict(policy, "127.0.0.1"), "(may dial)");
  EXPECT_EQ(verdict(policy, "127.255.0.9"), "(may dial)");
  EXPECT_EQ(verdict(policy, "::1"), "(may dial)");
  EXPECT_EQ(verdict(policy, "10.1.200.3"), "(may dial)");
  EXPECT_EQ(verdict(policy, "fd00:1::5"), "(may dial)");
  EXPECT_EQ(verdict(policy, "10.2.0.1"), "10.2.0.1 is private 10.0.0.0/8" + kHint);
  EXPECT_EQ(verdict(policy, "fc00::1"), "fc00::1 is unique local fc00::/7" + kHint);
  EXPECT_EQ(verdict(policy, "192.168.0.1"), "192.168.0.1 is private 192.168.0.0/16" + kHint);
}

TEST(AddressPolicy, TakesAddressesInAnySpelling) {
  const auto policy = AddressPolicy::parse({"0x7f.1", "[::1]", "127.0.0.1/32"});
  EXPECT_EQ(verdict(policy, "127.0.0.1"), "(may dial)");
  EXPECT_EQ(verdict(policy, "::1"), "(may dial)");
}

TEST(AddressPolicy, RefusesOwnAddressesUnlessNamedAlone) {
  AddressPolicy policy;
  policy.add_own(address("8.8.4.4"));
  policy.add_own(address("::ffff:127.0.0.1"));
  EXPECT_EQ(verdict(policy, "8.8.4.4"),
            "8.8.4.4 is this proxy's own address; allow it with [egress] allow_addresses "
            "\"8.8.4.4\" (a block that holds it is not enough)");
  EXPECT_EQ(verdict(policy, "::ffff:8.8.4.4"),
            "::ffff:8.8.4.4 is this proxy's own address; allow it with [egress] allow_addresses "
            "\"8.8.4.4\" (a block that holds it is not enough)");
  EXPECT_EQ(verdict(policy, "127.0.0.1"),
            "127.0.0.1 is this proxy's own address; allow it with [egress] allow_addresses "
            "\"127.0.0.1\" (a block that holds it is not enough)");
  EXPECT_EQ(verdict(policy, "8.8.8.8"), "(may dial)");

  auto wide = AddressPolicy::parse({"127.0.0.0/8", "8.0.0.0/8"});
  wide.add_own(address("127.0.0.1"));
  wide.add_own(address("8.8.4.4"));
  EXPECT_EQ(verdict(wide, "127.0.0.1"),
            "127.0.0.1 is this proxy's own address; allow it with [egress] allow_addresses "
            "\"127.0.0.1\" (a block that holds it is not enough)");
  EXPECT_EQ(verdict(wide, "127.0.0.2"), "(may dial)");

  auto exact = AddressPolicy::parse({"127.0.0.1", "8.8.4.4/32"});
  exact.add_own(address("127.0.0.1"));
  exact.add_own(address("8.8.4.4"));
  EXPECT_EQ(verdict(exact, "127.0.0.1"), "(may dial)");
  EXPECT_EQ(verdict(exact, "8.8.4.4"), "(may dial)");
}

TEST(AddressPolicy, RefusesBadEntriesNamingThem) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "allow_addresses entry 1 \"\": is empty"},
      {"localhost", "allow_addresses entry 1 \"localhost\": \"localhost\" is not an IP address"},
      {"10.0.0.0/",
       "allow_addresses entry 1 \"10.0.0.0/\": prefix length \"\" is not a number "
       "from 0 to 32"},
      {"10.0.0.0/33",
       "allow_addresses entry 1 \"10.0.0.0/33\": prefix length \"33\" is not a "
       "number from 0 to 32"},
      {"10.0.0.0/x",
       "allow_addresses entry 1 \"10.0.0.0/x\": prefix length \"x\" is not a "
       "number from 0 to 32"},
      {"10.0.0.0/-8",
       "allow_addresses entry 1 \"10.0.0.0/-8\": prefix length \"-8\" is not a "
       "number from 0 to 32"},
      {"10.0.0.0/8/8",
       "allow_addresses entry 1 \"10.0.0.0/8/8\": prefix length \"8/8\" is not "
       "a number from 0 to 32"},
      {"::/129",
       "allow_addresses entry 1 \"::/129\": prefix length \"129\" is not a number "
       "from 0 to 128"},
      {"10.1.2.3/16",
       "allow_addresses entry 1 \"10.1.2.3/16\": has bits set past the prefix "
       "length; the block is 10.1.0.0/16"},
      {"fd00::1/8",
       "allow_addresses entry 1 \"fd00::1/8\": has bits set past the prefix "
       "length; the block is fd00::/8"},
      {"fe80::1%eth0",
       "allow_addresses entry 1 \"fe80::1%eth0\": a zone id has no place in an "
       "address block"},
      {"10.0.0.0 /8",
       "allow_addresses entry 1 \"10.0.0.0 /8\": \"10.0.0.0 \" is not an IP "
       "address"},
  };
  for (const auto &[entry, message] : cases) {
    SCOPED_TRACE(entry);
    EXPECT_EQ(policy_refusal({entry}), message);
  }
  EXPECT_EQ(policy_refusal({"127.0.0.1", "::1", "nope"}),
            "allow_addresses entry 3 \"nope\": \"nope\" is not an IP address");
  EXPECT_EQ(policy_refusal({"0.0.0.0/0", "::/0", "127.0.0.1/32", "::1/128"}), "(accepted)");
}

// ---- resolve_checked: IP literals ---------------------------------------------------------

TEST(ResolveChecked, TakesAnIpLiteralAsItsOneAddress) {
  const auto policy = AddressPolicy::parse({"127.0.0.1"});
  for (const std::string host :
       {"127.0.0.1", "127.1", "0x7f.0.0.1", "2130706433", "[::ffff:127.0.0.1]"}) {
    SCOPED_TRACE(host);
    const Resolution resolution = resolve_checked(host, policy);
    EXPECT_EQ(resolution.refusal, "");
    ASSERT_EQ(resolution.addresses.size(), 1u);
    EXPECT_EQ(resolution.addresses.front(), address(host));
  }
  const Resolution public_v6 = resolve_checked("[2606:4700::1111]", AddressPolicy());
  EXPECT_EQ(public_v6.refusal, "");
  EXPECT_EQ(texts(public_v6.addresses), std::vector<std::string>{"2606:4700::1111"});
}

TEST(ResolveChecked, RefusesAnIpLiteralInAnySpellingNamingTheAddress) {
  const AddressPolicy policy;
  const Resolution plain = resolve_checked("127.0.0.1", policy);
  EXPECT_TRUE(plain.addresses.empty());
  EXPECT_EQ(plain.refusal, "127.0.0.1 is loopback 127.0.0.0/8" + kHint);

  const Resolution disguised = resolve_checked("0x7f.1", policy);
  EXPECT_TRUE(disguised.addresses.empty());
  EXPECT_EQ(disguised.refusal, "0x7f.1 is 127.0.0.1: 127.0.0.1 is loopback 127.0.0.0/8" + kHint);

  const Resolution zoned = resolve_checked("[fe80::1%25eth0]", policy);
  EXPECT_EQ(zoned.refusal, "[fe80::1%25eth0] is fe80::1: fe80::1 is link-local fe80::/10" + kHint);

  const Resolution teredo = resolve_checked("2001:0:4136:e378:8000:63bf:80ff:fffe", policy);
  EXPECT_EQ(teredo.refusal,
            "2001:0:4136:e378:8000:63bf:80ff:fffe is Teredo 2001::/32 with client 127.0.0.1, "
            "loopback 127.0.0.0/8" +
                kHint);
}

TEST(ResolveChecked, RefusesAHostThatIsNoName) {
  const Resolution resolution = resolve_checked("bad..name", AddressPolicy());
  EXPECT_TRUE(resolution.addresses.empty());
  EXPECT_EQ(resolution.refusal, "host name \"bad..name\" has an empty label");
}

// ---- resolve_checked: resolver overrides --------------------------------------------------

TEST(ResolveChecked, DialsWhatTheOverridesSayAfterCheckingIt) {
  const ResolverOverrides overrides{
      {"upstream.test", {address("8.8.8.8"), address("2606:4700::1111")}}};
  const Resolution resolution = resolve_checked("Upstream.TEST.", AddressPolicy(), overrides);
  EXPECT_EQ(resolution.refusal, "");
  EXPECT_EQ(texts(resolution.addresses), (std::vector<std::string>{"8.8.8.8", "2606:4700::1111"}));
}

TEST(ResolveChecked, RefusesANameThatMixesAPublicAndALoopbackAddress) {
  const ResolverOverrides overrides{{"rebind.test", {address("8.8.8.8"), address("127.0.0.1")}}};
  const Resolution resolution = resolve_checked("rebind.test", AddressPolicy(), overrides);
  EXPECT_TRUE(resolution.addresses.empty()) << "a refused name leaves nothing to dial";
  EXPECT_EQ(resolution.refusal,
            "rebind.test is mapped by the resolver overrides to 8.8.8.8, 127.0.0.1: 127.0.0.1 is "
            "loopback 127.0.0.0/8; allow it with [egress] allow_addresses (one refused address "
            "refuses the whole name)");
  // Whatever the order of the answer.
  const ResolverOverrides reversed{{"rebind.test", {address("127.0.0.1"), address("8.8.8.8")}}};
  EXPECT_TRUE(resolve_checked("rebind.test", AddressPolicy(), reversed).addresses.empty());
}

TEST(ResolveChecked, AllowedLoopbackPassesThroughAnOverride) {
  const auto policy = AddressPolicy::parse({"127.0.0.1"});
  const ResolverOverrides overrides{{"git.test", {address("127.0.0.1")}}};
  const Resolution resolution = resolve_checked("git.test", policy, overrides);
  EXPECT_EQ(resolution.refusal, "");
  EXPECT_EQ(texts(resolution.addresses), std::vector<std::string>{"127.0.0.1"});
  // One more address that is not allowed refuses the name.
  const ResolverOverrides mixed{{"git.test", {address("127.0.0.1"), address("127.0.0.2")}}};
  const Resolution refused = resolve_checked("git.test", policy, mixed);
  EXPECT_TRUE(refused.addresses.empty());
  EXPECT_EQ(refused.refusal,
            "git.test is mapped by the resolver overrides to 127.0.0.1, 127.0.0.2: 127.0.0.2 is "
            "loopback 127.0.0.0/8; allow it with [egress] allow_addresses (one refused address "
            "refuses the whole name)");
}

TEST(ResolveChecked, RefusesAnOverrideToNothingAndTheProxyItself) {
  const ResolverOverrides overrides{{"empty.test", {}}, {"self.test", {address("8.8.4.4")}}};
  EXPECT_EQ(resolve_checked("empty.test", AddressPolicy(), overrides).refusal,
            "the resolver overrides map empty.test to no address");
  AddressPolicy policy;
  policy.add_own(address("8.8.4.4"));
  EXPECT_EQ(resolve_checked("self.test", policy, overrides).refusal,
            "self.test is mapped by the resolver overrides to 8.8.4.4: 8.8.4.4 is this proxy's "
            "own address; allow it with [egress] allow_addresses \"8.8.4.4\" (a block that holds "
            "it is not enough)");
}

TEST(ResolveChecked, OverridesApplyToNamesNotToAddresses) {
  const ResolverOverrides overrides{{"127.0.0.1", {address("8.8.8.8")}}};
  EXPECT_EQ(resolve_checked("127.1", AddressPolicy(), overrides).refusal,
            "127.1 is 127.0.0.1: 127.0.0.1 is loopback 127.0.0.0/8" + kHint);
}

// ---- resolve_checked: the real resolver ---------------------------------------------------

TEST(ResolveChecked, ChecksEveryAddressOfLocalhost) {
  const Resolution refused = resolve_checked("localhost", AddressPolicy());
  EXPECT_TRUE(refused.addresses.empty());
  EXPECT_EQ(refused.refusal.rfind("localhost resolves to ", 0), 0u) << refused.refusal;
  EXPECT_NE(refused.refusal.find(" is loopback "), std::string::npos) << refused.refusal;

  const auto policy = AddressPolicy::parse({"127.0.0.0/8", "::1"});
  const Resolution allowed = resolve_checked("LOCALHOST.", policy);
  EXPECT_EQ(allowed.refusal, "");
  ASSERT_FALSE(allowed.addresses.empty());
  for (const auto &a : allowed.addresses) {
    EXPECT_TRUE(a == address("::1") || in_block(a, address("127.0.0.0"), 8)) << a.to_string();
  }
  for (std::size_t i = 0; i < allowed.addresses.size(); ++i) {
    for (std::size_t k = i + 1; k < allowed.addresses.size(); ++k) {
      EXPECT_NE(allowed.addresses[i], allowed.addresses[k]) << "listed twice";
    }
  }
}

// A name no resolver answers, looked up in a child in a network namespace of its own (no
// interface up, so no query leaves it); the refusal comes back through a pipe.
TEST(ResolveChecked, RefusesANameThatDoesNotResolveNamingTheResolversError) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << std::strerror(errno);
  if (child == 0) {
    read_end.reset();
    const bool isolated =
        ::unshare(CLONE_NEWNET) == 0 || ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
    const std::string result =
        isolated ? resolve_checked("nothing-here.invalid", AddressPolicy()).refusal : "(no netns)";
    const ssize_t written = ::write(write_end.get(), result.data(), result.size());
    ::_exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
  }
  write_end.reset();
  std::string result;
  char buffer[512];
  for (int rounds = 0; rounds < 1000; ++rounds) {
    pollfd ready{read_end.get(), POLLIN, 0};
    if (::poll(&ready, 1, 30'000) <= 0) break;
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    result.append(buffer, static_cast<std::size_t>(n));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (result == "(no netns)") GTEST_SKIP() << "no network namespace for the resolver to fail in";
  EXPECT_EQ(result.rfind("nothing-here.invalid does not resolve: ", 0), 0u) << result;
  EXPECT_GT(result.size(), std::string("nothing-here.invalid does not resolve: ").size());
}

}  // namespace
}  // namespace sandbox_host::egress
