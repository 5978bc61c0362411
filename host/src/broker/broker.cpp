#include <sandbox_host/host/broker/broker.hpp>
#include <sandbox_host/host/broker/socket_transport.hpp>
#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/host/broker/spool_request.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/worker_pool.hpp>

#include <sandbox_host/host/broker/process_identity.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <system_error>
#include <unordered_set>

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
  options.max_per_requester = config.max_per_requester;
  options.max_queued = config.max_queued;
  options.reply_timeout = config.reply_timeout;
  options.identity = config.identity;
  return options;
}

WorkerLimits BrokerOptions::limits() const {
  WorkerLimits limits;
  limits.threads = max_concurrent;
  limits.per_requester = max_per_requester;
  limits.queued = max_queued;
  return limits;
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
    serving.call.reply_timeout = this->options.reply_timeout;
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
  // Held for the moment the broker runs out of descriptors (see serve).
  UniqueFd reserve{::open("/dev/null", O_RDONLY | O_CLOEXEC)};
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

void Broker::listen(const fs::path &path, const std::string &label, UniqueFd inherited) {
  auto socket = inherited ? std::make_shared<BrokerSocket>(path, label, std::move(inherited))
                          : std::make_shared<BrokerSocket>(path, label);
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

namespace {

using Clock = std::chrono::steady_clock;

// Spool requests claimed in one turn of the loop, so that a flood of them leaves the sockets
// their turn too; a poll that finds more comes at once.
constexpr std::size_t kClaimBatch = 64;
// Connections accepted from one socket in one turn, for the same reason.
constexpr std::size_t kAcceptBatch = 64;
// Connections that may wait for their request at once: per requester, and in all.
constexpr std::size_t kWaitingPerRequester = 16;
constexpr std::size_t kWaitingConnections = 1024;
// How long the broker leaves its sockets and the spool alone once it ran out of descriptors.
constexpr auto kDescriptorBackoff = std::chrono::milliseconds(100);

std::string busy_reason(Admission admission, const WorkerLimits &limits) {
  if (admission == Admission::requester_full) {
    return "the broker is busy with this requester's other requests: it takes " +
           std::to_string(limits.per_requester) +
           " at once from one requester ([broker] max_per_requester); ask again once they "
           "are answered";
  }
  if (admission == Admission::no_thread) {
    return "the broker cannot start a thread for the request (the system refused one); ask "
           "again shortly";
  }
  return "the broker is busy: " + std::to_string(limits.queued) +
         " requests wait for a thread already ([broker] max_queued); ask again shortly";
}

// The spool request's requester, for the worker pool's shares: the pid namespace of the
// process its lock names. Who asks is established later, on the worker; a wrong share
// here costs fairness only, never identity.
std::string spool_requester(const ClaimedRequest &request, const fs::path &proc_dir) {
  const auto owner = lock_owner(request.file.get());
  if (!owner) return "spool, no lock";
  const auto ns = pid_namespace(proc_dir, *owner);
  return ns ? "spool, pid namespace " + std::to_string(*ns) : "spool, pid namespace unknown";
}

}  // namespace

void Broker::serve(std::stop_token stop, LoopProgress *progress) {
  State &state = *state_;
  state.serving.call.stop = stop;
  std::stop_callback on_stop(stop, [&] { state.notify(); });
  WorkerPool workers(state.options.limits());
  constexpr auto kGarbageEvery = std::chrono::seconds(10);
  constexpr auto kGarbageAge = std::chrono::seconds(60);
  auto next_scan = Clock::now();
  auto next_garbage = Clock::now();
  // Requests seen and not claimed yet, oldest first, each once.
  std::deque<std::string> arrivals;
  std::unordered_set<std::string> arriving;
  // Connections accepted whose request has not arrived yet.
  std::list<Connection> waiting;
  std::map<std::string, std::size_t> waiting_by_requester;
  auto no_descriptors_until = Clock::time_point{};
  auto next_descriptor_record = Clock::time_point{};
  const auto out_of_descriptors = [&](Clock::time_point now, const std::string &what) {
    no_descriptors_until = now + kDescriptorBackoff;
    if (now < next_descriptor_record) return;
    next_descriptor_record = now + std::chrono::seconds(10);
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    state.serving.record_refusal(
        "broker-descriptors", what,
        "the broker has no descriptor free (RLIMIT_NOFILE " + std::to_string(limit.rlim_cur) +
            "); it refuses connections and leaves spool requests waiting until some are free");
  };
  const auto submit_connection = [&](Connection connection) {
    const std::string requester = connection.requester;
    auto shared = std::make_shared<Connection>(std::move(connection));
    const auto admission = workers.submit(
        requester, [&state, shared] { answer_connection(std::move(*shared), state.serving); });
    if (admission != Admission::taken) {
      refuse_connection(std::move(*shared), "request-busy",
                        busy_reason(admission, workers.limits()), state.serving);
    }
  };

  while (!stop.stop_requested()) {
    std::vector<std::shared_ptr<BrokerSocket>> sockets;
    {
      std::lock_guard lock(state.sockets_mutex);
      sockets.assign(state.sockets.begin(), state.sockets.end());
    }
    auto now = Clock::now();
    const bool starved = now < no_descriptors_until;
    std::vector<pollfd> fds{{state.wake.get(), POLLIN, 0}};
    if (state.spool.wake_fd() >= 0) fds.push_back({state.spool.wake_fd(), POLLIN, 0});
    const std::size_t first_socket = fds.size();
    if (!starved) {
      for (const auto &socket : sockets) fds.push_back({socket->fd(), POLLIN, 0});
    }
    const std::size_t first_waiting = fds.size();
    auto wake_at = next_scan;
    for (const Connection &connection : waiting) {
      fds.push_back({connection.fd.get(), POLLIN | POLLRDHUP, 0});
      wake_at = std::min(wake_at, connection.deadline);
    }
    if (starved) wake_at = std::min(wake_at, no_descriptors_until);
    if (!arrivals.empty() && !starved) wake_at = now;
    if (progress != nullptr) {
      progress->turned();
      wake_at = std::min(wake_at, now + kLoopTurnBound);
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(
        std::max(wake_at - now, Clock::duration::zero()));
    ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    if (stop.stop_requested()) break;
    uint64_t drained = 0;
    [[maybe_unused]] auto n = ::read(state.wake.get(), &drained, sizeof drained);

    // The scan every tick is the safety net under inotify, which can overflow or miss
    // nothing at all; and, without inotify, it is how requests are found.
    now = Clock::now();
    const bool scan = now >= next_scan;
    if (scan) next_scan = now + state.options.tick;
    for (auto &id : state.spool.arrived(scan)) {
      if (arriving.insert(id).second) arrivals.push_back(std::move(id));
    }
    for (std::size_t claimed = 0;
         claimed < kClaimBatch && !arrivals.empty() && now >= no_descriptors_until; ++claimed) {
      ClaimedRequest request;
      std::string error;
      const auto outcome = state.spool.claim(arrivals.front(), request, error);
      if (outcome == Spool::Claim::out_of_descriptors) {
        out_of_descriptors(now, "spool request " + arrivals.front());
        break;
      }
      arriving.erase(arrivals.front());
      arrivals.pop_front();
      if (outcome == Spool::Claim::gone) continue;
      const std::string requester = spool_requester(request, state.options.proc_dir);
      auto shared = std::make_shared<ClaimedRequest>(std::move(request));
      const auto admission = workers.submit(requester, [&state, shared, error] {
        answer_spool_request(state.spool, std::move(*shared), error, state.serving);
      });
      if (admission != Admission::taken) {
        refuse_spool_request(state.spool, std::move(*shared), "request-busy",
                             busy_reason(admission, workers.limits()), state.serving);
      }
    }

    // A connection goes to a worker once its request is there (or it hung up), and is
    // refused once it waited too long.
    std::size_t at = first_waiting;
    for (auto connection = waiting.begin(); connection != waiting.end(); ++at) {
      const bool ready = (fds[at].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0;
      if (!ready && now < connection->deadline) {
        ++connection;
        continue;
      }
      if (--waiting_by_requester[connection->requester] == 0) {
        waiting_by_requester.erase(connection->requester);
      }
      Connection taken = std::move(*connection);
      connection = waiting.erase(connection);
      if (ready) {
        submit_connection(std::move(taken));
      } else {
        refuse_connection(std::move(taken), "request-timeout",
                          "no request within " + std::to_string(kRequestTimeout.count()) + " ms",
                          state.serving);
      }
    }
    for (std::size_t i = 0; !starved && i < sockets.size(); ++i) {
      if ((fds[first_socket + i].revents & POLLIN) == 0) continue;
      for (std::size_t accepted_now = 0; accepted_now < kAcceptBatch; ++accepted_now) {
        UniqueFd accepted = sockets[i]->accept();
        if (!accepted && (errno == EMFILE || errno == ENFILE)) {
          // The reserve descriptor makes room to take the connection and refuse it, so the
          // peer hears why and the listening socket does not stay ready for ever.
          state.reserve.reset();
          accepted = sockets[i]->accept();
          if (accepted) {
            refuse_connection(
                Connection(std::move(accepted), sockets[i]->label(), state.options.proc_dir),
                "request-busy", "the broker has no descriptor free; ask again shortly",
                state.serving);
          }
          state.reserve.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
          out_of_descriptors(now, "socket " + sockets[i]->path().string());
          break;
        }
        if (!accepted) break;
        Connection connection(std::move(accepted), sockets[i]->label(), state.options.proc_dir);
        const std::string requester = connection.requester;
        if (waiting.size() >= kWaitingConnections ||
            waiting_by_requester[requester] >= kWaitingPerRequester) {
          if (waiting_by_requester[requester] == 0) waiting_by_requester.erase(requester);
          refuse_connection(std::move(connection), "request-busy",
                            "too many connections wait to send their request (" +
                                std::to_string(kWaitingPerRequester) + " per requester, " +
                                std::to_string(kWaitingConnections) + " in all)",
                            state.serving);
          continue;
        }
        ++waiting_by_requester[requester];
        waiting.push_back(std::move(connection));
      }
    }
    if (now >= next_garbage) {
      next_garbage = now + kGarbageEvery;
      for (const auto &stray : state.spool.collect_garbage(kGarbageAge)) {
        state.serving.record_refusal("spool-stray", "spool entry " + quoted_prefix(stray.name),
                                     stray.what + ": it is not a request");
      }
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
