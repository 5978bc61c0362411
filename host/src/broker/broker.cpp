#include <sandbox_host/host/broker/broker.hpp>
#include <sandbox_host/host/broker/socket_transport.hpp>
#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/host/broker/spool_request.hpp>
#include <sandbox_host/host/broker/worker_pool.hpp>
#include <sandbox_host/host/host.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <list>
#include <mutex>
#include <system_error>

namespace sandbox_host::broker {
namespace fs = std::filesystem;

void Serving::record_refusal(const std::string &rule, const std::string &attempted,
                             const std::string &error, const std::string &sandbox) {
  ++refused;
  if (audit != nullptr) {
    audit->record({"broker", sandbox, rule, attempted + ": " + error,
                   "see docs/broker.md for what the broker answers"});
  }
}

BrokerOptions BrokerOptions::from(const BrokerConfig &config) {
  BrokerOptions options;
  options.spool = spool_dir(config.state_dir);
  options.tick = config.tick;
  options.max_request_bytes = config.max_request_bytes;
  options.max_reply_bytes = config.max_reply_bytes;
  options.max_concurrent = config.max_concurrent;
  options.identity = config.identity;
  return options;
}

struct Broker::State {
  State(BrokerOptions options, Operations operations, AuditSink &audit)
      : options(std::move(options)),
        spool(this->options.spool, this->options.watch),
        wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!wake) throw std::system_error(errno, std::generic_category(), "eventfd");
    // Lock identity finds the asker's forks through /proc/<pid>/task/<tid>/children; a
    // kernel without it would let a forked second holder pass unseen.
    const auto children =
        this->options.proc_dir / "self/task" / std::to_string(::gettid()) / "children";
    if (this->options.identity == BrokerIdentity::lock && ::access(children.c_str(), R_OK) != 0) {
      throw std::system_error(ENOTSUP, std::generic_category(),
                              "identity \"lock\" needs " + children.string() +
                                  " (CONFIG_PROC_CHILDREN); set [broker] identity = \"scan\"");
    }
    serving.operations = std::move(operations);
    serving.call.proc_dir = this->options.proc_dir;
    serving.call.max_reply_bytes = this->options.max_reply_bytes;
    serving.call.tick = this->options.tick;
    serving.max_request_bytes = this->options.max_request_bytes;
    serving.identity = this->options.identity;
    serving.uid = ::geteuid();
    serving.audit = &audit;
  }

  void notify() const {
    const uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake.get(), &one, sizeof one);
  }

  BrokerOptions options;
  Spool spool;
  UniqueFd wake;
  Serving serving;
  std::mutex sockets_mutex;
  std::list<std::shared_ptr<BrokerSocket>> sockets;
};

Broker::Broker(BrokerOptions options, Operations operations, AuditSink &audit)
    : state_(std::make_unique<State>(std::move(options), std::move(operations), audit)) {
  // A client that leaves mid-reply must cost the broker a failed write, not its life.
  ::signal(SIGPIPE, SIG_IGN);
}

Broker::~Broker() = default;

void Broker::listen(const fs::path &path, const std::string &label) {
  auto socket = std::make_shared<BrokerSocket>(path, label);
  {
    std::lock_guard lock(state_->sockets_mutex);
    state_->sockets.push_back(std::move(socket));
  }
  state_->notify();
}

void Broker::unlisten(const fs::path &path) {
  {
    std::lock_guard lock(state_->sockets_mutex);
    state_->sockets.remove_if([&](const auto &socket) { return socket->path() == path; });
  }
  state_->notify();
}

void Broker::serve(std::stop_token stop) {
  State &state = *state_;
  state.serving.call.stop = stop;
  std::stop_callback on_stop(stop, [&] { state.notify(); });
  WorkerPool workers(state.options.max_concurrent);
  using Clock = std::chrono::steady_clock;
  constexpr auto kGarbageEvery = std::chrono::seconds(10);
  constexpr auto kGarbageAge = std::chrono::seconds(60);
  auto next_scan = Clock::now();
  auto next_garbage = Clock::now();

  while (!stop.stop_requested()) {
    std::vector<std::shared_ptr<BrokerSocket>> sockets;
    {
      std::lock_guard lock(state.sockets_mutex);
      sockets.assign(state.sockets.begin(), state.sockets.end());
    }
    std::vector<pollfd> fds{{state.wake.get(), POLLIN, 0}};
    if (state.spool.wake_fd() >= 0) fds.push_back({state.spool.wake_fd(), POLLIN, 0});
    for (const auto &socket : sockets) fds.push_back({socket->fd(), POLLIN, 0});
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(
        std::max(next_scan - Clock::now(), Clock::duration::zero()));
    ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    if (stop.stop_requested()) break;
    uint64_t drained = 0;
    [[maybe_unused]] auto n = ::read(state.wake.get(), &drained, sizeof drained);

    // The scan every tick is the safety net under inotify, which can overflow or miss
    // nothing at all; and, without inotify, it is how requests are found.
    const auto now = Clock::now();
    const bool scan = now >= next_scan;
    if (scan) next_scan = now + state.options.tick;
    for (const auto &id : state.spool.arrived(scan)) {
      std::string error;
      auto claimed = state.spool.claim(id, error);
      if (!claimed) continue;
      auto request = std::make_shared<ClaimedRequest>(std::move(*claimed));
      workers.submit([&state, request, error] {
        answer_spool_request(state.spool, std::move(*request), error, state.serving);
      });
    }
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      while (UniqueFd connection = sockets[i]->accept()) {
        auto shared = std::make_shared<UniqueFd>(std::move(connection));
        workers.submit([&state, shared, label = sockets[i]->label()] {
          answer_connection(std::move(*shared), label, state.serving);
        });
      }
    }
    if (now >= next_garbage) {
      next_garbage = now + kGarbageEvery;
      state.spool.collect_garbage(kGarbageAge);
    }
  }
}

const fs::path &Broker::spool() const noexcept {
  return state_->spool.dir();
}
unsigned long Broker::answered() const noexcept {
  return state_->serving.answered;
}
unsigned long Broker::refused() const noexcept {
  return state_->serving.refused;
}

Operations load_operations(const Host &host) {
  Operations operations;
  const Config &config = host.config();
  for (const auto &name : config.ops_enabled) {
    auto module = host.operation(name);
    if (!module) continue;
    Operation op{std::move(module), {}};
    if (auto settings = config.op_settings.find(name); settings != config.op_settings.end()) {
      op.requester_env = settings->second.requester_env;
    }
    operations.emplace(name, std::move(op));
  }
  return operations;
}

}  // namespace sandbox_host::broker
