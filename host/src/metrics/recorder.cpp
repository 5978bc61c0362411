#include <sandbox_host/host/metrics/recorder.hpp>

#include <atomic>

namespace sandbox_host::metrics {
namespace {

const std::shared_ptr<Recorder> &none() {
  static const auto recorder = std::make_shared<Recorder>();
  return recorder;
}

std::atomic<std::shared_ptr<Recorder>> &installed() {
  static std::atomic<std::shared_ptr<Recorder>> recorder{none()};
  return recorder;
}

}  // namespace

std::shared_ptr<Recorder> recorder() noexcept {
  return installed().load(std::memory_order_acquire);
}

void install(std::shared_ptr<Recorder> recorder) noexcept {
  installed().store(recorder ? std::move(recorder) : none(), std::memory_order_release);
}

}  // namespace sandbox_host::metrics
