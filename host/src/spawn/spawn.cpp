#include <sandbox_host/host/spawn.hpp>

#include <sandbox_host/host/own_children.hpp>

#include <sandbox_host/host/kernel_audit/landlock_audit_reader.hpp>
#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>

// Boost 1.81's Process v2 uses these without including them when BOOST_PROCESS_USE_STD_FS
// is set.
#include <boost/optional.hpp>
#include <boost/type_traits.hpp>
// clang-format off
#include <boost/asio/io_context.hpp>
#include <boost/process/v2/process.hpp>
// Only this file uses Process v2, so it compiles the library's sources too.
#include <boost/process/v2/src.hpp>
// clang-format on

#include "exec_child.hpp"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

namespace sandbox_host {
namespace bp = boost::process::v2;

namespace {

ExitStatus decode(int native) {
  ExitStatus status;
  if (WIFEXITED(native)) status.code = WEXITSTATUS(native);
  if (WIFSIGNALED(native)) status.signal = WTERMSIG(native);
  return status;
}

}  // namespace

struct Child::State {
  // Destroyed after the process below is reaped: it ends what the plugin left, then goes.
  std::shared_ptr<PluginCgroup> cgroup;
  boost::asio::io_context context;
  // Destroyed after the process below is reaped: until then no StrayReaper takes it.
  std::optional<OwnChild> own;
  std::optional<bp::process> process;
  std::optional<ExitStatus> exit;
  UniqueFd status_channel;
  // Ended once the plugin's end is known, or else destroyed first, before the destructor
  // reaps the process and the cgroup goes.
  std::unique_ptr<LaunchWatch> watch;
  std::shared_ptr<SeccompWatch> seccomp;
  // Where the kernel's audit is on and readable: Landlock's refusals of the sandbox.
  std::unique_ptr<kernel_audit::LandlockAuditWatch> landlock;
  // Read once, by the first wait() that knows the exit.
  std::optional<DeathOrder> death_order;
  std::optional<Death> death;
  // What the watch recorded when it stopped the launch at a bound, for the death report.
  std::optional<AuditRecord> watch_stop;
};

namespace {

void end_watch(Child::State &state) {
  if (state.watch) state.watch_stop = state.watch->stop_record();
  state.watch.reset();
}

}  // namespace

Child::Child(std::unique_ptr<State> state) : state_(std::move(state)) {}
Child::Child(Child &&) noexcept = default;
Child &Child::operator=(Child &&) noexcept = default;
Child::~Child() = default;  // bp::process kills and reaps a child that still runs

pid_t Child::pid() const noexcept {
  return state_->process->id();
}

bool Child::take_reported_status() {
  if (state_->exit) return true;
  if (!state_->status_channel) return false;
  std::optional<int> reported;
  try {
    reported = receive_status(state_->status_channel.get());
  } catch (const std::exception &) {
    // Not a status: stage 1's own exit has it.
  }
  state_->status_channel.reset();
  // Stage 1 exits with the same status; the destructor reaps it.
  if (reported) {
    state_->exit = ExitStatus{*reported, 0};
    end_watch(*state_);
  }
  return reported.has_value();
}

ExitStatus Child::wait() {
  take_reported_status();  // blocks until the report, or until the sandbox closed its ends
  if (!state_->exit) {
    state_->process->wait();
    state_->exit = decode(state_->process->native_exit_code());
    end_watch(*state_);
  }
  // Before the death report and the caller's next step: the records of what was refused.
  if (state_->landlock) state_->landlock->settle();
  if (state_->death_order) {
    const DeathOrder order = *std::exchange(state_->death_order, std::nullopt);
    state_->death =
        report_death(order, state_->exit->code, state_->exit->signal, cgroup(), state_->watch_stop);
  }
  return *state_->exit;
}

void Child::explain_death(DeathOrder order) {
  state_->death_order = std::move(order);
}

const std::optional<Death> &Child::death() const noexcept {
  return state_->death;
}

void Child::take_status_channel(UniqueFd channel) {
  state_->status_channel = std::move(channel);
}

void Child::watch(WatchOrder order) {
  if (!order.bounds_anything()) return;
  state_->watch = watch_launch(std::move(order), pid(), state_->cgroup.get());
}

void Child::name_plugin(const std::string &plugin) {
  if (state_->seccomp) state_->seccomp->name_plugin(plugin);
  if (state_->landlock) state_->landlock->name_plugin(plugin);
}

PluginCgroup *Child::cgroup() const noexcept {
  return state_->cgroup.get();
}

int Child::status_fd() const noexcept {
  return state_->status_channel.get();
}

Child spawn(const LaunchCommand &command, const std::vector<int> &pass_fds, const Stdio &stdio) {
  auto state = std::make_unique<Child::State>();
  state->cgroup = command.cgroup;
  std::vector<int> inherited = pass_fds;
  std::vector<std::string> env = command.env;
  // The channel stage 1 hands its seccomp listener over on: the child's end at its own
  // number, close-on-exec again in stage 1 before any backend runs.
  UniqueFd seccomp_host_end, seccomp_stage1_end;
  if (command.seccomp) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
      throw std::system_error(errno, std::generic_category(), "seccomp: socketpair");
    }
    seccomp_host_end = UniqueFd(ends[0]);
    seccomp_stage1_end = UniqueFd(ends[1]);
    inherited.push_back(ends[1]);
    env.push_back(seccomp_channel_variable(ends[1], command.learn != nullptr));
  }
  const auto spawned = std::chrono::steady_clock::now();
  const bool read_landlock = command.seccomp && kernel_audit::read_kernel_audit();
  // Built before the vfork: the child allocates nothing.
  std::vector<char *> argv{const_cast<char *>(command.program.c_str())};
  for (const auto &arg : command.args) argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char *> envp;
  for (const auto &entry : env) envp.push_back(const_cast<char *>(entry.c_str()));
  envp.push_back(nullptr);
  ExecPlan plan;
  plan.program = command.program.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.stdio[0] = stdio.in;
  plan.stdio[1] = stdio.out;
  plan.stdio[2] = stdio.err;
  plan.keep = {0, 1, 2};
  plan.keep.insert(plan.keep.end(), inherited.begin(), inherited.end());
  std::sort(plan.keep.begin(), plan.keep.end());
  plan.keep.erase(std::unique(plan.keep.begin(), plan.keep.end()), plan.keep.end());
  plan.passed = inherited;
  plan.parent = ::getpid();
  state->process.emplace(state->context.get_executor(), exec_child(plan));
  state->own.emplace(state->process->id());
  if (command.seccomp) {
    SeccompOrder order = *command.seccomp;
    order.learn = command.learn;
    if (read_landlock) {
      state->landlock = kernel_audit::read_landlock_denials(
          state->process->id(), spawned, order.plugin, order.backend, order.audit);
    }
    state->seccomp = supervise_seccomp(std::move(seccomp_host_end), std::move(order));
  }
  if (state->cgroup) state->cgroup->held_by_child();
  Child child(std::move(state));
  if (command.watch) child.watch(*command.watch);
  if (command.death) child.explain_death(*command.death);
  return child;
}

}  // namespace sandbox_host
