// What both transports share while they answer: the operations, the limits, the audit.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/broker/op_call.hpp>
#include <sandbox_host/host/config.hpp>

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <string>

namespace sandbox_host::broker {

struct Serving {
  Operations operations;
  CallSettings call;
  std::size_t max_request_bytes = 128 * 1024;
  BrokerIdentity identity = BrokerIdentity::lock;
  uid_t uid = 0;  // the broker's own user, the only one it answers
  AuditSink *audit = nullptr;
  std::atomic<unsigned long> answered{0};
  std::atomic<unsigned long> refused{0};

  // Counts and audits a refusal; attempted names the request and who sent it.
  void record_refusal(const std::string &rule, const std::string &attempted,
                      const std::string &error, const std::string &sandbox = {});
};

}  // namespace sandbox_host::broker
