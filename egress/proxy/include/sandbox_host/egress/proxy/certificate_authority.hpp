// The egress proxy's certificate authority (docs/design.md#tokens): made in memory, its key never
// written anywhere, and name-constrained to the hosts whose TLS the proxy terminates, so a
// client that trusts it trusts it for those hosts alone. It issues their leaf certificates.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sandbox_host::egress {

// unique_ptr for OpenSSL objects: OpenSslPtr<X509, X509_free>.
template <auto Free>
struct OpenSslFree {
  template <class T>
  void operator()(T *object) const noexcept {
    Free(object);
  }
};
template <class T, auto Free>
using OpenSslPtr = std::unique_ptr<T, OpenSslFree<Free>>;
using X509Ptr = OpenSslPtr<X509, X509_free>;
using EvpPkeyPtr = OpenSslPtr<EVP_PKEY, EVP_PKEY_free>;
using X509ExtensionPtr = OpenSslPtr<X509_EXTENSION, X509_EXTENSION_free>;

// One host's certificate and the key it certifies, which every leaf of its CA shares.
struct LeafCertificate {
  // Takes the validity from certificate; throws std::invalid_argument for a null one.
  LeafCertificate(X509Ptr certificate, EvpPkeyPtr key);

  X509 *certificate() const noexcept { return certificate_.get(); }
  EVP_PKEY *key() const noexcept { return key_.get(); }
  std::string pem() const;  // the certificate alone, never the key

  std::chrono::system_clock::time_point not_before, not_after;

 private:
  X509Ptr certificate_;
  EvpPkeyPtr key_;
};

class CertificateAuthority {
 public:
  // A new CA with EC P-256 keys, valid for `validity` (its leaves for `leaf_validity`,
  // never past the CA's own end). hosts are normalised host names (lower-case, no trailing
  // dot, punycode for IDN, no IP address, no wildcard). Throws std::invalid_argument for
  // an empty list, a name that is not one, or a validity that is not positive.
  CertificateAuthority(std::vector<std::string> hosts, std::chrono::seconds validity,
                       std::chrono::seconds leaf_validity = std::chrono::hours(24));
  CertificateAuthority(const CertificateAuthority &) = delete;
  CertificateAuthority &operator=(const CertificateAuthority &) = delete;

  const std::vector<std::string> &hosts() const noexcept { return hosts_; }
  const std::string &certificate_pem() const noexcept { return certificate_pem_; }
  X509 *certificate() const noexcept { return certificate_.get(); }

  // The leaf for host, one of hosts: SAN DNS and CN the host (no CN for a host longer than
  // a CN may be), issued on first use and reissued once within 10% of leaf_validity of its
  // end. Throws std::invalid_argument naming the host when it is not one of hosts.
  // Thread-safe.
  std::shared_ptr<const LeafCertificate> leaf_for(const std::string &host);

 private:
  std::shared_ptr<const LeafCertificate> issue(const std::string &host) const;

  std::vector<std::string> hosts_;
  std::chrono::seconds leaf_validity_;
  EvpPkeyPtr key_;
  X509Ptr certificate_;
  std::string certificate_pem_;
  std::chrono::system_clock::time_point not_after_;
  EvpPkeyPtr leaf_key_;
  std::mutex leaves_mutex_;
  std::map<std::string, std::shared_ptr<const LeafCertificate>> leaves_;
};

// The critical nameConstraints extension the CA carries: hosts as permitted DNS subtrees,
// all of IPv4 and IPv6 excluded. Exposed so a test can build its own CA with it and show
// what it refuses. Throws std::invalid_argument as the CA does.
X509ExtensionPtr make_name_constraints(const std::vector<std::string> &hosts);

// certificate as one PEM block.
std::string certificate_to_pem(const X509 *certificate);

// what, followed by OpenSSL's queued errors, oldest first (the queue is emptied).
std::string openssl_error(const std::string &what);

}  // namespace sandbox_host::egress
