// A real broker for a test: `sandbox-host serve` from an install the test user can run,
// as root or as nobody, on a spool of its own; and the clients that ask it.
#pragma once

#include <fixtures.hpp>
#include <process.hpp>

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sandbox_host::test {

struct BrokerSetup {
  unsigned uid = 0;  // the broker's user, and its clients'
  std::string identity = "lock";
  int tick_ms = 100;
  int max_request_bytes = 0;  // 0: the default
  std::vector<std::string> ops{"ping", "whoami"};
  std::string op_tables;  // TOML appended to the config: [ops.<name>] tables; "{root}" is root()
  // Scripts written into root() before the broker starts (name, text), for op_tables.
  std::vector<std::pair<std::string, std::string>> scripts;
  bool socket = false;  // also serve <root>/broker.sock, labelled test-sandbox
  // More sockets, <root>/<label>.sock each, labelled <label>.
  std::vector<std::string> more_sockets;
  std::string broker_keys;  // TOML lines appended to the [broker] table
  int nofile = 0;           // the broker's RLIMIT_NOFILE, soft and hard; 0: inherited
  bool poll = false;        // serve --poll: no inotify, only the scan every tick
  // The spool inside <root>/sandbox, which a sandbox gets as its socket directory.
  bool spool_in_sandbox_dir = false;
};

// The default setup for uid and identity.
inline BrokerSetup setup_for(unsigned uid, std::string identity = "lock") {
  BrokerSetup setup;
  setup.uid = uid;
  setup.identity = std::move(identity);
  return setup;
}

class ServedBroker {
 public:
  explicit ServedBroker(BrokerSetup setup);
  ~ServedBroker();
  ServedBroker(const ServedBroker &) = delete;
  ServedBroker &operator=(const ServedBroker &) = delete;

  const std::filesystem::path &root() const noexcept { return root_; }
  std::filesystem::path spool() const { return state_ / "spool"; }
  std::filesystem::path socket() const { return root_ / "broker.sock"; }
  std::filesystem::path socket(const std::string &label) const { return root_ / (label + ".sock"); }
  std::filesystem::path sandbox_dir() const { return root_ / "sandbox"; }
  const UnprivilegedInstall &install() const noexcept { return install_; }
  std::string sandbox_host() const { return install_.sandbox_host(); }
  pid_t pid() const { return broker_ ? broker_->pid() : -1; }

  // argv prefix that runs a command as the broker's user.
  std::vector<std::string> as_user() const;
  // argv of `sandbox-host ask <args> --spool <spool>` (or `--socket <socket>`) as the
  // broker's user.
  std::vector<std::string> ask_argv(const std::vector<std::string> &args,
                                    bool socket = false) const;
  // That command, run to its end.
  ProcessResult ask(const std::vector<std::string> &args) const;
  // spool_client <spool> <case> [<json> [<uid>]], as `runner` (default: the broker's user).
  ProcessResult spool_client(const std::string &which, const std::string &json = R"({"op":"ping"})",
                             std::vector<std::string> runner = {}) const;
  // A file in root() the broker's user may run (a host command for an operation).
  std::filesystem::path write_script(const std::string &name, const std::string &text) const;
  // The audit records (JSON lines), once there are at least `at_least` of them or 2 s
  // passed: the broker audits a refusal after it has answered it.
  std::vector<std::map<std::string, std::string>> audit(std::size_t at_least = 0) const;
  // Kills the broker with signal and reaps it.
  ProcessResult stop(int signal);

 private:
  void start();

  BrokerSetup setup_;
  UnprivilegedInstall install_;
  std::filesystem::path root_, state_;
  std::unique_ptr<RunningProcess> broker_;
};

// The lines of out, split on '\n'.
std::vector<std::string> lines(const std::string &out);
// The value of the "key=value" line of out, or "" without one.
std::string field(const std::string &out, const std::string &key);
// The number of descriptors process pid holds.
int open_descriptors(pid_t pid);
// The count once an answer just given has let go of everything (no spool request or reply
// held, the count steady for 50 ms): a client returns when the last frame is in, which can
// be before the broker closes that request's descriptors.
int settled_descriptors(pid_t pid);
// Each open descriptor of pid and what it names, a line each, for a failure's message.
std::string describe_descriptors(pid_t pid);

}  // namespace sandbox_host::test
