// `run --learn`'s observer of the traced calls (seccomp/traced_call.hpp): reads each call,
// keeps what the launch's Spec does not grant. It only looks: the call then runs as the
// plugin's confinement decides, so the run shows what breaks and why.
#pragma once

#include <sandbox_host/host/learn/call_reader.hpp>
#include <sandbox_host/host/learn/findings.hpp>
#include <sandbox_host/host/seccomp/traced_call.hpp>

namespace sandbox_host::learn {

class LearnObserver final : public TracedCallObserver {
 public:
  // grants: the launch's; proxy_port: its port of the egress proxy (Spec::proxy_port).
  LearnObserver(SpecGrants grants, std::uint16_t proxy_port);

  void traced(const TracedCall &call) noexcept override;

  // What was found so far.
  Findings findings() const { return recorder_.snapshot(); }
  const SpecGrants &grants() const noexcept { return recorder_.grants(); }

 private:
  CallReader reader_;  // the supervisor's thread alone calls traced()
  FindingsRecorder recorder_;
};

}  // namespace sandbox_host::learn
