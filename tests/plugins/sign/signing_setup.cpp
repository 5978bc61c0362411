#include "signing_setup.hpp"

#include <sandbox_host/egress/proxy/egress_dir.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace sandbox_host::test {
namespace fs = std::filesystem;

std::vector<std::string> as_uid(unsigned uid) {
  if (uid == 0) return {};
  return {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
          "--clear-groups", "--"};
}

KeyRing::KeyRing(unsigned uid) : uid_(uid) {
  char pattern[] = "/tmp/sign-keyring-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp");
  dir_ = pattern;
  home_ = dir_ / "gnupg";
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::create_directory(home_);
  fs::permissions(home_, fs::perms::owner_all);
  for (const auto &path : {dir_, home_}) {
    if (::chown(path.c_str(), uid, uid) != 0) throw std::runtime_error("chown " + path.string());
  }
  const ProcessResult made = run({"/usr/bin/gpg", "--batch", "--passphrase", "", "--quick-gen-key",
                                  "Test <t@example.test>", "ed25519", "sign", "never"});
  if (made.code != 0) throw std::runtime_error("gpg --quick-gen-key: " + made.err);
  const ProcessResult listed =
      run({"/usr/bin/gpg", "--batch", "--with-colons", "--list-secret-keys"});
  for (const auto &line : lines(listed.out)) {
    // fpr:::::::::<fingerprint>:
    if (line.rfind("fpr:", 0) == 0 && fingerprint_.empty()) {
      fingerprint_ = line.substr(12, line.size() - 13);
    }
  }
  if (fingerprint_.size() != 40) throw std::runtime_error("no fingerprint in: " + listed.out);
  agent_socket_ = run({"/usr/bin/gpgconf", "--list-dirs", "agent-socket"}).out;
  if (!agent_socket_.empty() && agent_socket_.back() == '\n') agent_socket_.pop_back();
}

KeyRing::~KeyRing() {
  run({"/usr/bin/gpgconf", "--kill", "gpg-agent"});
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::vector<std::string> KeyRing::env() const {
  return {"PATH=/usr/bin:/bin", "HOME=" + dir_.string(), "GNUPGHOME=" + home_.string(),
          "LANG=C.UTF-8"};
}

ProcessResult KeyRing::run(const std::vector<std::string> &argv) const {
  std::vector<std::string> full = as_uid(uid_);
  full.insert(full.end(), argv.begin(), argv.end());
  return run_process(full, with_env(env()));
}

std::string sign_table(const std::string &command, const std::vector<std::string> &keys,
                       const std::string &more) {
  std::string table = "[ops.sign]\ncommand = \"" + command + "\"\nkeys = [";
  for (std::size_t i = 0; i < keys.size(); ++i) table += (i ? ", \"" : "\"") + keys[i] + "\"";
  return table + "]\n" + more;
}

namespace {

BrokerSetup signing_setup(unsigned uid, const std::string &op_table,
                          std::vector<std::pair<std::string, std::string>> scripts) {
  BrokerSetup setup = setup_for(uid);
  setup.ops = {"ping", "sign"};
  setup.op_tables = op_table;
  setup.scripts = std::move(scripts);
  setup.spool_in_sandbox_dir = true;
  setup.socket = true;
  return setup;
}

}  // namespace

SigningBroker::SigningBroker(unsigned uid, const std::string &op_table,
                             std::vector<std::pair<std::string, std::string>> scripts)
    : broker_(signing_setup(uid, op_table, std::move(scripts))),
      // The very script the egress directory holds, for this install's sandbox-host.
      gpg_script_(broker_.write_script("gpg", egress::gpg_program(broker_.sandbox_host()))) {}

ProcessResult SigningBroker::in_sandbox(const std::string &script) const {
  std::vector<std::string> argv = broker_.as_user();
  for (const std::string &arg :
       {std::string("/usr/bin/env"), std::string("CLAWPATROL_SANDBOX_BACKEND=namespaces"),
        broker_.sandbox_host(), std::string("run"), std::string("--socket-dir"),
        broker_.sandbox_dir().string(), std::string("--read"), broker_.install().dir().string(),
        std::string("--read"), gpg_script_.string(), std::string("--"), std::string("/bin/sh"),
        std::string("-c"),
        "export SANDBOX_HOST_BROKER='" + broker_.spool().string() + "'\n" + script}) {
    argv.push_back(arg);
  }
  return run_process(argv);
}

std::string SigningBroker::make_repo(const std::string &key) const {
  const std::string repo = "'" + this->repo().string() + "'";
  return "set -e\ngit init -q " + repo + "\ncd " + repo +
         "\ngit config user.name Test\ngit config user.email t@example.test\n"
         "git config gpg.program '" +
         gpg_script_.string() + "'\ngit config user.signingkey '" + key + "'\nset +e\n";
}

ProcessResult SigningBroker::gpg(const std::vector<std::string> &args,
                                 const std::string &payload) const {
  const fs::path input = broker_.root() / "payload";
  std::ofstream(input, std::ios::binary) << payload;
  UniqueFd stdin_fd(::open(input.c_str(), O_RDONLY | O_CLOEXEC));
  std::vector<std::string> argv = broker_.as_user();
  argv.push_back("/usr/bin/env");
  argv.push_back("SANDBOX_HOST_BROKER=" + broker_.spool().string());
  argv.push_back(gpg_script_.string());
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.stdin_fd = stdin_fd.get();
  return run_process(argv, options);
}

}  // namespace sandbox_host::test
