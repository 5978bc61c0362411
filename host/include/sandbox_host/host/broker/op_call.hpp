// One request answered: the operation looked up, the requester described to it, the module
// called, and what it writes turned into reply frames on the request's transport.
#pragma once

#include <sandbox_host/host/broker/protocol.hpp>
#include <sandbox_host/host/module.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::broker {

// What a transport offers the call: a way to the requester, and news of its going.
class Conversation {
 public:
  virtual ~Conversation() = default;
  // Sends one encoded frame; false once the requester can receive no more.
  virtual bool send(std::string_view frame) = 0;
  // Whether the requester stopped holding the request.
  virtual bool requester_gone() = 0;
  // A descriptor that becomes ready (wake_events) when the requester may have gone.
  virtual int wake_fd() const { return -1; }
  virtual short wake_events() const { return 0; }
};

struct Operation {
  std::shared_ptr<const LoadedModule> module;
  std::vector<std::string> requester_env;  // ops.<name>.requester_env
};

// The enabled operations by name.
using Operations = std::map<std::string, Operation>;

// The process the transport identified, pinned by its pidfd.
struct Asker {
  pid_t pid = 0;
  UniqueFd pidfd;
  uid_t uid = 0;
};

struct CallSettings {
  std::filesystem::path proc_dir = "/proc";
  std::size_t max_reply_bytes = 4 * 1024 * 1024;
  std::chrono::milliseconds tick{100};
  // A reply frame the requester has not taken within this ends the call: a requester that
  // holds on without reading must not hold a thread of the broker's.
  std::chrono::milliseconds reply_timeout{10000};
  std::stop_token stop;  // the broker shutting down ends a call like its requester going
};

// Answers request over conversation and returns the refusal it sent, with what only the
// audit may be told (empty when the operation was done).
std::string answer(const Operations &operations, const Request &request, const Asker &asker,
                   Conversation &conversation, const CallSettings &settings);

// Sends a refusal that came before any operation ran.
void refuse(Conversation &conversation, const std::string &error);

}  // namespace sandbox_host::broker
