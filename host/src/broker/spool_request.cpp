// One claimed spool request, answered on a worker: the file checked, its holder found and
// pinned, the request read, the operation called, the reply written into the FIFO.
#include <sandbox_host/host/broker/spool_request.hpp>
#include <sandbox_host/host/identity/process_identity.hpp>

#include <boost/algorithm/string/join.hpp>
#include <boost/range/adaptor/transformed.hpp>

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

namespace sandbox_host::broker {
namespace {

using Clock = std::chrono::steady_clock;

std::string pid_list(const std::vector<pid_t> &pids) {
  return boost::algorithm::join(
      pids | boost::adaptors::transformed([](pid_t pid) { return std::to_string(pid); }), ", ");
}

// The reply FIFO as a conversation; the requester is gone once no process holds the
// request any more, or nobody reads the FIFO.
class FifoConversation final : public Conversation {
 public:
  FifoConversation(UniqueFd fifo, const ClaimedRequest &request, const Asker &asker,
                   const Serving &serving)
      : fifo_(std::move(fifo)), request_(request), asker_(asker), serving_(serving) {}

  bool send(std::string_view frame) override {
    std::string line(frame);
    line.push_back('\n');
    const auto deadline = Clock::now() + serving_.call.reply_timeout;
    for (std::size_t at = 0; at < line.size();) {
      const ssize_t n = ::write(fifo_.get(), line.data() + at, line.size() - at);
      if (n > 0) {
        at += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN) return false;
      // A client that reads slowly holds up its own reply, only while it is there, and
      // only until the reply's deadline.
      if (requester_gone() || serving_.call.stop.stop_requested()) return false;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        gone_ = true;
        return false;
      }
      pollfd ready{fifo_.get(), POLLOUT, 0};
      ::poll(&ready, 1, static_cast<int>(std::min(left, serving_.call.tick).count()));
    }
    return true;
  }

  bool requester_gone() override {
    if (gone_) return true;
    pollfd reader{fifo_.get(), 0, 0};
    if (::poll(&reader, 1, 0) > 0 && (reader.revents & POLLERR) != 0) return gone_ = true;
    if (running(asker_.pidfd.get()) && holds_still()) return false;
    // The asker let go; a process it forked may hold on. A full scan says, once a tick.
    const auto now = Clock::now();
    if (now - last_scan_ < serving_.call.tick) return false;
    last_scan_ = now;
    return gone_ = holders(serving_.call.proc_dir, request_.status.st_dev, request_.status.st_ino,
                           serving_.uid, ::getpid())
                       .empty();
  }

  int wake_fd() const override { return asker_.pidfd.get(); }
  short wake_events() const override { return POLLIN; }

 private:
  bool holds_still() const {
    return serving_.identity == BrokerIdentity::lock
               ? lock_owner(request_.file.get()) == asker_.pid
               : holds(serving_.call.proc_dir, asker_.pid, request_.status.st_dev,
                       request_.status.st_ino);
  }

  UniqueFd fifo_;
  const ClaimedRequest &request_;
  const Asker &asker_;
  const Serving &serving_;
  bool gone_ = false;
  Clock::time_point last_scan_{};
};

// The conversation before an asker is known: only refusals go through it.
class RefusalConversation final : public Conversation {
 public:
  explicit RefusalConversation(int fifo) : fifo_(fifo) {}
  bool send(std::string_view frame) override {
    std::string line(frame);
    line.push_back('\n');
    return ::write(fifo_, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  }
  bool requester_gone() override { return false; }

 private:
  int fifo_;
};

// Checks the file itself; throws RequestError naming what is wrong with it.
void check_file(const ClaimedRequest &request, const Serving &serving) {
  const auto &st = request.status;
  if (!S_ISREG(st.st_mode)) {
    const char *kind = S_ISFIFO(st.st_mode)                         ? "a FIFO"
                       : S_ISDIR(st.st_mode)                        ? "a directory"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "not a regular file";
    throw RequestError(std::string("the request is ") + kind + ", not a regular file");
  }
  if (st.st_nlink != 1) {
    throw RequestError("the request has " + std::to_string(st.st_nlink) +
                       " hard links; a request is a file of its own (one link)");
  }
  if (st.st_uid != serving.uid) {
    throw RequestError("the request belongs to uid " + std::to_string(st.st_uid) +
                       "; this broker answers uid " + std::to_string(serving.uid) + " only");
  }
  if (static_cast<std::size_t>(st.st_size) > serving.max_request_bytes) {
    throw RequestError("request of " + std::to_string(st.st_size) +
                       " bytes, more than the broker's max_request_bytes " +
                       std::to_string(serving.max_request_bytes));
  }
}

// The one process that holds the request, pinned; throws RequestError otherwise. The
// refusals name no pid: the asker's host pid is not one a sandbox can see, and a pid in a
// refusal is what a sandbox would need to aim at a host process. The audit gets them.
Asker identify(const ClaimedRequest &request, const Serving &serving) {
  const auto &proc = serving.call.proc_dir;
  const dev_t dev = request.status.st_dev;
  const ino_t ino = request.status.st_ino;
  pid_t pid = 0;
  if (serving.identity == BrokerIdentity::lock) {
    const auto owner = lock_owner(request.file.get());
    if (!owner) {
      throw RequestError(
          "no process holds the request's lock (the asker closed it or exited "
          "before the broker took it)");
    }
    pid = *owner;
  } else {
    const auto found = holders(proc, dev, ino, serving.uid, ::getpid());
    if (found.empty()) throw RequestError("no process holds the request open");
    if (found.size() > 1) {
      throw RequestError("the request is held open by " + std::to_string(found.size()) +
                             " processes; it must be held by the one process that asks",
                         "pids " + pid_list(found));
    }
    pid = found.front();
  }
  const std::string which = "pid " + std::to_string(pid);
  Asker asker;
  asker.pid = pid;
  asker.uid = serving.uid;
  asker.pidfd = open_pidfd(pid);
  if (!asker.pidfd) throw RequestError("the asking process is gone", which);
  if (process_uid(proc, pid) != serving.uid) {
    throw RequestError(
        "the asking process does not run as the broker's uid " + std::to_string(serving.uid),
        which);
  }
  // In either mode the pinned process must hold the file itself. A POSIX lock names the
  // process that set it but belongs to its descriptor table: a process that shared the
  // table (clone(CLONE_FILES)) and exited leaves its lock, and its pid, to the others,
  // and that pid may be any host process's by now.
  if (!holds(proc, pid, dev, ino)) {
    throw RequestError(serving.identity == BrokerIdentity::lock
                           ? "the process that locked the request does not hold it open (it "
                             "exited and left the lock to a process sharing its descriptors); "
                             "the process that asks must lock its own request"
                           : "the process that held the request let go of it",
                       which);
  }
  if (serving.identity == BrokerIdentity::lock) {
    // Descriptors cross a fork: a second holder below the asker is a second asker.
    std::vector<pid_t> others;
    // The broker holds the request itself once it took it, and may be the asker's child.
    for (pid_t child : descendants(proc, pid)) {
      if (child != ::getpid() && holds(proc, child, dev, ino)) others.push_back(child);
    }
    if (!others.empty()) {
      throw RequestError("the request is held open by " + std::to_string(others.size() + 1) +
                             " processes; it must be held by the one process that asks, not "
                             "by the processes it forked",
                         "pids " + std::to_string(pid) + ", " + pid_list(others));
    }
    if (lock_owner(request.file.get()) != pid) {
      throw RequestError("the asking process let go of the request", which);
    }
  }
  // Everything above was about the process the pidfd pins only if it runs still.
  if (!running(asker.pidfd.get())) throw RequestError("the asking process exited", which);
  return asker;
}

std::string read_request(const ClaimedRequest &request) {
  std::string text(static_cast<std::size_t>(request.status.st_size), '\0');
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n =
        ::pread(request.file.get(), text.data() + at, text.size() - at, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RequestError("cannot read the request");
    at += static_cast<std::size_t>(n);
  }
  return text;
}

}  // namespace

void refuse_spool_request(Spool &spool, ClaimedRequest request, const std::string &rule,
                          const std::string &reason, Serving &serving) {
  std::string fifo_error;
  const UniqueFd fifo = spool.claim_reply(request.id, fifo_error);
  if (fifo) {
    RefusalConversation conversation(fifo.get());
    conversation.send(encode_frame({}));
    refuse(conversation, reason);
  }
  serving.record_refusal(rule, "spool request " + request.id,
                         fifo ? reason : reason + "; " + fifo_error);
}

void answer_spool_request(Spool &spool, ClaimedRequest request, const std::string &claim_error,
                          Serving &serving) {
  const std::string where = "spool request " + request.id;
  std::string fifo_error;
  UniqueFd fifo = spool.claim_reply(request.id, fifo_error);
  if (!fifo) {
    serving.record_refusal("request-reply", where,
                           claim_error.empty() ? fifo_error : claim_error + "; " + fifo_error);
    return;
  }
  RefusalConversation early(fifo.get());
  // An empty frame tells the client its request was taken: from now on it waits as long
  // as the broker lives, however long the operation takes.
  early.send(encode_frame({}));
  Asker asker;
  Request parsed;
  try {
    if (!claim_error.empty()) throw RequestError(claim_error);
    check_file(request, serving);
    asker = identify(request, serving);
    parsed = parse_request(read_request(request), serving.max_request_bytes);
  } catch (const RequestError &e) {
    refuse(early, e.what());
    serving.record_refusal("request-refused",
                           where + (asker.pid ? " from pid " + std::to_string(asker.pid) : ""),
                           e.audited());
    return;
  }
  FifoConversation conversation(std::move(fifo), request, asker, serving);
  const std::string refusal = answer(serving.operations, parsed, asker, conversation, serving.call);
  if (refusal.empty()) {
    ++serving.answered;
  } else {
    serving.record_refusal(
        "op-refused", "op " + quoted_prefix(parsed.op) + " from pid " + std::to_string(asker.pid),
        refusal);
  }
}

}  // namespace sandbox_host::broker
