#include <sandbox_host/egress/proxy/certificate_authority.hpp>
#include <sandbox_host/egress/proxy/egress_dir.hpp>
#include <sandbox_host/host/file_replace.hpp>
#include <sandbox_host/host/shell_quote.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace sandbox_host::egress {
namespace fs = std::filesystem;
namespace {

using BioPtr = OpenSslPtr<BIO, BIO_free_all>;

[[noreturn]] void fail(const std::string &what, int error = errno) {
  throw std::system_error(error, std::generic_category(), what);
}

std::string octal_mode(mode_t mode) {
  return (std::ostringstream() << '0' << std::oct << (mode & 07777)).str();
}

// Every certificate in text, in order; any other PEM block (a key, a CRL, a TRUSTED
// CERTIFICATE with its trust settings) and anything that does not parse are left out.
std::vector<X509Ptr> certificates_in(std::string_view text) {
  BioPtr in(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!in) throw std::runtime_error("BIO_new_mem_buf failed");
  // An encrypted block would otherwise make OpenSSL ask the terminal for a password.
  auto no_password = [](char *, int, int, void *) { return 0; };
  std::vector<X509Ptr> certificates;
  for (;;) {
    const auto unread = BIO_pending(in.get());
    if (X509 *certificate = PEM_read_bio_X509(in.get(), nullptr, no_password, nullptr)) {
      certificates.emplace_back(certificate);
      continue;
    }
    ERR_clear_error();
    // A block that failed to parse was consumed all the same; stop at the end or where
    // OpenSSL stopped making progress.
    if (BIO_pending(in.get()) == 0 || BIO_pending(in.get()) == unread) break;
  }
  return certificates;
}

std::string read_file(const fs::path &path, const std::string &what) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) fail("cannot read " + what + " " + path.string());
  std::string contents;
  std::array<char, 65536> buffer{};
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n == 0) return contents;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot read " + what + " " + path.string());
    }
    contents.append(buffer.data(), static_cast<std::size_t>(n));
  }
}

// Opens the directory name under parent_fd, creating it 0755 when missing, and refuses
// one that someone else could change under the sandbox's feet.
UniqueFd open_own_directory(int parent_fd, const fs::path &name, const fs::path &shown) {
  const bool created = ::mkdirat(parent_fd, name.c_str(), 0755) == 0;
  if (!created && errno != EEXIST) fail("cannot create egress directory " + shown.string());
  struct stat link {};
  if (::fstatat(parent_fd, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) != 0) {
    fail("cannot stat egress directory " + shown.string());
  }
  if (S_ISLNK(link.st_mode)) {
    fail("egress directory " + shown.string() +
             " is a symbolic link; it must be a directory of its own",
         ELOOP);
  }
  if (!S_ISDIR(link.st_mode)) {
    fail("egress directory " + shown.string() + " is not a directory", ENOTDIR);
  }
  // O_NOFOLLOW: a directory swapped for a link since the check is refused all the same.
  UniqueFd fd(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) fail("cannot open egress directory " + shown.string());
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) fail("cannot stat egress directory " + shown.string());
  if (status.st_uid != ::geteuid()) {
    fail("egress directory " + shown.string() + " belongs to uid " + std::to_string(status.st_uid) +
             ", not to this user (uid " + std::to_string(::geteuid()) + ")",
         EPERM);
  }
  if (created) {
    // Exactly 0755 whatever the umask: sandboxed processes must read it.
    if (::fchmod(fd.get(), 0755) != 0) fail("cannot chmod egress directory " + shown.string());
  } else if ((status.st_mode & 022) != 0) {
    fail("egress directory " + shown.string() + " may be written by group or others (mode " +
             octal_mode(status.st_mode) + "); make it 0755",
         EPERM);
  }
  return fd;
}

// gh reads the login from hosts.yml in both its formats: the single-account keys and,
// from gh 2.40 on (config version 1), the users map.
std::string gh_hosts() {
  const std::string login(kGhLogin);
  std::string yaml = "github.com:\n";
  yaml += "    users:\n";
  yaml += "        " + login + ":\n";
  yaml += "            oauth_token: " + login + "\n";
  yaml += "    git_protocol: https\n";
  yaml += "    oauth_token: " + login + "\n";
  yaml += "    user: " + login + "\n";
  return yaml;
}

constexpr std::string_view kGhConfig =
    "version: \"1\"\n"
    "git_protocol: https\n"
    "prompt: disabled\n";

}  // namespace

std::string gpg_program(const fs::path &exe) {
  return "#!/bin/sh\nexec " + shell_quoted(exe.string()) + " sandbox gpg \"$@\"\n";
}

void write_egress(const fs::path &dir_given, std::string_view ca_pem, const fs::path &exe,
                  const fs::path &system_roots) {
  if (dir_given.empty()) {
    throw std::invalid_argument("no egress directory to write (is the runtime directory set?)");
  }
  // "a/egress/" names a/egress, not an empty name inside it.
  fs::path dir = dir_given.lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  if (!exe.is_absolute()) {
    throw std::invalid_argument("the gpg script's executable \"" + exe.string() +
                                "\" is not an absolute path");
  }
  const std::vector<X509Ptr> ca = certificates_in(ca_pem);
  if (ca.size() != 1) {
    throw std::invalid_argument("the egress CA's PEM holds " + std::to_string(ca.size()) +
                                " certificates, not one");
  }
  const std::vector<X509Ptr> roots =
      certificates_in(read_file(system_roots, "the system roots file"));
  if (roots.empty()) {
    fail("no certificate in the system roots file " + system_roots.string(), EINVAL);
  }
  const std::string ca_text = certificate_to_pem(ca.front().get());
  std::string bundle = ca_text;
  for (const auto &root : roots) bundle += certificate_to_pem(root.get());

  if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
  const UniqueFd dir_fd = open_own_directory(AT_FDCWD, dir, dir);
  const UniqueFd gh_fd = open_own_directory(dir_fd.get(), kEgressGh, dir / kEgressGh);
  replace_file(gh_fd.get(), dir / kEgressGh / "hosts.yml", gh_hosts(), 0644);
  replace_file(gh_fd.get(), dir / kEgressGh / "config.yml", kGhConfig, 0644);
  replace_file(dir_fd.get(), dir / kEgressCa, ca_text, 0644);
  replace_file(dir_fd.get(), dir / kEgressBundle, bundle, 0644);
  replace_file(dir_fd.get(), dir / kEgressGpg, gpg_program(exe), 0755);
}

}  // namespace sandbox_host::egress
