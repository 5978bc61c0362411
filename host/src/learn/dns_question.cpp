#include <sandbox_host/host/learn/dns_question.hpp>

#include <cstddef>
#include <cstdint>

namespace sandbox_host::learn {
namespace {

constexpr std::size_t kHeaderSize = 12;
constexpr std::size_t kMaxName = 255;  // RFC 1035 2.3.4, in its wire form
constexpr unsigned kMaxLabel = 63;

unsigned byte_at(std::string_view data, std::size_t at) {
  return static_cast<unsigned char>(data[at]);
}

}  // namespace

std::optional<std::string> dns_question(std::string_view datagram) {
  if (datagram.size() < kHeaderSize) return std::nullopt;
  const unsigned flags = byte_at(datagram, 2) << 8 | byte_at(datagram, 3);
  const bool response = (flags & 0x8000) != 0;
  const unsigned opcode = (flags >> 11) & 0xf;
  const unsigned questions = byte_at(datagram, 4) << 8 | byte_at(datagram, 5);
  if (response || opcode != 0 || questions == 0) return std::nullopt;
  std::string name;
  std::size_t at = kHeaderSize;
  std::size_t wire = 0;
  for (;;) {
    if (at >= datagram.size()) return std::nullopt;
    const unsigned length = byte_at(datagram, at);
    wire += 1 + length;
    if (wire > kMaxName) return std::nullopt;
    if (length == 0) break;
    if (length > kMaxLabel || at + 1 + length > datagram.size()) return std::nullopt;
    if (!name.empty()) name += '.';
    for (std::size_t i = at + 1; i <= at + length; ++i) {
      const char c = datagram[i];
      name += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    at += 1 + length;
  }
  // QTYPE and QCLASS follow the name.
  if (name.empty() || at + 1 + 4 > datagram.size()) return std::nullopt;
  return name;
}

}  // namespace sandbox_host::learn
