#include "fixtures.hpp"

#include <sandbox_host/host/audit.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace sandbox_host::test {
namespace fs = std::filesystem;

Config test_config(std::vector<std::string> backends, std::vector<std::string> priority,
                   std::vector<std::string> ops) {
  Config config;
  config.module_dirs = {TEST_MODULE_DIR, BUILD_MODULE_DIR};
  config.backends_enabled = std::move(backends);
  config.backend_priority = std::move(priority);
  config.ops_enabled = std::move(ops);
  return config;
}

TempFile::TempFile(const std::string &contents, const std::string &name) {
  std::string pattern = "/tmp/sandbox-host-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp");
  }
  dir_ = pattern;
  // Readable by the unprivileged test user too.
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  path_ = dir_ / name;
  std::ofstream(path_) << contents;
}

TempFile::~TempFile() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

ScopedEnv::ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
  if (const char *old = ::getenv(name_.c_str())) previous_ = old;
  if (value) {
    ::setenv(name_.c_str(), value->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

ScopedEnv::~ScopedEnv() {
  if (previous_) {
    ::setenv(name_.c_str(), previous_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

AuditCapture::AuditCapture() : file_("", "audit.jsonl") {}

Config AuditCapture::apply(Config config) const {
  config.audit_format = AuditFormat::json;
  config.audit_path = file_.path().string();
  return config;
}

std::vector<std::map<std::string, std::string>> AuditCapture::records() const {
  std::vector<std::map<std::string, std::string>> out;
  std::ifstream in(file_.path());
  for (std::string line; std::getline(in, line);) {
    auto object = Poco::JSON::Parser().parse(line).extract<Poco::JSON::Object::Ptr>();
    std::map<std::string, std::string> record;
    for (const auto &name : {"component", "plugin", "rule", "attempted", "hint"}) {
      record[name] = object->getValue<std::string>(name);
    }
    // Only a record that is no refusal has it.
    if (object->has("refused")) {
      record["refused"] = object->getValue<bool>("refused") ? "true" : "false";
    }
    out.push_back(std::move(record));
  }
  return out;
}

PluginReport parse_report(const std::string &out) {
  PluginReport report;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    auto space = line.find(' ');
    if (space == std::string::npos) continue;
    std::string key = line.substr(0, space), value = line.substr(space + 1);
    if (key == "pid") report.pid = std::stoi(value);
    if (key == "sid") report.sid = std::stoi(value);
    if (key == "pgid") report.pgid = std::stoi(value);
    if (key == "uid") report.uid = static_cast<unsigned>(std::stoul(value));
    if (key == "pdeathsig") report.pdeathsig = std::stoi(value);
    if (key == "env") report.env.push_back(value);
    if (key == "cwd") report.cwd = value;
    if (key == "fd") {
      auto second = value.find(' ');
      report.fds[std::stoi(value.substr(0, second))] = value.substr(second + 1);
    }
  }
  return report;
}

UnprivilegedInstall::UnprivilegedInstall() : dir_("", "unused") {
  const fs::path modules = dir_.dir() / SANDBOX_HOST_MODULE_SUBDIR;
  fs::create_directories(dir_.dir() / "bin");
  fs::create_directories(modules);
  fs::copy_file(SANDBOX_HOST_EXE, dir_.dir() / "bin/sandbox-host");
  // serve and ask run through the broker binary, found beside sandbox-host as installed.
  const fs::path broker = dir_.dir() / "bin" / SANDBOX_HOST_BROKER_RELATIVE_PATH;
  fs::create_directories(broker.parent_path());
  fs::copy_file(SANDBOX_HOST_BROKER_EXE, broker);
  fs::copy_file(SANDBOX_HOST_LAUNCH_EXE, dir_.dir() / "bin/sandbox-host-launch");
  fs::copy_file(REPORT_PLUGIN, dir_.dir() / "bin/report_plugin");
  for (const auto &entry : fs::directory_iterator(BUILD_MODULE_DIR)) {
    fs::copy_file(entry.path(), modules / entry.path().filename());
  }
  for (const auto &entry : fs::recursive_directory_iterator(dir_.dir())) {
    fs::permissions(entry.path(), fs::perms::owner_all | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec);
  }
}

std::string UnprivilegedInstall::add_binary(const std::string &binary) const {
  const fs::path target = dir_.dir() / "bin" / fs::path(binary).filename();
  fs::copy_file(binary, target, fs::copy_options::overwrite_existing);
  fs::permissions(target, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  return target.string();
}

void UnprivilegedInstall::add_module(const std::string &module) const {
  const fs::path target = dir_.dir() / SANDBOX_HOST_MODULE_SUBDIR / fs::path(module).filename();
  fs::copy_file(module, target, fs::copy_options::overwrite_existing);
  fs::permissions(target, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
}

const UnprivilegedInstall &shared_install() {
  static const UnprivilegedInstall install;
  return install;
}

std::vector<std::string> as_nobody() {
  return {"/usr/bin/setpriv", "--reuid=" + std::to_string(kNobody),
          "--regid=" + std::to_string(kNobody), "--clear-groups", "--"};
}

Pipe make_pipe() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  return {UniqueFd(ends[0]), UniqueFd(ends[1])};
}

LaunchMessage sample_launch() {
  LaunchMessage message;
  message.spec = {"git \"quoted\"",
                  "/usr/bin/git",
                  "/run/s",
                  "/run/s/tmp",
                  Network::outbound,
                  {"/etc/ssl", "/usr/share/ü"},
                  {"--flag=1", "", "two words", "line\nbreak"}};
  message.spec.env = {"PATH=/usr/bin:/bin", "HOME=/run/s/tmp", "EMPTY=", "EQUALS=a=b=c"};
  return message;
}

}  // namespace sandbox_host::test
