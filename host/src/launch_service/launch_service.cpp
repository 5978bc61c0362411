#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launch_client/launch_client.hpp>
#include <sandbox_host/host/launch_client/launch_frames.hpp>
#include <sandbox_host/host/launch_client/launch_request.hpp>
#include <sandbox_host/host/launch_plan.hpp>
#include <sandbox_host/host/launch_service/launch_peer.hpp>
#include <sandbox_host/host/launch_service/launch_service.hpp>
#include <sandbox_host/host/limits/launch_warden.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>

namespace sandbox_host {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// Threads that wait in accept at most, between launches; serve() keeps one at least.
constexpr std::size_t kSpareAcceptors = 2;

// Connections of one client process that have not sent their request yet: a client sends
// its request as soon as it connects, so more are idle ones that would hold launch slots.
constexpr std::size_t kMaxPendingPerPeer = 4;

[[noreturn]] void throw_errno(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
}

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The socket's directory keeps every other uid out, whatever the socket's own mode says.
void require_private_directory(const fs::path &dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) throw_errno("stat " + dir.string());
  if (!S_ISDIR(st.st_mode)) {
    throw std::runtime_error("launcher.socket: " + dir.string() + " is not a directory");
  }
  if (st.st_uid != ::geteuid()) {
    throw std::runtime_error("launcher.socket: the directory " + dir.string() + " belongs to uid " +
                             std::to_string(st.st_uid) + ", not to uid " +
                             std::to_string(::geteuid()) + ", which serves");
  }
  if ((st.st_mode & 077) != 0) {
    throw std::runtime_error("launcher.socket: the directory " + dir.string() + " is mode " +
                             octal(st.st_mode) +
                             "; it must be 0700, so that no other uid reaches the socket");
  }
}

void make_private_directory(const fs::path &dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    if (errno == ENOENT) {
      fs::create_directories(dir.parent_path());
      if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) throw_errno("create " + dir.string());
    } else {
      throw_errno("create " + dir.string());
    }
  }
  require_private_directory(dir);
}

sockaddr_un address_of(const fs::path &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.size() >= sizeof address.sun_path) {
    throw std::runtime_error("launcher.socket " + text + ": " + std::to_string(text.size()) +
                             " bytes, longer than a unix socket path may be (" +
                             std::to_string(sizeof address.sun_path - 1) + ")");
  }
  std::memcpy(address.sun_path, text.data(), text.size());
  return address;
}

// A socket file left by a service that is gone is replaced; one that answers is not.
void remove_stale_socket(const fs::path &path, const sockaddr_un &address) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode)) {
    throw std::runtime_error("launcher.socket " + path.string() + ": exists and is not a socket");
  }
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (probe &&
      ::connect(probe.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0) {
    throw std::runtime_error("launcher.socket " + path.string() +
                             ": another launch service answers there");
  }
  ::unlink(path.c_str());
}

UniqueFd listen_at(const fs::path &path) {
  make_private_directory(path.parent_path());
  const sockaddr_un address = address_of(path);
  remove_stale_socket(path, address);
  // Blocking: a connection wakes one of the threads waiting in accept(2), not every one.
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw_errno("launcher: socket");
  if (::bind(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
    throw_errno("launcher: bind " + path.string());
  }
  if (::chmod(path.c_str(), 0600) != 0) throw_errno("launcher: chmod " + path.string());
  if (::listen(fd.get(), SOMAXCONN) != 0) throw_errno("launcher: listen");
  return fd;
}

// A socket the service manager made (socket activation) holds the same invariants as one
// made here: its directory is this uid's and 0700 (a socket unit's DirectoryMode=0700 in
// the user's runtime directory), the socket 0600 (SocketMode=0600). Non-blocking: its
// acceptors poll it beside the wake descriptor (see wake_acceptors).
UniqueFd adopt_listener(UniqueFd inherited, const fs::path &path) {
  require_private_directory(path.parent_path());
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) throw_errno("launcher: stat " + path.string());
  if ((st.st_mode & 077) != 0) {
    throw std::runtime_error("launcher.socket: the inherited socket " + path.string() +
                             " is mode " + octal(st.st_mode) +
                             "; it must be 0600 (SocketMode=0600 in the socket unit)");
  }
  const int flags = ::fcntl(inherited.get(), F_GETFL);
  if (flags < 0 || ::fcntl(inherited.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    throw_errno("launcher: make the inherited socket non-blocking");
  }
  return inherited;
}

// What the client sent that the service will not read: a unix socket closed with unread
// data makes the peer's next read fail with ECONNRESET, before it reads the refusal.
void discard_pending(int connection) {
  std::array<char, 16384> buffer{};
  for (int reads = 0; reads < 1024; ++reads) {
    if (::recv(connection, buffer.data(), buffer.size(), MSG_DONTWAIT) <= 0) return;
  }
}

// What the client passes on is what the service passes on: the same set, nothing more.
bool forwardable(int signal) {
  const sigset_t set = forwarded_signals();
  return sigismember(&set, signal) == 1;
}

}  // namespace

LaunchService::LaunchService(Host &host, const LauncherConfig &config, UniqueFd inherited)
    : host_(host), config_(config), socket_path_(config.socket), adopted_(bool(inherited)) {
  listener_ =
      adopted_ ? adopt_listener(std::move(inherited), socket_path_) : listen_at(socket_path_);
  if (adopted_) {
    wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake_) throw_errno("launcher: eventfd");
  }
  start_launch_watches();
  // Sandboxes prepared now, for the launches to come.
  if (config_.depth > 0) {
    std::vector<Network> networks{Network::none, Network::outbound};
    if (host_.config().egress) networks.push_back(Network::proxied);
    for (const BackendStatus &status : host_.probe_all()) {
      if (!status.available || !host_.prepares(status.name)) continue;
      for (Network network : networks) pool_for(status.name, network);
    }
  }
}

LaunchService::~LaunchService() {
  wake_acceptors();
  {
    std::unique_lock lock(connections_mutex_);
    for (auto &[id, connection] : connections_) {
      if (connection.fd >= 0) ::shutdown(connection.fd, SHUT_RDWR);
    }
    connections_changed_.wait(lock, [this] {
      for (const auto &[id, connection] : connections_) {
        if (!connection.done) return false;
      }
      return true;
    });
    reap_finished();
  }
  // An inherited socket stays: its socket unit listens on it again once serve is gone.
  if (!adopted_) ::unlink(socket_path_.c_str());
}

void LaunchService::wake_acceptors() {
  stopping_ = true;
  if (adopted_) {
    // shutdown(2) would end the service manager's socket too, for every later serve: the
    // acceptors wait on the wake descriptor beside it instead, readable from now on.
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_.get(), &one, sizeof one);
    return;
  }
  // Every accept(2) on the listener returns then, and no connection comes any more.
  ::shutdown(listener_.get(), SHUT_RDWR);
}

bool LaunchService::wait_for_connection() const {
  std::array<pollfd, 2> fds{pollfd{listener_.get(), POLLIN, 0}, pollfd{wake_.get(), POLLIN, 0}};
  while (::poll(fds.data(), fds.size(), -1) < 0 && errno == EINTR) {
  }
  return !stopping_;
}

void LaunchService::reap_finished() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->second.done) {
      it->second.thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
  finished_ = 0;
}

SandboxPool &LaunchService::pool_for(const std::string &mode, Network network) {
  std::lock_guard lock(pools_mutex_);
  auto &pool = pools_[{mode, network}];
  if (!pool) {
    const bool prepares = mode != kModeOff && config_.depth > 0 && host_.prepares(mode);
    pool = std::make_unique<SandboxPool>(
        host_, mode, network,
        PoolOptions{.depth = prepares ? config_.depth : 0, .renew_idle = true});
  }
  return *pool;
}

// One thread always waits in accept, started before its connection comes: the thread that
// accepts a launch handles it, so that no thread start and no hand-over between threads
// lies on the launch's path (docs/benchmarks.md). serve() starts one whenever none waits;
// a thread done with its launch waits again while fewer than kSpareAcceptors do.
void LaunchService::serve(std::stop_token stop, LoopProgress *progress) {
  std::stop_callback wake(stop, [this] {
    wake_acceptors();
    std::lock_guard lock(connections_mutex_);
    connections_changed_.notify_all();
  });
  std::unique_lock lock(connections_mutex_);
  while (!stop.stop_requested()) {
    if (progress != nullptr) progress->turned();
    if (finished_ > 0) reap_finished();
    if (idle_acceptors_ == 0) {
      // Registered once it exists; it takes the lock before it touches its entry.
      const std::size_t id = next_connection_;
      std::thread acceptor([this, id] { accept_and_handle(id); });
      ++next_connection_;
      connections_[id].thread = std::move(acceptor);
      ++idle_acceptors_;
    }
    // Woken at least every kLoopTurnBound, so that an idle service still counts its turns.
    connections_changed_.wait_for(lock, kLoopTurnBound, [&] {
      return idle_acceptors_ == 0 || finished_ > 0 || stop.stop_requested();
    });
  }
}

UniqueFd LaunchService::accept_connection() {
  for (;;) {
    if (adopted_ && !wait_for_connection()) return UniqueFd();
    UniqueFd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (stopping_) return UniqueFd();
    if (connection) return connection;
    // EAGAIN: another acceptor of the adopted, non-blocking socket took the connection.
    if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN) continue;
    // Out of descriptors, say: the pending connection waits in the backlog for a moment.
    host_.audit().record({"launcher", "", "launcher-descriptors",
                          "accept a launch: " + std::string(std::strerror(errno)),
                          "raise RLIMIT_NOFILE or lower launcher.max_launches"});
    ::poll(nullptr, 0, 100);
  }
}

void LaunchService::accept_and_handle(std::size_t id) {
  // Signals sent to serve are for its signal-waiting thread.
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  for (;;) {
    UniqueFd connection = accept_connection();
    {
      std::lock_guard lock(connections_mutex_);
      // serve() starts the next acceptor when none is left waiting.
      if (--idle_acceptors_ == 0) connections_changed_.notify_all();
      if (connection) connections_[id].fd = connection.get();
    }
    if (!connection) break;  // stopping
    handle(connection.get());
    // Closed under the lock, once the destructor can no longer shut the number down: a
    // number closed before would be another descriptor's by then.
    std::lock_guard lock(connections_mutex_);
    connections_[id].fd = -1;
    connection.reset();
    // A thread that has handled a launch handles the next one cheapest (its stack and malloc
    // arena are in place): it waits again, unless enough others wait already.
    if (idle_acceptors_ >= kSpareAcceptors) break;
    ++idle_acceptors_;
  }
  std::lock_guard lock(connections_mutex_);
  connections_[id].done = true;
  ++finished_;
  connections_changed_.notify_all();
}

std::size_t LaunchService::prepared() const {
  std::lock_guard lock(pools_mutex_);
  std::size_t ready = 0;
  for (const auto &[key, pool] : pools_) ready += pool->stats().ready;
  return ready;
}

void LaunchService::refuse(int connection, const std::string &plugin, const std::string &rule,
                           const std::string &reason, std::string_view backend) {
  ++refused_;
  metrics::recorder()->launch(backend, "refused", {});
  host_.audit().record({"launcher", plugin, rule, reason, "the launch service refused it"});
  LaunchReply reply;
  reply.kind = LaunchReply::Kind::refused;
  reply.reason = reason;
  try {
    send_frame(connection, encode_reply(reply));
  } catch (const std::exception &) {
    // The client is gone; the audit has the refusal.
  }
  discard_pending(connection);
}

// Until its request has come, a connection is one of its peer's pending ones.
struct LaunchService::PendingSlot {
  LaunchService *service;
  pid_t pid;
  ~PendingSlot() { leave(); }
  void leave() {
    if (service == nullptr) return;
    std::lock_guard lock(service->connections_mutex_);
    if (--service->pending_by_peer_[pid] == 0) service->pending_by_peer_.erase(pid);
    service = nullptr;
  }
};

// Counted once its peer is admitted: connections a peer has beyond its bound, refused at
// once, never take another client's place.
struct LaunchService::RunningSlot {
  LaunchService *service;
  std::size_t count = 0;
  explicit RunningSlot(LaunchService *s) : service(s) {
    std::lock_guard lock(service->connections_mutex_);
    count = ++service->running_;
  }
  ~RunningSlot() {
    std::lock_guard lock(service->connections_mutex_);
    --service->running_;
  }
  RunningSlot(const RunningSlot &) = delete;
  RunningSlot &operator=(const RunningSlot &) = delete;
};

struct LaunchService::Received {
  Frame frame;  // its descriptors: the plugin's stdin, stdout and stderr
  LaunchRequest request;
};

void LaunchService::handle(int connection) {
  const std::optional<LaunchPeer> peer = admitted_peer(connection);
  if (!peer) return;
  if (!admit_pending(connection, *peer)) return;
  PendingSlot pending{this, peer->pid};
  RunningSlot running(this);
  if (running.count > config_.max_launches) {
    refuse(connection, "", "launcher-busy",
           std::to_string(running.count - 1) +
               " launches are running, as many as launcher.max_launches allows");
    return;
  }
  std::optional<Received> received = receive_request(connection, pending);
  if (!received) return;
  const std::string plugin = launch_name(received->request.spec);
  LaunchPlan plan;
  std::optional<Child> child = start_plugin(connection, *received, plan, plugin);
  if (!child) return;
  struct PluginRunning {
    PluginRunning() { metrics::recorder()->plugin_running(1); }
    ~PluginRunning() { metrics::recorder()->plugin_running(-1); }
  } plugin_running;
  host_.audit().record({"launcher", plugin, "launcher-launch",
                        "launch " + plan.spec.binary_path + " under " + plan.mode + ", network " +
                            std::string(to_string(plan.spec.network)) + ", for " +
                            peer->describe() + ": pid " + std::to_string(child->pid()),
                        "", false});
  try {
    send_frame(connection, encode_reply({LaunchReply::Kind::started, child->pid(), 0, 0, "", ""}));
  } catch (const std::exception &) {
    // The client is gone already: below, its connection reads as closed.
  }
  watch_plugin(connection, *child, plugin, plan.mode);
}

std::optional<LaunchPeer> LaunchService::admitted_peer(int connection) {
  try {
    LaunchPeer peer = identify_peer(connection);
    require_unsandboxed(connection, peer, ::geteuid());
    return peer;
  } catch (const PeerRefusal &e) {
    refuse(connection, "", e.rule(), e.what());
    return std::nullopt;
  }
}

bool LaunchService::admit_pending(int connection, const LaunchPeer &peer) {
  bool admitted = false;
  {
    std::lock_guard lock(connections_mutex_);
    std::size_t &count = pending_by_peer_[peer.pid];
    admitted = count < kMaxPendingPerPeer;
    if (admitted) ++count;
  }
  if (!admitted) {
    refuse(connection, "", "launcher-busy-peer",
           "a launch from " + peer.describe() + ", which has " +
               std::to_string(kMaxPendingPerPeer) +
               " connections already that have not sent their request");
  }
  return admitted;
}

std::optional<LaunchService::Received> LaunchService::receive_request(int connection,
                                                                      PendingSlot &pending) {
  std::optional<Frame> frame;
  try {
    frame = receive_frame(connection, config_.max_request_bytes,
                          Clock::now() + config_.request_timeout);
  } catch (const std::exception &e) {
    refuse(connection, "", "launcher-request", std::string("the request: ") + e.what());
    return std::nullopt;
  }
  pending.leave();
  if (!frame) return std::nullopt;  // a client that only looked whether the service answers
  if (frame->fds.size() != 3) {
    refuse(connection, "", "launcher-request",
           "the request carries " + std::to_string(frame->fds.size()) +
               " descriptors; a launch brings exactly its stdin, stdout and stderr");
    return std::nullopt;
  }
  try {
    LaunchRequest request = decode_launch_request(frame->body);
    return Received{std::move(*frame), std::move(request)};
  } catch (const std::exception &e) {
    refuse(connection, "", "launcher-request", std::string("the request: ") + e.what());
    return std::nullopt;
  }
}

std::optional<Child> LaunchService::start_plugin(int connection, Received &received,
                                                 LaunchPlan &plan, const std::string &plugin) {
  std::optional<Child> child;
  const auto asked = Clock::now();
  try {
    require_configured_confinement(host_, received.request);
    plan = plan_launch(host_, std::move(received.request));
    const std::vector<UniqueFd> &fds = received.frame.fds;
    const Stdio stdio{fds[0].get(), fds[1].get(), fds[2].get()};
    child.emplace(pool_for(plan.mode, plan.spec.network).launch(plan.spec, stdio, plan.plugin_env));
  } catch (const std::exception &e) {
    refuse(connection, plugin, "launcher-launch", e.what(), plan.mode.empty() ? "none" : plan.mode);
    return std::nullopt;
  }
  received.frame.fds.clear();  // the plugin holds them now
  ++launched_;
  metrics::recorder()->launch(plan.mode, "started", Clock::now() - asked);
  return child;
}

void LaunchService::watch_plugin(int connection, Child &child, const std::string &plugin,
                                 const std::string &mode) {
  UniqueFd pid_fd(static_cast<int>(::syscall(SYS_pidfd_open, child.pid(), 0)));
  if (!pid_fd) {
    ::kill(child.pid(), SIGKILL);
    child.wait();
    refuse(connection, plugin, "launcher-launch",
           std::string("watch the plugin: pidfd_open: ") + std::strerror(errno), mode);
    return;
  }
  for (;;) {
    // A prepared sandbox reports the status on its channel before stage 1 exits; -1 (a cold
    // launch) is not polled.
    std::array<pollfd, 3> fds{pollfd{pid_fd.get(), POLLIN, 0}, pollfd{connection, POLLIN, 0},
                              pollfd{child.status_fd(), POLLIN, 0}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents != 0 && !child.take_reported_status()) continue;  // none will come
    if (fds[0].revents != 0 || fds[2].revents != 0) {
      const ExitStatus status = child.wait();
      try {
        send_frame(connection,
                   encode_reply({LaunchReply::Kind::exited, 0, status.code, status.signal, "",
                                 child.death() ? child.death()->line() : ""}));
      } catch (const std::exception &) {
        // Nobody waits for the status any more.
      }
      return;
    }
    if (fds[1].revents == 0) continue;
    // The client's connection closed: whatever ended the client, its plugin ends too.
    if (!pass_client_frame(connection, child, plugin)) break;
  }
  ::kill(child.pid(), SIGKILL);
  child.wait();
}

bool LaunchService::pass_client_frame(int connection, Child &child, const std::string &plugin) {
  std::optional<Frame> message;
  try {
    message = receive_frame(connection, kMaxSmallFrame, Clock::now() + config_.request_timeout);
  } catch (const std::exception &e) {
    host_.audit().record({"launcher", plugin, "launcher-request",
                          std::string("a frame after the launch: ") + e.what(),
                          "the plugin is killed: its client broke the protocol"});
    return false;
  }
  if (!message) return false;
  int signal = 0;
  try {
    signal = decode_signal(message->body);
  } catch (const std::exception &e) {
    host_.audit().record({"launcher", plugin, "launcher-request",
                          std::string("a frame after the launch: ") + e.what(),
                          "ignored; a client sends only signals after its request"});
    return true;
  }
  if (forwardable(signal)) {
    ::kill(child.pid(), signal);
  } else {
    host_.audit().record({"launcher", plugin, "launcher-signal",
                          "pass signal " + std::to_string(signal) + " to the plugin",
                          "only SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 pass"});
  }
  return true;
}

}  // namespace sandbox_host
