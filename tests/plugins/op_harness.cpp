#include "op_harness.hpp"

#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/strings.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace ops_test {
namespace fs = std::filesystem;
using sandbox_host::to_sh_str;

namespace {

fs::path module_file(std::string_view name) {
  return fs::path(BUILD_MODULE_DIR) /
         sandbox_host::module_file_name(sandbox_host::ModuleKind::broker_op, name);
}

// The borrowed strings of one list, alive as long as the object.
class StrList {
 public:
  explicit StrList(const std::vector<std::string> &items) {
    for (const auto &item : items) items_.push_back(to_sh_str(item));
  }
  sh_str_list list() const noexcept { return {items_.data(), items_.size()}; }

 private:
  std::vector<sh_str> items_;
};

struct ReplyState {
  const Call *call;
  Outcome *outcome;
};

void append(void *ctx, sh_str bytes) noexcept {
  static_cast<std::string *>(ctx)->append(sandbox_host::to_view(bytes));
}

void set_code(void *ctx, int32_t code) noexcept {
  static_cast<ReplyState *>(ctx)->outcome->code = code;
}

int32_t execute(const sandbox_host::HostCommand &command, Outcome &outcome,
                sh_writer *error) noexcept {
  sandbox_host::broker::CommandIo io;
  io.out = [&](std::string_view bytes) { outcome.out.append(bytes); };
  io.err = [&](std::string_view bytes) { outcome.err.append(bytes); };
  try {
    const auto result = sandbox_host::broker::run_host_command(command, io);
    outcome.code = result.code;
    if (result.error.empty()) return SH_OK;
    sandbox_host::write(error, result.error);
  } catch (const std::exception &e) {
    sandbox_host::write(error, e.what());
  }
  return SH_ERROR;
}

int32_t run(void *ctx, const sh_host_command *raw, sh_writer *error) noexcept {
  auto *state = static_cast<ReplyState *>(ctx);
  sandbox_host::HostCommand command;
  command.path = sandbox_host::to_view(raw->path);
  command.args = sandbox_host::to_strings(raw->args);
  command.env = sandbox_host::to_strings(raw->env);
  command.input = sandbox_host::to_view(raw->input);
  command.cwd = sandbox_host::to_view(raw->cwd);
  command.cwd_of_requester = raw->cwd_of_requester != 0;
  command.timeout = std::chrono::milliseconds(raw->timeout_ms);
  state->outcome->runs.push_back(command);
  if (state->call->execute) return execute(command, *state->outcome, error);
  if (state->call->run_status != SH_OK) sandbox_host::write(error, state->call->run_error);
  return state->call->run_status;
}

int32_t requester_gone(void *) noexcept {
  return 0;
}

}  // namespace

Op::Op(std::string_view name, const sandbox_host::ModuleSettings &settings)
    : module_(module_file(name), sandbox_host::ModuleKind::broker_op, settings) {}

Outcome Op::handle(const Call &call) const {
  const auto &r = call.request;
  const StrList args(r.args), env(call.requester_env);
  const sh_request request{sizeof(sh_request), to_sh_str(r.op),   to_sh_str(r.unit),
                           to_sh_str(r.slice), to_sh_str(r.max),  to_sh_str(r.swap),
                           args.list(),        to_sh_str(r.wait), to_sh_str(r.resource),
                           to_sh_str(r.input), r.stream ? 1 : 0};
  const sh_requester requester{sizeof(sh_requester),
                               call.requester_pid,
                               call.requester_pidfd,
                               1000,
                               to_sh_str("/home/requester"),
                               1,
                               env.list()};
  Outcome outcome;
  ReplyState state{&call, &outcome};
  sh_reply reply{sizeof(sh_reply),
                 {&outcome.out, &append},
                 {&outcome.err, &append},
                 &state,
                 &set_code,
                 call.streaming ? 1 : 0,
                 &run,
                 &requester_gone};
  sandbox_host::StringSink error;
  const auto *table = static_cast<const sh_broker_op_v1 *>(module_.table());
  outcome.status = table->handle(module_.instance(), &request, &requester, &reply, error.writer());
  outcome.error = error.text();
  return outcome;
}

std::string load_error(std::string_view name, const sandbox_host::ModuleSettings &settings) {
  try {
    Op op(name, settings);
  } catch (const sandbox_host::ModuleError &e) {
    const std::string prefix = "module " + module_file(name).string() + ": init failed: ";
    const std::string what = e.what();
    return what.starts_with(prefix) ? what.substr(prefix.size()) : what;
  }
  return "";
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "sandbox-host-ops-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string TempDir::file(std::string_view name, std::string_view content, unsigned mode) const {
  const fs::path file = path_ / name;
  std::ofstream(file, std::ios::binary) << content;
  if (chmod(file.c_str(), mode) != 0) {
    throw std::system_error(errno, std::generic_category(), "chmod " + file.string());
  }
  return file.string();
}

ScopedEnv::ScopedEnv(std::string name, const std::optional<std::string> &value)
    : name_(std::move(name)) {
  if (const char *old = std::getenv(name_.c_str())) saved_ = old;
  if (value) {
    setenv(name_.c_str(), value->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

ScopedEnv::~ScopedEnv() {
  if (saved_) {
    setenv(name_.c_str(), saved_->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

}  // namespace ops_test
