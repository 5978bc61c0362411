// vault (docs/design.md#broker-protocol): answers whether the broker holds the vault session, never
// the session itself. It only examines the session file's metadata and the variable's presence, so
// no byte of a session can reach the requester.
#include <sandbox_host/command_op.hpp>
#include <sandbox_host/module.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Why the file holds no session the broker can trust, or nullopt when it does: a session
// that others could read or replace is no longer the broker's alone.
std::optional<std::string> unheld_file(const std::string &path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ENOENT) return "no session file " + path;
    return "cannot examine session file " + path + ": " + std::generic_category().message(error);
  }
  const std::string file = "session file " + path;
  if (!S_ISREG(st.st_mode)) return file + " is not a regular file";
  if (st.st_uid != geteuid()) {
    return file + " is owned by uid " + std::to_string(st.st_uid) + ", not the broker's uid " +
           std::to_string(geteuid());
  }
  if ((st.st_mode & 077) != 0) {
    const char *who = (st.st_mode & S_IROTH) != 0   ? "readable by others"
                      : (st.st_mode & S_IRGRP) != 0 ? "readable by its group"
                                                    : "open to its group or others";
    return file + " is " + who + " (mode " + octal_mode(st.st_mode) + ")";
  }
  if (st.st_size == 0) return file + " is empty";
  return std::nullopt;
}

std::optional<std::string> unheld_variable(const std::string &name) {
  const char *value = std::getenv(name.c_str());
  if (value == nullptr) return name + " is not set in the broker's environment";
  if (*value == '\0') return name + " is empty in the broker's environment";
  return std::nullopt;
}

class VaultOp final : public sandbox_host::BrokerOp {
 public:
  explicit VaultOp(const sandbox_host::HostInfo &host)
      : op_(host.config.op()),
        session_file_(host.config.value("session_file")),
        session_env_(host.config.value("session_env")) {
    host.config.allow_only({"session_file", "session_env"});
    if (!session_file_ && !session_env_) {
      throw std::invalid_argument("ops." + op_ + ": set session_file, session_env or both");
    }
    if (session_file_ && !std::filesystem::path(*session_file_).is_absolute()) {
      throw host.config.error("session_file", "must be an absolute path, not " +
                                                  sandbox_host::in_quotes(*session_file_));
    }
    if (session_env_ && !sandbox_host::is_variable_name(*session_env_)) {
      throw host.config.error("session_env",
                              sandbox_host::in_quotes(*session_env_) + " is not a variable name");
    }
  }

  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &,
              sandbox_host::Reply &reply) override {
    if (!request.args.empty()) throw sandbox_host::refusal(op_, "takes no arguments");
    std::string why;
    if (session_file_) {
      const auto reason = unheld_file(*session_file_);
      if (!reason) return held(reply);
      why = *reason;
    }
    if (session_env_) {
      const auto reason = unheld_variable(*session_env_);
      if (!reason) return held(reply);
      why += (why.empty() ? "" : "; ") + *reason;
    }
    reply.out("none\n");
    reply.err(why + "\n");
    reply.code(1);
  }

 private:
  static void held(sandbox_host::Reply &reply) {
    reply.out("held\n");
    reply.code(0);
  }

  std::string op_;
  std::optional<std::string> session_file_;
  std::optional<std::string> session_env_;
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(VaultOp, "vault", "0.1.0",
                              "answers whether the broker holds the vault session")
