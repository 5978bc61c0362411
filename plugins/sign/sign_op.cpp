// sign (docs/design.md#broker-protocol): signs a payload with the person's key on the host, where
// gpg reaches its agent, for git's gpg.program in the sandbox (`sandbox-host sandbox gpg`); and
// verifies a signature against the host's keyring, which holds the public keys the sandbox
// lacks. The sandbox never sees the key, the keyring or the agent's socket: it sends the
// payload and gets back what gpg wrote.
//
//   [ops.sign]
//   command = "/usr/bin/gpg"
//   keys = ["CA9024EBED071C3E029901473554521136593CD8"]
//   gnupg_home = "/home/me/.gnupg"   # optional; gpg's own default otherwise
//   timeout_ms = 60000               # gpg is killed after this
//   verify = true                    # whether `verify` requests are answered
//
// Requests: args ["sign", KEY] with the payload as input, answered with the armoured
// detached signature on out and gpg's status lines (--status-fd=2) and messages on err;
// args ["verify", SIGNATURE] with the signed data as input, answered with the status
// lines on out (--status-fd=1) and gpg's messages on err. The code is gpg's.
#include "signing_keys.hpp"

#include <sandbox_host/command_op.hpp>
#include <sandbox_host/module.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace {
namespace fs = std::filesystem;
using sandbox_host::in_quotes;
using sandbox_host::refusal;

// A detached signature is a few hundred bytes; this leaves room for many at once.
constexpr std::size_t kMaxSignatureBytes = 64 * 1024;
// A key id, fingerprint or git's "Name <email>" fallback.
constexpr std::size_t kMaxKeyBytes = 512;

std::string executable(const sandbox_host::OpConfig &config) {
  const auto command = config.value("command");
  if (!command) throw config.error("command", "required: the absolute path of gpg");
  if (!fs::path(*command).is_absolute()) {
    throw config.error("command", in_quotes(*command) + " is not an absolute path");
  }
  if (::access(command->c_str(), X_OK) != 0 || !fs::is_regular_file(*command)) {
    throw config.error("command", in_quotes(*command) + " is not an executable file");
  }
  return *command;
}

std::optional<std::string> gnupg_home(const sandbox_host::OpConfig &config) {
  auto home = config.value("gnupg_home");
  if (!home) return std::nullopt;
  std::error_code ec;
  if (!fs::path(*home).is_absolute() || !fs::is_directory(*home, ec)) {
    throw config.error("gnupg_home", in_quotes(*home) + " is not an absolute directory");
  }
  return home;
}

std::chrono::milliseconds timeout(const sandbox_host::OpConfig &config) {
  constexpr uint64_t kDefault = 60'000, kMax = 3'600'000;
  const auto text = config.value("timeout_ms");
  if (!text) return std::chrono::milliseconds(kDefault);
  uint64_t ms = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), ms);
  // Zero would mean no limit, and a gpg that hangs must not hold git forever.
  if (ec != std::errc() || end != text->data() + text->size() || ms == 0 || ms > kMax) {
    throw config.error("timeout_ms", "must be a whole number from 1 to " + std::to_string(kMax) +
                                         ", not " + in_quotes(*text));
  }
  return std::chrono::milliseconds(ms);
}

bool verify_allowed(const sandbox_host::OpConfig &config) {
  const auto text = config.value("verify");
  if (!text) return true;
  if (*text != "true" && *text != "false") {
    throw config.error("verify", "must be true or false, not " + in_quotes(*text));
  }
  return *text == "true";
}

// The signature to verify, in a file of the broker's own that gpg reads by name; removed
// when the request is answered.
class SignatureFile {
 public:
  explicit SignatureFile(const std::string &signature) {
    std::string pattern = (fs::temp_directory_path() / "sandbox-host-sign-XXXXXX").string();
    sandbox_host::UniqueFd fd(::mkostemp(pattern.data(), O_CLOEXEC));
    if (!fd) {
      throw std::system_error(errno, std::generic_category(), "sign: create " + pattern);
    }
    path_ = pattern;
    for (std::size_t at = 0; at < signature.size();) {
      const ssize_t n = ::write(fd.get(), signature.data() + at, signature.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = errno;
        ::unlink(path_.c_str());  // no destructor runs for a constructor that throws
        throw std::system_error(error, std::generic_category(), "sign: write " + path_);
      }
      at += static_cast<std::size_t>(n);
    }
  }
  ~SignatureFile() { ::unlink(path_.c_str()); }
  SignatureFile(const SignatureFile &) = delete;
  SignatureFile &operator=(const SignatureFile &) = delete;
  const std::string &path() const noexcept { return path_; }

 private:
  std::string path_;
};

class SignOp final : public sandbox_host::BrokerOp {
 public:
  explicit SignOp(const sandbox_host::HostInfo &host)
      : op_(name_with_known_keys_only(host.config)),
        command_(executable(host.config)),
        keys_(host.config),
        gnupg_home_(gnupg_home(host.config)),
        timeout_(timeout(host.config)),
        verify_(verify_allowed(host.config)),
        home_(broker_home()) {}

  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &,
              sandbox_host::Reply &reply) override {
    const auto &args = request.args;
    if (args.empty() || (args[0] != "sign" && args[0] != "verify")) {
      throw refusal(op_, "the first argument must be sign or verify");
    }
    if (args.size() != 2) {
      throw refusal(op_, args[0] == "sign" ? "sign takes one key: args [\"sign\", KEY]"
                                           : "verify takes one signature: args [\"verify\", SIG]");
    }
    if (args[0] == "sign") return sign(args[1], request.input, reply);
    verify(args[1], request.input, reply);
  }

 private:
  void sign(const std::string &key, const std::string &payload, sandbox_host::Reply &reply) const {
    if (key.size() > kMaxKeyBytes) {
      throw refusal(op_, "a key of " + std::to_string(key.size()) + " bytes is no key id");
    }
    const std::string local_user = keys_.local_user_for(op_, key);
    run(reply, payload,
        {"--batch", "--no-tty", "--status-fd=2", "--detach-sign", "--armor", "--local-user",
         local_user});
  }

  void verify(const std::string &signature, const std::string &data,
              sandbox_host::Reply &reply) const {
    if (!verify_) throw refusal(op_, "verify is off here (ops." + op_ + ".verify = false)");
    if (signature.empty()) throw refusal(op_, "verify: the signature is empty");
    if (signature.size() > kMaxSignatureBytes) {
      throw refusal(op_, "verify: a signature of " + std::to_string(signature.size()) +
                             " bytes, more than " + std::to_string(kMaxSignatureBytes));
    }
    const SignatureFile file(signature);
    // A signature from the sandbox must not make the host's gpg fetch or import keys.
    run(reply, data,
        {"--batch", "--no-tty", "--no-auto-key-retrieve", "--no-auto-key-import",
         "--keyid-format=long", "--status-fd=1", "--verify", file.path(), "-"});
  }

  void run(sandbox_host::Reply &reply, const std::string &input,
           std::vector<std::string> args) const {
    sandbox_host::HostCommand command;
    command.path = command_;
    command.args = std::move(args);
    command.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"};
    if (!home_.empty()) command.env.push_back("HOME=" + home_);
    if (gnupg_home_) command.env.push_back("GNUPGHOME=" + *gnupg_home_);
    command.input = input;
    command.timeout = timeout_;
    try {
      reply.run(command);
    } catch (const std::exception &e) {
      // Killed at the timeout, or could not start: git gets a failure, never a hang.
      throw refusal(op_, e.what());
    }
  }

  // Refuses a key of the table the op does not read, before any is read.
  static std::string name_with_known_keys_only(const sandbox_host::OpConfig &config) {
    config.allow_only({"command", "keys", "gnupg_home", "timeout_ms", "verify"});
    return config.op();
  }

  // The broker's HOME, where gpg finds ~/.gnupg without gnupg_home.
  static std::string broker_home() {
    const char *home = std::getenv("HOME");
    return home != nullptr && home[0] == '/' ? home : "";
  }

  std::string op_;
  std::string command_;
  sign_op::SigningKeys keys_;
  std::optional<std::string> gnupg_home_;
  std::chrono::milliseconds timeout_;
  bool verify_;
  std::string home_;
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(SignOp, "sign", "0.1.0",
                              "signs with the person's key on the host, for git in the sandbox")
