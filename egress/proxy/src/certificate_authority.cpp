#include <sandbox_host/egress/proxy/certificate_authority.hpp>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <stdexcept>
#include <string_view>

namespace sandbox_host::egress {
namespace {

using Clock = std::chrono::system_clock;
// Leaves and the CA start a little in the past: a client whose clock runs behind the
// host's would otherwise refuse a certificate that is not valid yet.
constexpr auto kClockSkew = std::chrono::minutes(5);
constexpr std::string_view kCaName = "sandbox-host egress proxy CA";
constexpr std::size_t kMaxCommonName = 64;

using BioPtr = OpenSslPtr<BIO, BIO_free_all>;
using BignumPtr = OpenSslPtr<BIGNUM, BN_free>;
using GeneralNamePtr = OpenSslPtr<GENERAL_NAME, GENERAL_NAME_free>;
using GeneralNamesPtr = OpenSslPtr<GENERAL_NAMES, GENERAL_NAMES_free>;
using GeneralSubtreePtr = OpenSslPtr<GENERAL_SUBTREE, GENERAL_SUBTREE_free>;
using NameConstraintsPtr = OpenSslPtr<NAME_CONSTRAINTS, NAME_CONSTRAINTS_free>;
using Asn1StringPtr = OpenSslPtr<ASN1_STRING, ASN1_STRING_free>;

[[noreturn]] void fail(const std::string &what) {
  throw std::runtime_error(openssl_error(what));
}

template <class T>
T *check(T *made, const std::string &what) {
  if (made == nullptr) fail(what);
  return made;
}

void check(int result, const std::string &what) {
  if (result <= 0) fail(what);
}

bool is_label(std::string_view label) {
  if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
    return false;
  }
  return std::all_of(label.begin(), label.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// Lower-case LDH labels; the last one not all digits, so no IPv4 address in any spelling
// (127.0.0.1, 2130706433) passes, and no IPv6 one either (':' is no label character).
bool is_host_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::string_view last;
  for (std::string_view rest = name;;) {
    const auto dot = rest.find('.');
    last = rest.substr(0, dot);
    if (!is_label(last)) return false;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  return !std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void require_host_names(const std::vector<std::string> &hosts) {
  if (hosts.empty()) {
    throw std::invalid_argument("the egress CA needs at least one host to issue certificates for");
  }
  for (const auto &host : hosts) {
    if (!is_host_name(host)) {
      throw std::invalid_argument(
          "\"" + host +
          "\" is not a normalised host name for the egress CA: lower-case letters, digits and "
          "hyphens in dot-separated labels, punycode for IDN, no trailing dot, no wildcard, "
          "no IP address");
    }
  }
}

EvpPkeyPtr make_key() {
  return EvpPkeyPtr(check(EVP_EC_gen("P-256"), "cannot make an EC P-256 key"));
}

GeneralNamePtr dns_name(const std::string &host) {
  Asn1StringPtr text(check(ASN1_IA5STRING_new(), "ASN1_IA5STRING_new"));
  check(ASN1_STRING_set(text.get(), host.data(), static_cast<int>(host.size())), "ASN1_STRING_set");
  GeneralNamePtr name(check(GENERAL_NAME_new(), "GENERAL_NAME_new"));
  GENERAL_NAME_set0_value(name.get(), GEN_DNS, text.release());
  return name;
}

// An iPAddress name constraint: address and mask of the same length, all zero here, so
// every address of that family.
GeneralNamePtr every_address(std::size_t address_bytes) {
  const std::string zeros(2 * address_bytes, '\0');
  Asn1StringPtr range(check(ASN1_OCTET_STRING_new(), "ASN1_OCTET_STRING_new"));
  check(ASN1_OCTET_STRING_set(range.get(), reinterpret_cast<const unsigned char *>(zeros.data()),
                              static_cast<int>(zeros.size())),
        "ASN1_OCTET_STRING_set");
  GeneralNamePtr name(check(GENERAL_NAME_new(), "GENERAL_NAME_new"));
  GENERAL_NAME_set0_value(name.get(), GEN_IPADD, range.release());
  return name;
}

void add_subtree(STACK_OF(GENERAL_SUBTREE) * subtrees, GeneralNamePtr base) {
  GeneralSubtreePtr subtree(check(GENERAL_SUBTREE_new(), "GENERAL_SUBTREE_new"));
  GENERAL_NAME_free(subtree->base);
  subtree->base = base.release();
  check(sk_GENERAL_SUBTREE_push(subtrees, subtree.get()), "sk_GENERAL_SUBTREE_push");
  subtree.release();
}

// An extension from OpenSSL's configuration syntax, for the fixed values only: what
// carries a host name is built from structures, never from text a name could bend.
void add_extension(X509 *certificate, X509 *issuer, int nid, const char *value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509ExtensionPtr extension(
      check(X509V3_EXT_nconf_nid(nullptr, &context, nid, value),
            std::string("cannot make the ") + OBJ_nid2sn(nid) + " extension \"" + value + "\""));
  check(X509_add_ext(certificate, extension.get(), -1), "X509_add_ext");
}

// A random 128-bit serial: RFC 5280 asks for unpredictable ones, and no two leaves of
// reissues may share one.
void set_random_serial(X509 *certificate) {
  BignumPtr serial(check(BN_new(), "BN_new"));
  check(BN_rand(serial.get(), 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY), "BN_rand");
  if (BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate)) == nullptr) {
    fail("BN_to_ASN1_INTEGER");
  }
}

void set_common_name(X509_NAME *name, std::string_view common_name) {
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char *>(common_name.data()),
                                   static_cast<int>(common_name.size()), -1, 0),
        "X509_NAME_add_entry_by_txt");
}

// Whole seconds, as the certificate holds them.
Clock::time_point set_time(ASN1_TIME *field, Clock::time_point when) {
  const std::time_t seconds = Clock::to_time_t(when);
  if (ASN1_TIME_set(field, seconds) == nullptr) fail("ASN1_TIME_set");
  return Clock::from_time_t(seconds);
}

Clock::time_point time_of(const ASN1_TIME *field) {
  std::tm broken_down{};
  check(ASN1_TIME_to_tm(field, &broken_down), "ASN1_TIME_to_tm");
  return Clock::from_time_t(::timegm(&broken_down));
}

}  // namespace

LeafCertificate::LeafCertificate(X509Ptr certificate, EvpPkeyPtr key)
    : certificate_(std::move(certificate)), key_(std::move(key)) {
  if (!certificate_ || !key_) {
    throw std::invalid_argument("a leaf certificate needs both its certificate and its key");
  }
  not_before = time_of(X509_get0_notBefore(certificate_.get()));
  not_after = time_of(X509_get0_notAfter(certificate_.get()));
}

std::string LeafCertificate::pem() const {
  return certificate_to_pem(certificate_.get());
}

std::string certificate_to_pem(const X509 *certificate) {
  BioPtr out(check(BIO_new(BIO_s_mem()), "BIO_new"));
  check(PEM_write_bio_X509(out.get(), certificate), "PEM_write_bio_X509");
  char *data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

X509ExtensionPtr make_name_constraints(const std::vector<std::string> &hosts) {
  require_host_names(hosts);
  NameConstraintsPtr constraints(check(NAME_CONSTRAINTS_new(), "NAME_CONSTRAINTS_new"));
  constraints->permittedSubtrees =
      check(sk_GENERAL_SUBTREE_new_null(), "sk_GENERAL_SUBTREE_new_null");
  constraints->excludedSubtrees =
      check(sk_GENERAL_SUBTREE_new_null(), "sk_GENERAL_SUBTREE_new_null");
  for (const auto &host : hosts) add_subtree(constraints->permittedSubtrees, dns_name(host));
  // Permitted DNS subtrees say nothing about iPAddress names, which RFC 5280 then allows:
  // without these a leaf for an IP address would pass.
  add_subtree(constraints->excludedSubtrees, every_address(4));
  add_subtree(constraints->excludedSubtrees, every_address(16));
  return X509ExtensionPtr(check(X509V3_EXT_i2d(NID_name_constraints, 1, constraints.get()),
                                "cannot encode the nameConstraints extension"));
}

CertificateAuthority::CertificateAuthority(std::vector<std::string> hosts,
                                           std::chrono::seconds validity,
                                           std::chrono::seconds leaf_validity)
    : hosts_(std::move(hosts)), leaf_validity_(leaf_validity) {
  if (validity.count() <= 0 || leaf_validity.count() <= 0) {
    throw std::invalid_argument("the egress CA's validity (" + std::to_string(validity.count()) +
                                " s) and its leaves' (" + std::to_string(leaf_validity.count()) +
                                " s) must be positive");
  }
  X509ExtensionPtr name_constraints = make_name_constraints(hosts_);
  key_ = make_key();
  leaf_key_ = make_key();

  certificate_.reset(check(X509_new(), "X509_new"));
  X509 *ca = certificate_.get();
  check(X509_set_version(ca, X509_VERSION_3), "X509_set_version");
  set_random_serial(ca);
  const auto now = Clock::now();
  set_time(X509_getm_notBefore(ca), now - kClockSkew);
  not_after_ = set_time(X509_getm_notAfter(ca), now + validity);
  set_common_name(X509_get_subject_name(ca), kCaName);
  check(X509_set_issuer_name(ca, X509_get_subject_name(ca)), "X509_set_issuer_name");
  check(X509_set_pubkey(ca, key_.get()), "X509_set_pubkey");
  add_extension(ca, ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
  add_extension(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(ca, ca, NID_subject_key_identifier, "hash");
  check(X509_add_ext(ca, name_constraints.get(), -1), "X509_add_ext nameConstraints");
  check(X509_sign(ca, key_.get(), EVP_sha256()), "cannot sign the egress CA");
  certificate_pem_ = certificate_to_pem(ca);
}

std::shared_ptr<const LeafCertificate> CertificateAuthority::leaf_for(const std::string &host) {
  if (std::find(hosts_.begin(), hosts_.end(), host) == hosts_.end()) {
    throw std::invalid_argument("the egress CA issues no certificate for \"" + host +
                                "\": it is not one of the hosts the proxy terminates TLS for");
  }
  std::lock_guard lock(leaves_mutex_);
  auto &leaf = leaves_[host];
  // A leaf cut short by the CA's own end stays: a new one would end no later.
  const bool reissue = !leaf || (Clock::now() >= leaf->not_after - leaf_validity_ / 10 &&
                                 leaf->not_after < not_after_);
  if (reissue) leaf = issue(host);
  return leaf;
}

std::shared_ptr<const LeafCertificate> CertificateAuthority::issue(const std::string &host) const {
  X509Ptr certificate(check(X509_new(), "X509_new"));
  X509 *leaf = certificate.get();
  check(X509_set_version(leaf, X509_VERSION_3), "X509_set_version");
  set_random_serial(leaf);
  const auto now = Clock::now();
  set_time(X509_getm_notBefore(leaf), now - kClockSkew);
  set_time(X509_getm_notAfter(leaf), std::min(now + leaf_validity_, not_after_));
  // A common name holds 64 characters at most (RFC 5280's ub-common-name); a longer host
  // gets an empty subject, which RFC 5280 allows when the subjectAltName is critical.
  const bool named_in_subject = host.size() <= kMaxCommonName;
  if (named_in_subject) set_common_name(X509_get_subject_name(leaf), host);
  check(X509_set_issuer_name(leaf, X509_get_subject_name(certificate_.get())),
        "X509_set_issuer_name");
  check(X509_set_pubkey(leaf, leaf_key_.get()), "X509_set_pubkey");

  GeneralNamesPtr alt_names(check(sk_GENERAL_NAME_new_null(), "sk_GENERAL_NAME_new_null"));
  GeneralNamePtr name = dns_name(host);
  check(sk_GENERAL_NAME_push(alt_names.get(), name.get()), "sk_GENERAL_NAME_push");
  name.release();
  check(X509_add1_ext_i2d(leaf, NID_subject_alt_name, alt_names.get(), named_in_subject ? 0 : 1,
                          X509V3_ADD_DEFAULT),
        "cannot add the subjectAltName extension");
  add_extension(leaf, certificate_.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(leaf, certificate_.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(leaf, certificate_.get(), NID_ext_key_usage, "serverAuth");
  add_extension(leaf, certificate_.get(), NID_subject_key_identifier, "hash");
  add_extension(leaf, certificate_.get(), NID_authority_key_identifier, "keyid:always");
  check(X509_sign(leaf, key_.get(), EVP_sha256()), "cannot sign the leaf for " + host);

  check(EVP_PKEY_up_ref(leaf_key_.get()), "EVP_PKEY_up_ref");
  return std::make_shared<LeafCertificate>(std::move(certificate), EvpPkeyPtr(leaf_key_.get()));
}

std::string openssl_error(const std::string &what) {
  std::string message = what;
  const char *separator = ": ";
  while (const unsigned long code = ERR_get_error()) {
    std::array<char, 256> text{};
    ERR_error_string_n(code, text.data(), text.size());
    message += separator;
    message += text.data();
    separator = "; ";
  }
  return message;
}

}  // namespace sandbox_host::egress
