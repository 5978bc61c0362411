#include <sandbox_host/host/learn/learn_observer.hpp>

namespace sandbox_host::learn {

LearnObserver::LearnObserver(SpecGrants grants, std::uint16_t proxy_port)
    : reader_(proxy_port), recorder_(std::move(grants)) {}

void LearnObserver::traced(const TracedCall &call) noexcept {
  try {
    recorder_.count_call();
    for (const Attempt &attempt : reader_.read(call)) recorder_.record(attempt);
  } catch (...) {
    // Out of memory at worst: the call is left unrecorded, the plugin runs on.
  }
}

}  // namespace sandbox_host::learn
