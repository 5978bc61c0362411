// The egress CA (certificate_authority.hpp), checked with OpenSSL's own verifier and a real
// TLS handshake: its leaves verify for their hosts with the CA as the only trust anchor,
// the CA carries its critical constraints, and a CA with its name constraints refuses a
// leaf for another name or for an IP address in any form. Names are refused up front, the
// leaves are cached and reissued near their end, and no key leaves the CA.
#include <sandbox_host/egress/proxy/certificate_authority.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <future>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::egress {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

using X509StorePtr = OpenSslPtr<X509_STORE, X509_STORE_free>;
using X509StoreCtxPtr = OpenSslPtr<X509_STORE_CTX, X509_STORE_CTX_free>;
using BioPtr = OpenSslPtr<BIO, BIO_free_all>;
using BignumPtr = OpenSslPtr<BIGNUM, BN_free>;
using GeneralNamesPtr = OpenSslPtr<GENERAL_NAMES, GENERAL_NAMES_free>;
using NameConstraintsPtr = OpenSslPtr<NAME_CONSTRAINTS, NAME_CONSTRAINTS_free>;
using BasicConstraintsPtr = OpenSslPtr<BASIC_CONSTRAINTS, BASIC_CONSTRAINTS_free>;
using SslCtxPtr = OpenSslPtr<SSL_CTX, SSL_CTX_free>;
using SslPtr = OpenSslPtr<SSL, SSL_free>;

const std::vector<std::string> kHosts{"github.com", "api.github.com"};

CertificateAuthority &shared_ca() {
  static CertificateAuthority ca(kHosts, std::chrono::hours(24 * 30));
  return ca;
}

// X509_verify_cert of leaf with anchor as the only trusted certificate, for a TLS server;
// host, when given, must be one of the leaf's names. The verifier's error, X509_V_OK when
// it passed.
int verify(X509 *leaf, X509 *anchor, const std::optional<std::string> &host = std::nullopt) {
  X509StorePtr store(X509_STORE_new());
  EXPECT_EQ(X509_STORE_add_cert(store.get(), anchor), 1);
  X509StoreCtxPtr context(X509_STORE_CTX_new());
  EXPECT_EQ(X509_STORE_CTX_init(context.get(), store.get(), leaf, nullptr), 1);
  EXPECT_EQ(X509_STORE_CTX_set_purpose(context.get(), X509_PURPOSE_SSL_SERVER), 1);
  if (host) {
    EXPECT_EQ(X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(context.get()), host->c_str(),
                                          host->size()),
              1);
  }
  const int verified = X509_verify_cert(context.get());
  const int error = X509_STORE_CTX_get_error(context.get());
  EXPECT_EQ(verified == 1, error == X509_V_OK) << X509_verify_cert_error_string(error);
  return error;
}

std::string verify_error_name(int error) {
  return X509_verify_cert_error_string(error);
}

std::string common_name(X509 *certificate) {
  std::array<char, 256> name{};
  const int length = X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName,
                                               name.data(), name.size());
  return length < 0 ? "" : std::string(name.data(), static_cast<std::size_t>(length));
}

std::vector<std::string> dns_names(X509 *certificate) {
  GeneralNamesPtr names(static_cast<GENERAL_NAMES *>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)));
  std::vector<std::string> dns;
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME *name = sk_GENERAL_NAME_value(names.get(), i);
    EXPECT_EQ(name->type, GEN_DNS) << "a SAN other than DNS";
    if (name->type != GEN_DNS) continue;
    dns.emplace_back(reinterpret_cast<const char *>(ASN1_STRING_get0_data(name->d.dNSName)),
                     static_cast<std::size_t>(ASN1_STRING_length(name->d.dNSName)));
  }
  return dns;
}

// Whether certificate has extension nid marked critical; fails the test when it lacks it.
bool critical(X509 *certificate, int nid) {
  const int index = X509_get_ext_by_NID(certificate, nid, -1);
  EXPECT_GE(index, 0) << "no " << OBJ_nid2sn(nid) << " extension";
  return index >= 0 && X509_EXTENSION_get_critical(X509_get_ext(certificate, index)) == 1;
}

std::string octets(const ASN1_OCTET_STRING *string) {
  if (string == nullptr) return "";
  return std::string(reinterpret_cast<const char *>(ASN1_STRING_get0_data(string)),
                     static_cast<std::size_t>(ASN1_STRING_length(string)));
}

std::string serial_hex(X509 *certificate) {
  BignumPtr serial(ASN1_INTEGER_to_BN(X509_get_serialNumber(certificate), nullptr));
  char *hex = BN_bn2hex(serial.get());
  std::string text = hex;
  OPENSSL_free(hex);
  return text;
}

// ---- a CA of the test's own, with the egress CA's name constraints ----------------------

EvpPkeyPtr new_key() {
  EvpPkeyPtr key(EVP_EC_gen("P-256"));
  EXPECT_TRUE(key);
  return key;
}

void add_text_extension(X509 *certificate, X509 *issuer, int nid, const std::string &value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509ExtensionPtr extension(X509V3_EXT_nconf_nid(nullptr, &context, nid, value.c_str()));
  ASSERT_TRUE(extension) << OBJ_nid2sn(nid) << " = " << value;
  ASSERT_EQ(X509_add_ext(certificate, extension.get(), -1), 1);
}

X509Ptr new_certificate(const std::string &name, EVP_PKEY *key, X509 *issuer) {
  X509Ptr certificate(X509_new());
  X509_set_version(certificate.get(), X509_VERSION_3);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 3600);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(certificate.get()), "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char *>(name.c_str()), -1, -1, 0);
  X509_set_issuer_name(certificate.get(),
                       X509_get_subject_name(issuer ? issuer : certificate.get()));
  X509_set_pubkey(certificate.get(), key);
  return certificate;
}

struct TestCa {
  EvpPkeyPtr key;
  X509Ptr certificate;
};

TestCa make_test_ca(X509_EXTENSION *name_constraints) {
  TestCa ca{new_key(), nullptr};
  ca.certificate = new_certificate("test CA", ca.key.get(), nullptr);
  X509 *certificate = ca.certificate.get();
  add_text_extension(certificate, certificate, NID_basic_constraints, "critical,CA:TRUE");
  add_text_extension(certificate, certificate, NID_key_usage, "critical,keyCertSign");
  add_text_extension(certificate, certificate, NID_subject_key_identifier, "hash");
  if (name_constraints) {
    EXPECT_EQ(X509_add_ext(certificate, name_constraints, -1), 1);
  }
  EXPECT_GT(X509_sign(certificate, ca.key.get(), EVP_sha256()), 0);
  return ca;
}

// A server leaf signed by ca, named common_name and san ("DNS:name", "IP:address").
X509Ptr sign_leaf(const TestCa &ca, const std::string &common_name, const std::string &san) {
  EvpPkeyPtr key = new_key();
  X509Ptr leaf = new_certificate(common_name, key.get(), ca.certificate.get());
  add_text_extension(leaf.get(), ca.certificate.get(), NID_basic_constraints, "CA:FALSE");
  add_text_extension(leaf.get(), ca.certificate.get(), NID_subject_alt_name, san);
  add_text_extension(leaf.get(), ca.certificate.get(), NID_ext_key_usage, "serverAuth");
  EXPECT_GT(X509_sign(leaf.get(), ca.key.get(), EVP_sha256()), 0);
  return leaf;
}

// ---- leaves verify for their hosts, and only there ----------------------------------------

TEST(CertificateAuthority, EachHostsLeafVerifiesWithTheCaAsTheOnlyAnchor) {
  CertificateAuthority &ca = shared_ca();
  for (const auto &host : kHosts) {
    const auto leaf = ca.leaf_for(host);
    EXPECT_EQ(verify(leaf->certificate(), ca.certificate(), host), X509_V_OK)
        << host << ": " << verify_error_name(verify(leaf->certificate(), ca.certificate(), host));
  }
}

TEST(CertificateAuthority, ALeafDoesNotVerifyForAnotherName) {
  CertificateAuthority &ca = shared_ca();
  X509 *leaf = ca.leaf_for("github.com")->certificate();
  EXPECT_EQ(verify(leaf, ca.certificate(), "api.github.com"), X509_V_ERR_HOSTNAME_MISMATCH);
  EXPECT_EQ(verify(leaf, ca.certificate(), "evil.example"), X509_V_ERR_HOSTNAME_MISMATCH);
  EXPECT_EQ(verify(leaf, ca.certificate(), "www.github.com"), X509_V_ERR_HOSTNAME_MISMATCH);
}

TEST(CertificateAuthority, ALeafDoesNotVerifyAgainstAnotherCaForTheSameHosts) {
  CertificateAuthority other(kHosts, 1h);
  EXPECT_EQ(
      verify(shared_ca().leaf_for("github.com")->certificate(), other.certificate(), "github.com"),
      X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

// ---- what the CA and its leaves carry -----------------------------------------------------

TEST(CertificateAuthority, TheCaIsASelfSignedP256CaWithCriticalConstraints) {
  X509 *ca = shared_ca().certificate();
  EXPECT_EQ(X509_check_issued(ca, ca), X509_V_OK);
  EXPECT_EQ(X509_get_version(ca), X509_VERSION_3);

  int is_critical = 0;
  BasicConstraintsPtr basic(static_cast<BASIC_CONSTRAINTS *>(
      X509_get_ext_d2i(ca, NID_basic_constraints, &is_critical, nullptr)));
  ASSERT_TRUE(basic);
  EXPECT_EQ(is_critical, 1);
  EXPECT_NE(basic->ca, 0);
  ASSERT_NE(basic->pathlen, nullptr);
  EXPECT_EQ(ASN1_INTEGER_get(basic->pathlen), 0);

  EXPECT_TRUE(critical(ca, NID_key_usage));
  EXPECT_EQ(X509_get_key_usage(ca), static_cast<uint32_t>(KU_KEY_CERT_SIGN | KU_CRL_SIGN));
  EXPECT_FALSE(octets(X509_get0_subject_key_id(ca)).empty());

  std::array<char, 64> group{};
  std::size_t group_length = 0;
  ASSERT_EQ(
      EVP_PKEY_get_group_name(X509_get0_pubkey(ca), group.data(), group.size(), &group_length), 1);
  EXPECT_EQ(std::string(group.data(), group_length), "prime256v1");
}

TEST(CertificateAuthority, TheCaIsConstrainedCriticallyToItsHostsWithEveryAddressExcluded) {
  X509 *ca = shared_ca().certificate();
  int is_critical = 0;
  NameConstraintsPtr constraints(static_cast<NAME_CONSTRAINTS *>(
      X509_get_ext_d2i(ca, NID_name_constraints, &is_critical, nullptr)));
  ASSERT_TRUE(constraints);
  EXPECT_EQ(is_critical, 1);

  std::vector<std::string> permitted;
  for (int i = 0; i < sk_GENERAL_SUBTREE_num(constraints->permittedSubtrees); ++i) {
    const GENERAL_NAME *base = sk_GENERAL_SUBTREE_value(constraints->permittedSubtrees, i)->base;
    ASSERT_EQ(base->type, GEN_DNS);
    permitted.push_back(octets(base->d.dNSName));
  }
  EXPECT_EQ(permitted, kHosts);

  std::set<std::string> excluded;
  for (int i = 0; i < sk_GENERAL_SUBTREE_num(constraints->excludedSubtrees); ++i) {
    const GENERAL_NAME *base = sk_GENERAL_SUBTREE_value(constraints->excludedSubtrees, i)->base;
    ASSERT_EQ(base->type, GEN_IPADD);
    excluded.insert(octets(base->d.iPAddress));
  }
  // Address and mask, all zero: 0.0.0.0/0 and ::/0.
  EXPECT_EQ(excluded, (std::set<std::string>{std::string(8, '\0'), std::string(32, '\0')}));
}

TEST(CertificateAuthority, ALeafIsAServerCertificateForItsHostAlone) {
  CertificateAuthority &ca = shared_ca();
  const auto before = Clock::now();
  CertificateAuthority fresh(kHosts, 24h * 30);
  const auto leaf = fresh.leaf_for("api.github.com");
  const auto after = Clock::now();
  X509 *certificate = leaf->certificate();

  EXPECT_EQ(dns_names(certificate), std::vector<std::string>{"api.github.com"});
  EXPECT_EQ(common_name(certificate), "api.github.com");
  EXPECT_EQ(X509_check_issued(fresh.certificate(), certificate), X509_V_OK);
  EXPECT_NE(X509_check_issued(ca.certificate(), certificate), X509_V_OK);
  EXPECT_EQ(octets(X509_get0_authority_key_id(certificate)),
            octets(X509_get0_subject_key_id(fresh.certificate())));
  EXPECT_FALSE(octets(X509_get0_subject_key_id(certificate)).empty());
  EXPECT_NE(octets(X509_get0_subject_key_id(certificate)),
            octets(X509_get0_subject_key_id(fresh.certificate())));
  EXPECT_EQ(X509_get_extended_key_usage(certificate), static_cast<uint32_t>(XKU_SSL_SERVER));
  EXPECT_EQ(X509_get_key_usage(certificate), static_cast<uint32_t>(KU_DIGITAL_SIGNATURE));
  EXPECT_EQ(X509_check_ca(certificate), 0);
  EXPECT_EQ(X509_check_private_key(certificate, leaf->key()), 1);

  // Valid for about a day, starting a little in the past for clients whose clock is behind.
  EXPECT_LT(leaf->not_before, before - 1min);
  EXPECT_GT(leaf->not_before, before - 1h);
  EXPECT_GT(leaf->not_after, before + 23h);
  EXPECT_LE(leaf->not_after, after + 24h);
  EXPECT_EQ(X509_cmp_time(X509_get0_notAfter(certificate), nullptr), 1);
  std::time_t just_past_end = Clock::to_time_t(leaf->not_after) + 1;
  EXPECT_EQ(X509_cmp_time(X509_get0_notAfter(certificate), &just_past_end), -1);
}

TEST(CertificateAuthority, LeavesShareOneKeyAndHaveRandom128BitSerials) {
  CertificateAuthority ca(kHosts, 1h);
  const auto github = ca.leaf_for("github.com");
  const auto api = ca.leaf_for("api.github.com");
  EXPECT_EQ(EVP_PKEY_eq(github->key(), api->key()), 1);
  EXPECT_EQ(
      EVP_PKEY_eq(X509_get0_pubkey(github->certificate()), X509_get0_pubkey(api->certificate())),
      1);
  EXPECT_NE(EVP_PKEY_eq(github->key(), X509_get0_pubkey(ca.certificate())), 1);

  std::set<std::string> serials{serial_hex(ca.certificate())};
  for (const auto &leaf : {github, api}) {
    const std::string serial = serial_hex(leaf->certificate());
    EXPECT_LE(serial.size(), 32u) << serial;
    EXPECT_GE(serial.size(), 16u) << serial << ": not random 128 bits";
    serials.insert(serial);
  }
  EXPECT_EQ(serials.size(), 3u);
}

TEST(CertificateAuthority, NoLeafOutlivesTheCa) {
  CertificateAuthority ca(kHosts, 1h, 24h);
  const auto leaf = ca.leaf_for("github.com");
  EXPECT_EQ(X509_cmp_time(X509_get0_notAfter(leaf->certificate()), nullptr), 1);
  EXPECT_EQ(ASN1_TIME_compare(X509_get0_notAfter(leaf->certificate()),
                              X509_get0_notAfter(ca.certificate())),
            0);
  EXPECT_EQ(verify(leaf->certificate(), ca.certificate(), "github.com"), X509_V_OK);
}

// ---- what the name constraints refuse -----------------------------------------------------

class NameConstraints : public testing::Test {
 protected:
  NameConstraints() : constraints_(make_name_constraints({"github.com"})) {}
  X509ExtensionPtr constraints_;
};

TEST_F(NameConstraints, TheExtensionIsCriticalNameConstraints) {
  EXPECT_EQ(OBJ_obj2nid(X509_EXTENSION_get_object(constraints_.get())), NID_name_constraints);
  EXPECT_EQ(X509_EXTENSION_get_critical(constraints_.get()), 1);
}

TEST_F(NameConstraints, ACaWithThemSignsAPassingLeafForItsHost) {
  // Without this, the refusals below could come from a broken test CA.
  const TestCa ca = make_test_ca(constraints_.get());
  EXPECT_EQ(verify(sign_leaf(ca, "github.com", "DNS:github.com").get(), ca.certificate.get(),
                   "github.com"),
            X509_V_OK);
}

TEST_F(NameConstraints, ALeafForAnotherNameIsAPermittedViolation) {
  const TestCa ca = make_test_ca(constraints_.get());
  EXPECT_EQ(verify(sign_leaf(ca, "evil.example", "DNS:evil.example").get(), ca.certificate.get()),
            X509_V_ERR_PERMITTED_VIOLATION);
  EXPECT_EQ(verify(sign_leaf(ca, "github.com.evil.example", "DNS:github.com.evil.example").get(),
                   ca.certificate.get()),
            X509_V_ERR_PERMITTED_VIOLATION);
  EXPECT_EQ(
      verify(sign_leaf(ca, "evilgithub.com", "DNS:evilgithub.com").get(), ca.certificate.get()),
      X509_V_ERR_PERMITTED_VIOLATION);
}

TEST_F(NameConstraints, ALeafForAnIpAddressIsAnExcludedViolation) {
  const TestCa ca = make_test_ca(constraints_.get());
  for (const std::string address : {"127.0.0.1", "10.0.0.1", "::1", "::ffff:127.0.0.1"}) {
    EXPECT_EQ(verify(sign_leaf(ca, "github.com", "IP:" + address).get(), ca.certificate.get()),
              X509_V_ERR_EXCLUDED_VIOLATION)
        << address;
  }
}

TEST_F(NameConstraints, WithoutTheExcludedAddressesAnIpLeafWouldPass) {
  // Why the exclusions are there: DNS subtrees alone leave iPAddress names unconstrained.
  X509ExtensionPtr dns_only(X509V3_EXT_nconf_nid(nullptr, nullptr, NID_name_constraints,
                                                 "critical,permitted;DNS:github.com"));
  ASSERT_TRUE(dns_only);
  const TestCa ca = make_test_ca(dns_only.get());
  EXPECT_EQ(verify(sign_leaf(ca, "github.com", "IP:127.0.0.1").get(), ca.certificate.get()),
            X509_V_OK);
}

TEST_F(NameConstraints, AnAddressSpelledAsADnsNameIsAPermittedViolation) {
  const TestCa ca = make_test_ca(constraints_.get());
  EXPECT_EQ(verify(sign_leaf(ca, "127.0.0.1", "DNS:127.0.0.1").get(), ca.certificate.get()),
            X509_V_ERR_PERMITTED_VIOLATION);
}

// ---- names refused up front ---------------------------------------------------------------

TEST(CertificateAuthority, IssuesNoLeafForAHostOutsideItsList) {
  CertificateAuthority &ca = shared_ca();
  for (const std::string host :
       {"evil.example", "GitHub.com", "github.com.", "www.github.com", "127.0.0.1", ""}) {
    try {
      ca.leaf_for(host);
      ADD_FAILURE() << "issued a leaf for \"" << host << "\"";
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find("\"" + host + "\""), std::string::npos)
          << error.what();
    }
  }
}

TEST(CertificateAuthority, RefusesWhatIsNotANormalisedHostName) {
  const std::string label(63, 'a');
  const std::string too_long = label + "." + label + "." + label + "." + label;  // 255
  const std::vector<std::string> bad{"GitHub.com",
                                     "github.com.",
                                     "*.github.com",
                                     "127.0.0.1",
                                     "2130706433",
                                     "0x7f.0.0.1",
                                     "::1",
                                     "[::1]",
                                     "a..b",
                                     ".a.b",
                                     "-a.example",
                                     "a-.example",
                                     "a_b.example",
                                     "git hub.com",
                                     "bücher.example",
                                     "a.b/c",
                                     "a.example:443",
                                     std::string(64, 'a') + ".example",
                                     too_long,
                                     ""};
  for (const auto &host : bad) {
    try {
      CertificateAuthority ca({"github.com", host}, 1h);
      ADD_FAILURE() << "accepted \"" << host << "\"";
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find("\"" + host + "\""), std::string::npos)
          << error.what();
    }
    EXPECT_THROW(make_name_constraints({host}), std::invalid_argument) << host;
  }
  EXPECT_THROW(CertificateAuthority({}, 1h), std::invalid_argument);
  EXPECT_THROW(make_name_constraints({}), std::invalid_argument);
  EXPECT_THROW(CertificateAuthority(kHosts, 0s), std::invalid_argument);
  EXPECT_THROW(CertificateAuthority(kHosts, 1h, -1s), std::invalid_argument);
}

TEST(CertificateAuthority, AcceptsPunycodeSingleLabelAndLongestNames) {
  const std::string longest_label(63, 'a');
  const std::vector<std::string> hosts{"xn--bcher-kva.example", "localhost", "a1.example",
                                       "1a.example", longest_label + ".example"};
  CertificateAuthority ca(hosts, 1h);
  for (const auto &host : hosts) {
    EXPECT_EQ(verify(ca.leaf_for(host)->certificate(), ca.certificate(), host), X509_V_OK) << host;
  }
}

TEST(CertificateAuthority, AHostTooLongForACommonNameIsNamedInTheCriticalSanAlone) {
  const std::string label(63, 'a');
  const std::string host = label + "." + label + ".example";
  CertificateAuthority ca({host}, 1h);
  X509 *leaf = ca.leaf_for(host)->certificate();
  EXPECT_EQ(common_name(leaf), "");
  EXPECT_EQ(X509_NAME_entry_count(X509_get_subject_name(leaf)), 0);
  EXPECT_TRUE(critical(leaf, NID_subject_alt_name));
  EXPECT_EQ(dns_names(leaf), std::vector<std::string>{host});
  EXPECT_EQ(verify(leaf, ca.certificate(), host), X509_V_OK);
  // A host that fits keeps its SAN non-critical, beside its CN.
  EXPECT_FALSE(critical(shared_ca().leaf_for("github.com")->certificate(), NID_subject_alt_name));
}

// ---- the cache ----------------------------------------------------------------------------

TEST(CertificateAuthority, TheSameLeafComesBackForTheSameHost) {
  CertificateAuthority ca(kHosts, 1h);
  const auto first = ca.leaf_for("github.com");
  const auto second = ca.leaf_for("github.com");
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(serial_hex(first->certificate()), serial_hex(second->certificate()));
  EXPECT_NE(ca.leaf_for("api.github.com").get(), first.get());
}

TEST(CertificateAuthority, ALeafIsReissuedNearItsEnd) {
  CertificateAuthority ca(kHosts, 1h, 2s);
  const auto first = ca.leaf_for("github.com");
  // Past its end, whatever the rounding of its times to whole seconds.
  std::this_thread::sleep_until(first->not_after + 100ms);
  const auto second = ca.leaf_for("github.com");
  EXPECT_NE(second.get(), first.get());
  EXPECT_NE(serial_hex(second->certificate()), serial_hex(first->certificate()));
  EXPECT_GT(second->not_after, first->not_after);
  EXPECT_EQ(EVP_PKEY_eq(first->key(), second->key()), 1);
  EXPECT_EQ(ca.leaf_for("github.com").get(), second.get());
}

TEST(CertificateAuthority, ConcurrentCallersGetOneLeafPerHost) {
  CertificateAuthority ca(kHosts, 1h);
  constexpr int kThreads = 8, kCalls = 50;
  std::vector<std::future<std::set<const LeafCertificate *>>> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.push_back(std::async(std::launch::async, [&ca, t] {
      std::set<const LeafCertificate *> seen;
      for (int i = 0; i < kCalls; ++i) seen.insert(ca.leaf_for(kHosts[(t + i) % 2]).get());
      return seen;
    }));
  }
  std::set<const LeafCertificate *> all;
  for (auto &caller : callers) all.merge(caller.get());
  EXPECT_EQ(all.size(), 2u);
}

// ---- no key leaves the CA -----------------------------------------------------------------

TEST(CertificateAuthority, ThePemsHoldOneCertificateAndNoKey) {
  CertificateAuthority &ca = shared_ca();
  for (const std::string &pem :
       std::vector<std::string>{ca.certificate_pem(), ca.leaf_for("github.com")->pem()}) {
    EXPECT_EQ(pem.find("PRIVATE"), std::string::npos);
    EXPECT_EQ(pem.find("-----BEGIN "), pem.rfind("-----BEGIN ")) << "more than one PEM block";
    EXPECT_EQ(pem.rfind("-----BEGIN CERTIFICATE-----\n", 0), 0u);
  }
  const std::string pem = ca.certificate_pem();
  BioPtr in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr parsed(PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(X509_cmp(parsed.get(), ca.certificate()), 0);
}

// ---- a real TLS handshake -----------------------------------------------------------------

struct Handshake {
  bool client_connected = false;
  long client_verify_result = X509_V_OK;
  std::string reply;  // what the server wrote back over the connection
};

// A TLS server presenting ca's leaf for served, and a client trusting only ca that expects
// expected, over a socketpair.
Handshake handshake(CertificateAuthority &ca, const std::string &served,
                    const std::string &expected) {
  ::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    ADD_FAILURE() << "socketpair";
    return {};
  }
  UniqueFd server_fd(fds[0]), client_fd(fds[1]);
  const timeval bound{10, 0};  // a stuck side fails the test instead of hanging it
  for (int fd : fds) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
  }
  const auto leaf = ca.leaf_for(served);
  auto server = std::async(std::launch::async, [&server_fd, leaf] {
    SslCtxPtr context(SSL_CTX_new(TLS_server_method()));
    if (SSL_CTX_use_certificate(context.get(), leaf->certificate()) != 1 ||
        SSL_CTX_use_PrivateKey(context.get(), leaf->key()) != 1) {
      return false;
    }
    SslPtr ssl(SSL_new(context.get()));
    SSL_set_fd(ssl.get(), server_fd.get());
    if (SSL_accept(ssl.get()) != 1) return false;
    std::array<char, 16> request{};
    const int n = SSL_read(ssl.get(), request.data(), request.size());
    if (n <= 0 || std::string(request.data(), n) != "ping") return false;
    SSL_write(ssl.get(), "pong", 4);
    SSL_shutdown(ssl.get());
    return true;
  });

  Handshake result;
  {
    SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
    X509_STORE_add_cert(SSL_CTX_get_cert_store(context.get()), ca.certificate());
    SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
    SslPtr ssl(SSL_new(context.get()));
    SSL_set_fd(ssl.get(), client_fd.get());
    SSL_set_tlsext_host_name(ssl.get(), expected.c_str());
    SSL_set1_host(ssl.get(), expected.c_str());
    result.client_connected = SSL_connect(ssl.get()) == 1;
    result.client_verify_result = SSL_get_verify_result(ssl.get());
    if (result.client_connected && SSL_write(ssl.get(), "ping", 4) == 4) {
      std::array<char, 16> reply{};
      const int n = SSL_read(ssl.get(), reply.data(), reply.size());
      if (n > 0) result.reply.assign(reply.data(), static_cast<std::size_t>(n));
    }
  }
  client_fd.reset();  // ends a server still waiting for the client
  const bool served_ok = server.get();
  EXPECT_EQ(served_ok, result.client_connected);
  return result;
}

TEST(CertificateAuthority, ATlsClientTrustingOnlyTheCaConnectsToTheHost) {
  const Handshake result = handshake(shared_ca(), "api.github.com", "api.github.com");
  EXPECT_TRUE(result.client_connected)
      << X509_verify_cert_error_string(result.client_verify_result);
  EXPECT_EQ(result.client_verify_result, X509_V_OK);
  EXPECT_EQ(result.reply, "pong");
}

TEST(CertificateAuthority, ATlsClientExpectingAnotherNameRefusesTheLeaf) {
  const Handshake result = handshake(shared_ca(), "github.com", "evil.example");
  EXPECT_FALSE(result.client_connected);
  EXPECT_EQ(result.client_verify_result, X509_V_ERR_HOSTNAME_MISMATCH)
      << X509_verify_cert_error_string(result.client_verify_result);
  EXPECT_EQ(result.reply, "");
}

}  // namespace
}  // namespace sandbox_host::egress
