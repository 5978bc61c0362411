#include <sandbox_host/host/broker/broker.hpp>
#include <sandbox_host/host/broker/socket_transport.hpp>
#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/host/broker/spool_request.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/worker_pool.hpp>

#include <sandbox_host/host/identity/process_identity.hpp>

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

// One serve(): what its loop keeps from turn to turn, and each turn's steps, in the order a
// turn takes them: wait, take the spool's requests, the waiting connections', the sockets'
// new ones, collect the spool's garbage. Each step keeps its batch bound, so that a flood
// through one way in leaves the others their turn.
class Broker::ServingLoop {
 public:
  ServingLoop(State &state, std::stop_token stop, LoopProgress *progress)
      : state_(state),
        stop_(std::move(stop)),
        progress_(progress),
        workers_(state.options.limits()) {}

  void run() {
    while (!stop_.stop_requested()) {
      const Turn turn = wait_for_events();
      if (stop_.stop_requested()) break;
      uint64_t drained = 0;
      [[maybe_unused]] auto n = ::read(state_.wake.get(), &drained, sizeof drained);
      const auto now = Clock::now();
      take_arrivals(now);
      claim_spool_requests(now);
      settle_waiting(turn, now);
      accept_connections(turn, now);
      collect_garbage(now);
    }
  }

 private:
  static constexpr auto kGarbageEvery = std::chrono::seconds(10);
  static constexpr auto kGarbageAge = std::chrono::seconds(60);

  // What one turn polled: the sockets as they were then and where each kind's entries start.
  struct Turn {
    std::vector<std::shared_ptr<BrokerSocket>> sockets;
    std::vector<pollfd> fds;
    std::size_t first_socket = 0, first_waiting = 0;
    bool starved = false;  // out of descriptors: the sockets are left alone
  };

  // Polls until something is to do, the next scan or deadline is due, or (with progress)
  // kLoopTurnBound has passed.
  Turn wait_for_events() {
    Turn turn;
    {
      std::lock_guard lock(state_.sockets_mutex);
      turn.sockets.assign(state_.sockets.begin(), state_.sockets.end());
    }
    const auto now = Clock::now();
    turn.starved = now < no_descriptors_until_;
    turn.fds.push_back({state_.wake.get(), POLLIN, 0});
    if (state_.spool.wake_fd() >= 0) turn.fds.push_back({state_.spool.wake_fd(), POLLIN, 0});
    turn.first_socket = turn.fds.size();
    if (!turn.starved) {
      for (const auto &socket : turn.sockets) turn.fds.push_back({socket->fd(), POLLIN, 0});
    }
    turn.first_waiting = turn.fds.size();
    auto wake_at = next_scan_;
    for (const Connection &connection : waiting_) {
      turn.fds.push_back({connection.fd.get(), POLLIN | POLLRDHUP, 0});
      wake_at = std::min(wake_at, connection.deadline);
    }
    if (turn.starved) wake_at = std::min(wake_at, no_descriptors_until_);
    if (!arrivals_.empty() && !turn.starved) wake_at = now;
    if (progress_ != nullptr) {
      progress_->turned();
      wake_at = std::min(wake_at, now + kLoopTurnBound);
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(
        std::max(wake_at - now, Clock::duration::zero()));
    ::poll(turn.fds.data(), turn.fds.size(), static_cast<int>(wait.count()));
    return turn;
  }

  // The scan every tick is the safety net under inotify, which can overflow or miss
  // nothing at all; and, without inotify, it is how requests are found.
  void take_arrivals(Clock::time_point now) {
    const bool scan = now >= next_scan_;
    if (scan) next_scan_ = now + state_.options.tick;
    for (auto &id : state_.spool.arrived(scan)) {
      if (arriving_.insert(id).second) arrivals_.push_back(std::move(id));
    }
  }

  // Up to kClaimBatch of the arrivals, oldest first, each to a worker or refused busy.
  void claim_spool_requests(Clock::time_point now) {
    for (std::size_t claimed = 0;
         claimed < kClaimBatch && !arrivals_.empty() && now >= no_descriptors_until_; ++claimed) {
      ClaimedRequest request;
      std::string error;
      const auto outcome = state_.spool.claim(arrivals_.front(), request, error);
      if (outcome == Spool::Claim::out_of_descriptors) {
        out_of_descriptors(now, "spool request " + arrivals_.front());
        break;
      }
      arriving_.erase(arrivals_.front());
      arrivals_.pop_front();
      if (outcome == Spool::Claim::gone) continue;
      submit_spool_request(std::move(request), std::move(error));
    }
  }

  void submit_spool_request(ClaimedRequest request, std::string error) {
    State &state = state_;
    const std::string requester = spool_requester(request, state.options.proc_dir);
    auto shared = std::make_shared<ClaimedRequest>(std::move(request));
    const auto admission = workers_.submit(requester, [&state, shared, error] {
      answer_spool_request(state.spool, std::move(*shared), error, state.serving);
    });
    if (admission != Admission::taken) {
      refuse_spool_request(state.spool, std::move(*shared), "request-busy",
                           busy_reason(admission, workers_.limits()), state.serving);
    }
  }

  // A connection goes to a worker once its request is there (or it hung up), and is
  // refused once it waited too long.
  void settle_waiting(const Turn &turn, Clock::time_point now) {
    std::size_t at = turn.first_waiting;
    for (auto connection = waiting_.begin(); connection != waiting_.end(); ++at) {
      const bool ready = (turn.fds[at].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0;
      if (!ready && now < connection->deadline) {
        ++connection;
        continue;
      }
      if (--waiting_by_requester_[connection->requester] == 0) {
        waiting_by_requester_.erase(connection->requester);
      }
      Connection taken = std::move(*connection);
      connection = waiting_.erase(connection);
      if (ready) {
        submit_connection(std::move(taken));
      } else {
        refuse_connection(std::move(taken), "request-timeout",
                          "no request within " + std::to_string(kRequestTimeout.count()) + " ms",
                          state_.serving);
      }
    }
  }

  void submit_connection(Connection connection) {
    State &state = state_;
    const std::string requester = connection.requester;
    auto shared = std::make_shared<Connection>(std::move(connection));
    const auto admission = workers_.submit(
        requester, [&state, shared] { answer_connection(std::move(*shared), state.serving); });
    if (admission != Admission::taken) {
      refuse_connection(std::move(*shared), "request-busy",
                        busy_reason(admission, workers_.limits()), state.serving);
    }
  }

  void accept_connections(const Turn &turn, Clock::time_point now) {
    for (std::size_t i = 0; !turn.starved && i < turn.sockets.size(); ++i) {
      if ((turn.fds[turn.first_socket + i].revents & POLLIN) == 0) continue;
      accept_from(*turn.sockets[i], now);
    }
  }

  // Up to kAcceptBatch new connections of socket, each to wait for its request.
  void accept_from(BrokerSocket &socket, Clock::time_point now) {
    for (std::size_t accepted_now = 0; accepted_now < kAcceptBatch; ++accepted_now) {
      UniqueFd accepted = socket.accept();
      if (!accepted && (errno == EMFILE || errno == ENFILE)) {
        refuse_without_descriptors(socket, now);
        break;
      }
      if (!accepted) break;
      wait_for_request(Connection(std::move(accepted), socket.label(), state_.options.proc_dir));
    }
  }

  // The reserve descriptor makes room to take the connection and refuse it, so the peer
  // hears why and the listening socket does not stay ready for ever.
  void refuse_without_descriptors(BrokerSocket &socket, Clock::time_point now) {
    state_.reserve.reset();
    UniqueFd accepted = socket.accept();
    if (accepted) {
      refuse_connection(Connection(std::move(accepted), socket.label(), state_.options.proc_dir),
                        "request-busy", "the broker has no descriptor free; ask again shortly",
                        state_.serving);
    }
    state_.reserve.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    out_of_descriptors(now, "socket " + socket.path().string());
  }

  // Within kWaitingConnections in all and kWaitingPerRequester per requester, or refused.
  void wait_for_request(Connection connection) {
    const std::string requester = connection.requester;
    if (waiting_.size() >= kWaitingConnections ||
        waiting_by_requester_[requester] >= kWaitingPerRequester) {
      if (waiting_by_requester_[requester] == 0) waiting_by_requester_.erase(requester);
      refuse_connection(std::move(connection), "request-busy",
                        "too many connections wait to send their request (" +
                            std::to_string(kWaitingPerRequester) + " per requester, " +
                            std::to_string(kWaitingConnections) + " in all)",
                        state_.serving);
      return;
    }
    ++waiting_by_requester_[requester];
    waiting_.push_back(std::move(connection));
  }

  void collect_garbage(Clock::time_point now) {
    if (now < next_garbage_) return;
    next_garbage_ = now + kGarbageEvery;
    for (const auto &stray : state_.spool.collect_garbage(kGarbageAge)) {
      state_.serving.record_refusal("spool-stray", "spool entry " + quoted_prefix(stray.name),
                                    stray.what + ": it is not a request");
    }
  }

  // The sockets and the spool are left alone for kDescriptorBackoff; recorded once per 10 s.
  void out_of_descriptors(Clock::time_point now, const std::string &what) {
    no_descriptors_until_ = now + kDescriptorBackoff;
    if (now < next_descriptor_record_) return;
    next_descriptor_record_ = now + std::chrono::seconds(10);
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    state_.serving.record_refusal(
        "broker-descriptors", what,
        "the broker has no descriptor free (RLIMIT_NOFILE " + std::to_string(limit.rlim_cur) +
            "); it refuses connections and leaves spool requests waiting until some are free");
  }

  State &state_;
  const std::stop_token stop_;
  LoopProgress *const progress_;
  WorkerPool workers_;
  Clock::time_point next_scan_ = Clock::now();
  Clock::time_point next_garbage_ = Clock::now();
  // Requests seen and not claimed yet, oldest first, each once.
  std::deque<std::string> arrivals_;
  std::unordered_set<std::string> arriving_;
  // Connections accepted whose request has not arrived yet.
  std::list<Connection> waiting_;
  std::map<std::string, std::size_t> waiting_by_requester_;
  Clock::time_point no_descriptors_until_{};
  Clock::time_point next_descriptor_record_{};
};

void Broker::serve(std::stop_token stop, LoopProgress *progress) {
  State &state = *state_;
  state.serving.call.stop = stop;
  std::stop_callback on_stop(stop, [&] { state.notify(); });
  ServingLoop(state, std::move(stop), progress).run();
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
