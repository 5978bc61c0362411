// kubeconfig (docs/design.md#broker-protocol): writes a held lab lease's kubeconfig where the
// requester's sandbox reads it, with its loopback clusters pointed at the SOCKS5 proxy of
// that sandbox (kubeconfig_proxy.hpp), and answers the file's path. Getting the kubeconfig
// takes the container runtime's socket, which the sandbox closes.
//
// The lease's kubeconfig is a file the operator's lab tooling keeps per lease,
// <leases_dir>/<lease>.yaml (`kind get kubeconfig --name <lease> > ...`), not a command the
// op runs: Reply::run hands a command's output to the requester, and the SDK gives an op no
// way to read it first, while this op must rewrite it before the requester sees it.
#include "kubeconfig_proxy.hpp"

#include <sandbox_host/command_op.hpp>
#include <sandbox_host/module.hpp>
#include <sandbox_host/request_pattern.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace {

using sandbox_host::in_quotes;
using sandbox_host::refusal;
using sandbox_host::UniqueFd;

// A lab lease's name, as the lab op takes it: a DNS label with dots, so also a file name.
constexpr const char *kResourcePattern = "^[a-z0-9][a-z0-9.-]{0,62}$";
// A kind kubeconfig is a few KiB; the bound keeps a runaway file out of the broker.
constexpr off_t kMaxLeaseBytes = 1 << 20;
// The kubeconfig holds the lease's client key. Every requester runs as the broker's user
// (the broker answers no other), so the owner alone needs to read it.
constexpr mode_t kOutputMode = 0600;

std::string errno_text(int error) {
  return std::generic_category().message(error);
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The directory at path, opened without following a symbolic link at its end, and checked:
// the broker's user's (or root's, when root_may_own), and writable by no one else, so that
// no other account can plant, swap or remove a file in it. Throws std::invalid_argument
// naming what is wrong.
UniqueFd open_trusted_directory(const std::string &path, bool root_may_own) {
  UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) {
    const int error = errno;
    if (error == ENOENT) throw std::invalid_argument(path + " does not exist");
    // O_DIRECTORY refuses a symbolic link with ENOTDIR before O_NOFOLLOW's ELOOP.
    if (error == ELOOP || error == ENOTDIR) {
      struct stat st {};
      const bool link = ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
      throw std::invalid_argument(path + (link ? " is a symbolic link" : " is not a directory"));
    }
    throw std::invalid_argument("cannot open " + path + ": " + errno_text(error));
  }
  struct stat st {};
  if (::fstat(dir.get(), &st) != 0) {
    throw std::invalid_argument("cannot examine " + path + ": " + errno_text(errno));
  }
  if (st.st_uid != ::geteuid() && !(root_may_own && st.st_uid == 0)) {
    throw std::invalid_argument(path + " is owned by uid " + std::to_string(st.st_uid) +
                                ", not the broker's uid " + std::to_string(::geteuid()));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw std::invalid_argument(path + " is writable by its group or others (mode " +
                                octal_mode(st.st_mode) + ")");
  }
  return dir;
}

std::string absolute_setting(const sandbox_host::OpConfig &config, const char *key,
                             const char *what) {
  const auto value = config.value(key);
  if (!value) throw config.error(key, std::string("required: ") + what);
  if (!std::filesystem::path(*value).is_absolute()) {
    throw config.error(key, "must be an absolute path, not " + in_quotes(*value));
  }
  std::string normal = std::filesystem::path(*value).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

// A name no other file of the directory has: a random one, created with O_EXCL.
std::string temporary_name(const std::string &file) {
  unsigned char random[8];
  if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
    throw std::runtime_error("cannot draw a temporary name: " + errno_text(errno));
  }
  std::string name = "." + file + ".";
  for (unsigned char byte : random) {
    static constexpr char kHex[] = "0123456789abcdef";
    name += kHex[byte >> 4];
    name += kHex[byte & 0xf];
  }
  return name;
}

// A temporary file that is removed unless it was renamed into place.
class TemporaryFile {
 public:
  TemporaryFile(int dir, std::string name, UniqueFd fd)
      : dir_(dir), name_(std::move(name)), fd_(std::move(fd)) {}
  ~TemporaryFile() {
    if (!kept_) ::unlinkat(dir_, name_.c_str(), 0);
  }
  TemporaryFile(const TemporaryFile &) = delete;
  TemporaryFile &operator=(const TemporaryFile &) = delete;

  int fd() const noexcept { return fd_.get(); }
  void keep() noexcept { kept_ = true; }

 private:
  int dir_;
  std::string name_;
  UniqueFd fd_;
  bool kept_ = false;
};

class KubeconfigOp final : public sandbox_host::BrokerOp {
 public:
  explicit KubeconfigOp(const sandbox_host::HostInfo &host) : op_(host.config.op()) {
    const auto &config = host.config;
    config.allow_only({"leases_dir", "output_dir"});
    leases_dir_ = absolute_setting(config, "leases_dir",
                                   "the directory of the leases' kubeconfigs, <lease>.yaml");
    output_dir_ = absolute_setting(config, "output_dir",
                                   "the directory the sandboxes read the kubeconfigs from");
    try {
      open_trusted_directory(leases_dir_, true);
    } catch (const std::invalid_argument &e) {
      throw config.error("leases_dir", e.what());
    }
    // Made the way the egress directory is (0755), for the operator to bind into sandboxes.
    if (::mkdir(output_dir_.c_str(), 0755) != 0 && errno != EEXIST) {
      throw config.error("output_dir", "cannot create " + output_dir_ + ": " + errno_text(errno));
    }
    try {
      open_trusted_directory(output_dir_, false);
    } catch (const std::invalid_argument &e) {
      throw config.error("output_dir", e.what());
    }
  }

  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &requester,
              sandbox_host::Reply &reply) override {
    if (!request.args.empty()) {
      throw refusal(op_, "takes no arguments; the lease is the request's resource");
    }
    if (!request.input.empty()) throw refusal(op_, "takes no input");
    const std::string lease = lease_of(request);
    const std::string proxy = proxy_of(requester);
    const std::string raw = read_lease(lease);
    sandbox_host::kubeconfig::ProxiedKubeconfig proxied;
    try {
      proxied = sandbox_host::kubeconfig::proxy_kubeconfig(raw, proxy);
    } catch (const std::exception &e) {
      throw refusal(op_, "lease " + in_quotes(lease) + ": " + e.what());
    }
    reply.out(write_output(lease + ".kubeconfig", proxied.document) + "\n");
    reply.code(0);
  }

 private:
  std::string lease_of(const sandbox_host::Request &request) const {
    static const sandbox_host::RequestPattern resource(kResourcePattern);
    if (request.resource.empty()) {
      throw refusal(op_, "a resource is required: the lab lease's name");
    }
    if (!resource.matches(request.resource)) {
      throw refusal(
          op_, "resource " + in_quotes(request.resource) + " does not match " + kResourcePattern);
    }
    return request.resource;
  }

  std::string proxy_of(const sandbox_host::Requester &requester) const {
    const auto getenv = [&requester](const std::string &name) {
      for (const auto &entry : requester.env) {
        if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
            entry[name.size()] == '=') {
          return entry.substr(name.size() + 1);
        }
      }
      return std::string();
    };
    try {
      return sandbox_host::kubeconfig::socks_proxy(getenv);
    } catch (const std::invalid_argument &e) {
      throw refusal(op_, "the requester's SOCKS5 proxy: " + std::string(e.what()) +
                             "; the broker hands over only the variables ops." + op_ +
                             ".requester_env names");
    }
  }

  std::string read_lease(const std::string &lease) const {
    const std::string file = lease + ".yaml";
    const std::string path = leases_dir_ + "/" + file;
    UniqueFd dir;
    try {
      dir = open_trusted_directory(leases_dir_, true);
    } catch (const std::invalid_argument &e) {
      throw refusal(op_, "leases_dir " + std::string(e.what()));
    }
    UniqueFd fd(::openat(dir.get(), file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
      const int error = errno;
      if (error == ENOENT) {
        throw refusal(op_, "no lease " + in_quotes(lease) + ": " + path + " does not exist");
      }
      if (error == ELOOP) throw refusal(op_, "lease file " + path + " is a symbolic link");
      throw refusal(op_, "cannot open lease file " + path + ": " + errno_text(error));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
      throw refusal(op_, "cannot examine lease file " + path + ": " + errno_text(errno));
    }
    if (!S_ISREG(st.st_mode)) throw refusal(op_, "lease file " + path + " is not a regular file");
    if (st.st_size > kMaxLeaseBytes) {
      throw refusal(op_, "lease file " + path + " is " + std::to_string(st.st_size) +
                             " bytes, more than " + std::to_string(kMaxLeaseBytes));
    }
    std::string text;
    char buffer[16384];
    for (;;) {
      const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw refusal(op_, "cannot read lease file " + path + ": " + errno_text(errno));
      if (got == 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
      if (text.size() > static_cast<std::size_t>(kMaxLeaseBytes)) {
        throw refusal(op_, "lease file " + path + " grew past " + std::to_string(kMaxLeaseBytes) +
                               " bytes while it was read");
      }
    }
    return text;
  }

  // Writes text to output_dir/file atomically (a temporary file renamed over it), never
  // through a symbolic link, and returns the file's path.
  std::string write_output(const std::string &file, const std::string &text) const {
    const std::string path = output_dir_ + "/" + file;
    UniqueFd dir;
    try {
      dir = open_trusted_directory(output_dir_, false);
    } catch (const std::invalid_argument &e) {
      throw refusal(op_, "output_dir " + std::string(e.what()));
    }
    struct stat existing {};
    if (::fstatat(dir.get(), file.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISREG(existing.st_mode)) {
      throw refusal(op_, path + " exists and is " +
                             (S_ISLNK(existing.st_mode) ? "a symbolic link" : "no regular file") +
                             "; it is not replaced");
    }
    const std::string name = temporary_name(file);
    UniqueFd fd(::openat(dir.get(), name.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kOutputMode));
    if (!fd) {
      throw refusal(op_, "cannot create a file in " + output_dir_ + ": " + errno_text(errno));
    }
    TemporaryFile temporary(dir.get(), name, std::move(fd));
    // The mode as meant, whatever the broker's umask.
    if (::fchmod(temporary.fd(), kOutputMode) != 0) {
      throw refusal(
          op_, "cannot set the mode of " + output_dir_ + "/" + name + ": " + errno_text(errno));
    }
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t wrote = ::write(temporary.fd(), text.data() + done, text.size() - done);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0) {
        throw refusal(op_, "cannot write " + output_dir_ + "/" + name + ": " + errno_text(errno));
      }
      done += static_cast<std::size_t>(wrote);
    }
    if (::fsync(temporary.fd()) != 0) {
      throw refusal(op_, "cannot write " + output_dir_ + "/" + name + ": " + errno_text(errno));
    }
    if (::renameat(dir.get(), name.c_str(), dir.get(), file.c_str()) != 0) {
      throw refusal(op_, "cannot put " + path + " in place: " + errno_text(errno));
    }
    temporary.keep();
    return path;
  }

  std::string op_;
  std::string leases_dir_;
  std::string output_dir_;
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(KubeconfigOp, "kubeconfig", "0.1.0",
                              "writes a lab lease's kubeconfig, pointed at the sandbox's proxy")
