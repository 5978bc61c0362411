// From one traced call to what it attempted: the paths it names, made absolute, and the
// endpoints and host names it sends to. Reads the calling thread's memory (plugin_memory.hpp)
// and, after reading, asks whether the call is still pending: a thread that exited or whose
// call was answered may have reused the memory, and what was read is then dropped.
#pragma once

#include <sandbox_host/host/learn/call_shape.hpp>
#include <sandbox_host/host/learn/socket_endpoint.hpp>
#include <sandbox_host/host/seccomp/traced_call.hpp>

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sandbox_host::learn {

struct FileAttempt {
  std::string path;  // absolute, lexically clean; the plugin's bytes, not necessarily UTF-8
  FileUse use = FileUse::read;
  std::string call;
};

struct SocketAttempt {
  Endpoint to;
  std::string call;
};

// A host name the plugin asked for: in a DNS query, or in a request to the egress proxy.
struct NameAttempt {
  enum class Source { dns, proxy };
  std::string name;
  Source source = Source::dns;
  std::uint16_t port = 0;  // the proxy request's; 0 for a DNS query
};

using Attempt = std::variant<FileAttempt, SocketAttempt, NameAttempt>;

class CallReader {
 public:
  // proxy_port: network proxied's port on 127.0.0.1 inside the sandbox, whose requests name
  // hosts (0: none).
  explicit CallReader(std::uint16_t proxy_port = 0) : proxy_port_(proxy_port) {}

  // What call attempted; empty when it names nothing this can read (a descriptor-only
  // call, a bad pointer, a thread that is gone, another architecture). Never throws for
  // anything the plugin controls.
  std::vector<Attempt> read(const TracedCall &call);

 private:
  std::vector<Attempt> read_paths(const TracedCall &call, const CallShape &shape);
  std::vector<Attempt> read_socket(const TracedCall &call, const CallShape &shape);
  // What a datagram or stream payload sent to `to` names: a DNS question to port 53, a
  // proxy request to the proxy's port.
  void read_payload(const Endpoint &to, const std::string &payload, std::vector<Attempt> &out);

  std::uint16_t proxy_port_;
  // Where each connected socket of a process leads, by (thread group, descriptor), from
  // its traced connect: a send without an address goes there. A descriptor closed and
  // reused without a traced connect keeps the old entry; what it sends is then read only
  // when it parses as a DNS question or a proxy request.
  std::map<std::pair<pid_t, int>, Endpoint> connected_;
};

}  // namespace sandbox_host::learn
