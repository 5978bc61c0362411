// The bytes an HTTP session of the egress proxy carries, for the metrics: a forwarded
// request and a TLS-terminated session relay through ByteStreams (a tunnel counts its own
// in tunnel_relay.cpp).
#pragma once

#include <sandbox_host/egress/proxy/http_exchange.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>

#include <cstdint>

namespace sandbox_host::egress {

// Counts what is read from a stream: what its side sent.
class CountedStream final : public ByteStream {
 public:
  explicit CountedStream(ByteStream &inner) : inner_(inner) {}
  std::size_t read_some(std::string &buffer) override {
    const std::size_t n = inner_.read_some(buffer);
    received_ += n;
    return n;
  }
  void write_all(std::string_view bytes) override { inner_.write_all(bytes); }
  std::uint64_t received() const { return received_; }

 private:
  ByteStream &inner_;
  std::uint64_t received_ = 0;
};

// Tells the metrics what a session's two sides sent when the session ends, however it ends.
class ReportedBytes {
 public:
  ReportedBytes(const CountedStream &client, const CountedStream &upstream)
      : client_(client), upstream_(upstream) {}
  ReportedBytes(const ReportedBytes &) = delete;
  ReportedBytes &operator=(const ReportedBytes &) = delete;
  ~ReportedBytes() { metrics::recorder()->egress_bytes(client_.received(), upstream_.received()); }

 private:
  const CountedStream &client_, &upstream_;
};

}  // namespace sandbox_host::egress
