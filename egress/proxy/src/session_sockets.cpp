#include "session_sockets.hpp"

#include <sys/socket.h>

namespace sandbox_host::egress {

SessionSockets::Ticket::~Ticket() {
  std::lock_guard lock(sessions_->mutex_);
  --sessions_->sessions_;
  sessions_->ended_.notify_all();
}

SessionSockets::Shutdown::Shutdown(SessionSockets &sessions, int fd)
    : sessions_(&sessions), fd_(fd) {
  std::lock_guard lock(sessions_->mutex_);
  sessions_->fds_.insert(fd_);
  // Added after the stop's pass: the session would otherwise block until its timeout.
  if (sessions_->stopping_) ::shutdown(fd_, SHUT_RDWR);
}

SessionSockets::Shutdown::~Shutdown() {
  std::lock_guard lock(sessions_->mutex_);
  sessions_->fds_.erase(sessions_->fds_.find(fd_));
}

std::unique_ptr<SessionSockets::Ticket> SessionSockets::admit(std::size_t max) {
  std::lock_guard lock(mutex_);
  if (sessions_ >= max) return nullptr;
  ++sessions_;
  return std::unique_ptr<Ticket>(new Ticket(*this));
}

std::size_t SessionSockets::count() const {
  std::lock_guard lock(mutex_);
  return sessions_;
}

void SessionSockets::stop() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  ended_.wait(lock, [&] { return sessions_ == 0; });
}

}  // namespace sandbox_host::egress
