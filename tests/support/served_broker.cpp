#include "served_broker.hpp"

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sandbox_host::test {
namespace fs = std::filesystem;

namespace {

void own(const fs::path &path, unsigned uid) {
  if (::chown(path.c_str(), uid, uid) != 0) throw std::runtime_error("chown " + path.string());
}

}  // namespace

ServedBroker::ServedBroker(BrokerSetup setup) : setup_(std::move(setup)) {
  install_.add_module(TEST_MODULE_DIR "/op_whoami.so");
  install_.add_binary(SPOOL_CLIENT);
  char pattern[] = "/tmp/broker-test-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp");
  root_ = pattern;
  fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  fs::create_directories(sandbox_dir());
  own(sandbox_dir(), setup_.uid);
  state_ = setup_.spool_in_sandbox_dir ? sandbox_dir() / "state" : root_ / "state";
  fs::create_directories(state_);
  own(state_, setup_.uid);
  std::ofstream(root_ / "audit.log").flush();
  own(root_ / "audit.log", setup_.uid);
  own(root_, setup_.uid);

  for (const auto &[name, text] : setup_.scripts) write_script(name, text);
  std::string op_tables = setup_.op_tables;
  for (std::size_t at; (at = op_tables.find("{root}")) != std::string::npos;) {
    op_tables.replace(at, 6, root_.string());
  }
  std::ostringstream config;
  config << "module_dirs = [\"" << (install_.dir() / SANDBOX_HOST_MODULE_SUBDIR).string() << "\"]\n"
         << "[ops]\nenabled = [";
  for (std::size_t i = 0; i < setup_.ops.size(); ++i)
    config << (i ? ", " : "") << '"' << setup_.ops[i] << '"';
  config << "]\n"
         << op_tables << "\n"
         << "[broker]\nstate_dir = \"" << state_.string() << "\"\n"
         << "identity = \"" << setup_.identity << "\"\ntick_ms = " << setup_.tick_ms << "\n"
         << (setup_.max_request_bytes != 0
                 ? "max_request_bytes = " + std::to_string(setup_.max_request_bytes) + "\n"
                 : std::string())
         << setup_.broker_keys << "\n"
         << "[audit]\nformat = \"json\"\npath = \"" << (root_ / "audit.log").string() << "\"\n";
  std::ofstream(root_ / "config.toml") << config.str();
  start();
}

ServedBroker::~ServedBroker() {
  broker_.reset();
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void ServedBroker::start() {
  std::vector<std::string> argv;
  if (setup_.nofile > 0) {
    argv = {"/usr/bin/prlimit", "--nofile=" + std::to_string(setup_.nofile), "--"};
  }
  for (auto &arg : as_user()) argv.push_back(std::move(arg));
  for (const std::string &arg : {sandbox_host(), std::string("serve"), std::string("--config"),
                                 (root_ / "config.toml").string()}) {
    argv.push_back(arg);
  }
  if (setup_.poll) argv.push_back("--poll");
  if (setup_.socket) {
    argv.push_back("--socket");
    argv.push_back(socket().string() + "=test-sandbox");
  }
  for (const auto &label : setup_.more_sockets) {
    argv.push_back("--socket");
    argv.push_back(socket(label).string() + "=" + label);
  }
  broker_ = std::make_unique<RunningProcess>(argv);
  // Ready once it answers: bounded, since a broker that never starts fails the test.
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (ask({"ping", "--timeout", "200"}).out == "pong") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto result = broker_->wait(std::chrono::milliseconds(100));
  throw std::runtime_error("the broker did not start: " + result.err);
}

std::vector<std::string> ServedBroker::as_user() const {
  if (setup_.uid == 0) return {};
  return {"/usr/bin/setpriv", "--reuid=" + std::to_string(setup_.uid),
          "--regid=" + std::to_string(setup_.uid), "--clear-groups", "--"};
}

std::vector<std::string> ServedBroker::ask_argv(const std::vector<std::string> &args,
                                                bool socket) const {
  std::vector<std::string> argv = as_user();
  argv.push_back(sandbox_host());
  argv.push_back("ask");
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(socket ? "--socket" : "--spool");
  argv.push_back(socket ? this->socket().string() : spool().string());
  return argv;
}

ProcessResult ServedBroker::ask(const std::vector<std::string> &args) const {
  return run_process(ask_argv(args));
}

ProcessResult ServedBroker::spool_client(const std::string &which, const std::string &json,
                                         std::vector<std::string> runner) const {
  std::vector<std::string> argv = runner.empty() ? as_user() : runner;
  for (const auto &arg : {(install_.dir() / "bin/spool_client").string(), spool().string(), which,
                          json, std::to_string(setup_.uid)}) {
    argv.push_back(arg);
  }
  return run_process(argv);
}

fs::path ServedBroker::write_script(const std::string &name, const std::string &text) const {
  const fs::path path = root_ / name;
  std::ofstream(path) << text;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  return path;
}

std::vector<std::map<std::string, std::string>> ServedBroker::audit(std::size_t at_least) const {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::ifstream in(root_ / "audit.log");
    const auto count = std::count(std::istreambuf_iterator<char>(in), {}, '\n');
    if (static_cast<std::size_t>(count) >= at_least) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::map<std::string, std::string>> records;
  std::ifstream in(root_ / "audit.log");
  std::string line;
  while (std::getline(in, line)) {
    auto object = Poco::JSON::Parser().parse(line).extract<Poco::JSON::Object::Ptr>();
    std::map<std::string, std::string> record;
    for (const auto &name : object->getNames()) record[name] = object->get(name).toString();
    records.push_back(std::move(record));
  }
  return records;
}

ProcessResult ServedBroker::stop(int signal) {
  ::kill(broker_->pid(), signal);
  return broker_->wait(std::chrono::milliseconds(10000));
}

std::vector<std::string> lines(const std::string &out) {
  std::vector<std::string> result;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) result.push_back(line);
  return result;
}

std::string field(const std::string &out, const std::string &key) {
  for (const auto &line : lines(out)) {
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return {};
}

int open_descriptors(pid_t pid) {
  int count = 0;
  for ([[maybe_unused]] const auto &entry :
       fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++count;
  }
  return count;
}

std::string describe_descriptors(pid_t pid) {
  std::string out;
  const fs::path dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto &entry : fs::directory_iterator(dir)) {
    std::error_code error;
    const auto target = fs::read_symlink(entry.path(), error);
    out += entry.path().filename().string() + " -> " + (error ? "?" : target.string()) + "\n";
  }
  return out;
}

int settled_descriptors(pid_t pid) {
  const auto holds_a_request = [pid] {
    const std::string held = describe_descriptors(pid);
    return held.find(".request") != std::string::npos || held.find(".reply") != std::string::npos;
  };
  int count = open_descriptors(pid);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const int now = open_descriptors(pid);
    if (now == count && !holds_a_request()) break;
    count = now;
  }
  return count;
}

}  // namespace sandbox_host::test
