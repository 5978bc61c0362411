// What the sign tests share: a throwaway keyring with a freshly generated key for the
// broker's user (its agent started by gpg and stopped with the keyring), a real broker
// serving the sign op, and git run inside a namespaces sandbox with the egress directory's
// gpg script as its gpg.program.
#pragma once

#include "served_broker.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sandbox_host::test {

// argv prefix that runs a command as uid (nothing for root).
std::vector<std::string> as_uid(unsigned uid);

class KeyRing {
 public:
  // A GNUPGHOME of mode 0700 owned by uid, in a directory of its own, with one ed25519
  // signing key for "Test <t@example.test>" and no passphrase.
  explicit KeyRing(unsigned uid);
  ~KeyRing();
  KeyRing(const KeyRing &) = delete;
  KeyRing &operator=(const KeyRing &) = delete;

  const std::filesystem::path &home() const noexcept { return home_; }
  const std::string &fingerprint() const noexcept { return fingerprint_; }
  // Where the agent listens (gpgconf --list-dirs agent-socket).
  const std::string &agent_socket() const noexcept { return agent_socket_; }
  // The environment of a host command that uses this keyring.
  std::vector<std::string> env() const;
  // A command (gpg, git, ...) run on the host as the keyring's user with env().
  ProcessResult run(const std::vector<std::string> &argv) const;

 private:
  unsigned uid_;
  std::filesystem::path dir_, home_;
  std::string fingerprint_, agent_socket_;
};

// The [ops.sign] table for command, keys and more TOML lines.
std::string sign_table(const std::string &command, const std::vector<std::string> &keys,
                       const std::string &more = "");

// A broker as uid serving ping and sign with op_table, over its spool and its socket, and the
// egress directory's gpg script (egress::gpg_program of the install's sandbox-host) beside it.
class SigningBroker {
 public:
  SigningBroker(unsigned uid, const std::string &op_table,
                std::vector<std::pair<std::string, std::string>> scripts = {});

  ServedBroker &broker() noexcept { return broker_; }
  const std::filesystem::path &gpg_script() const noexcept { return gpg_script_; }
  std::filesystem::path repo() const { return broker_.sandbox_dir() / "repo"; }

  // script run by /bin/sh inside a namespaces sandbox as the broker's user, with the
  // broker in SANDBOX_HOST_BROKER; the sandbox's socket directory holds the spool and repo.
  ProcessResult in_sandbox(const std::string &script) const;
  // Shell lines, for in_sandbox, that make repo() a repository whose gpg.program is the
  // gpg script and whose signing key is key.
  std::string make_repo(const std::string &key) const;
  // The gpg script run on the host as git would run it, as the broker's user, payload on
  // stdin; the broker named by SANDBOX_HOST_BROKER as in the sandbox.
  ProcessResult gpg(const std::vector<std::string> &args, const std::string &payload) const;

 private:
  ServedBroker broker_;
  std::filesystem::path gpg_script_;
};

}  // namespace sandbox_host::test
