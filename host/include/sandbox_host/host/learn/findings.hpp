// What `run --learn` found while the plugin ran: each attempt its Spec does not grant,
// sorted by what kind of grant it would need, and the count of probes (paths that do not
// exist on the host either). Filled on the supervisor's thread, read once the plugin ended.
#pragma once

#include <sandbox_host/host/learn/call_reader.hpp>
#include <sandbox_host/host/learn/spec_grants.hpp>

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace sandbox_host::learn {

struct PathFinding {
  FileUse use = FileUse::look;  // the most any call asked of it
  std::set<std::string> calls;
  std::size_t count = 0;
};

struct NameFinding {
  std::set<std::string> sources;  // "dns", "proxy"
  std::set<std::uint16_t> ports;  // the proxy requests' ports
};

struct Findings {
  // Not granted, and there on the host: a read grant would give it.
  std::map<std::string, PathFinding> reads;
  // A write outside TmpDir and SocketDir, whether or not the path exists.
  std::map<std::string, PathFinding> writes;
  // Not granted, and the host's own user cannot tell whether it exists (EACCES on the way).
  std::map<std::string, PathFinding> unknown;
  std::size_t probes = 0;                     // not granted, missing on the host too
  std::map<Endpoint, std::size_t> endpoints;  // connects and sends the network refuses
  std::map<std::string, NameFinding> names;   // host names asked of DNS or of the proxy
  std::size_t calls = 0;                      // traced calls read
};

// Sorts attempts into findings by grants and by what the host's lstat(2) says exists.
class FindingsRecorder {
 public:
  explicit FindingsRecorder(SpecGrants grants) : grants_(std::move(grants)) {}
  void record(const Attempt &attempt);
  void count_call();
  Findings snapshot() const;
  const SpecGrants &grants() const noexcept { return grants_; }

 private:
  SpecGrants grants_;
  mutable std::mutex mutex_;
  Findings findings_;
};

}  // namespace sandbox_host::learn
