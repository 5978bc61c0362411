// SOCKS5 greeting, CONNECT request and replies (socks5.hpp), by RFC 1928. Every field is
// checked as soon as its bytes are there, so a bad client is answered without waiting.
#include <sandbox_host/egress/proxy/socks5.hpp>

#include <arpa/inet.h>

#include <array>
#include <utility>

namespace sandbox_host::egress {
namespace {

constexpr std::uint8_t kVersion = 5;
constexpr std::uint8_t kNoAuthentication = 0x00;
constexpr std::uint8_t kNoAcceptableMethod = 0xff;
constexpr std::uint8_t kConnect = 1, kBind = 2, kUdpAssociate = 3;
constexpr std::uint8_t kIpv4 = 1, kDomain = 3, kIpv6 = 4;

std::uint8_t byte_at(std::string_view buffer, std::size_t index) {
  return static_cast<std::uint8_t>(buffer[index]);
}

std::string version_error(std::uint8_t version) {
  if (version == 4) return "SOCKS4 is not supported; use socks5h://";
  return "not SOCKS5: version byte " + std::to_string(version);
}

RequestParse5 refuse(Socks5Reply reply, std::string error) {
  RequestParse5 result;
  result.state = ParseState::error;
  result.reply = reply;
  result.error = std::move(error);
  return result;
}

std::string address_text(int family, std::string_view bytes) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  ::inet_ntop(family, bytes.data(), text.data(), text.size());
  return text.data();
}

}  // namespace

GreetingParse parse_socks5_greeting(std::string_view buffer) {
  GreetingParse result;
  if (buffer.empty()) return result;
  if (byte_at(buffer, 0) != kVersion) {
    result.state = ParseState::error;
    result.error = version_error(byte_at(buffer, 0));
    return result;
  }
  if (buffer.size() < 2) return result;
  const std::size_t methods = byte_at(buffer, 1);
  if (methods == 0) {
    result.state = ParseState::error;
    result.error = "greeting offers no authentication method";
    return result;
  }
  if (buffer.size() < 2 + methods) return result;
  for (std::size_t i = 0; i < methods; ++i) {
    if (byte_at(buffer, 2 + i) == kNoAuthentication) result.greeting.no_auth_offered = true;
  }
  result.state = ParseState::complete;
  result.consumed = 2 + methods;
  return result;
}

std::string socks5_method_selection(bool accept) {
  return {static_cast<char>(kVersion),
          static_cast<char>(accept ? kNoAuthentication : kNoAcceptableMethod)};
}

RequestParse5 parse_socks5_request(std::string_view buffer) {
  RequestParse5 incomplete;
  if (buffer.empty()) return incomplete;
  if (byte_at(buffer, 0) != kVersion) {
    return refuse(Socks5Reply::general_failure, version_error(byte_at(buffer, 0)));
  }
  if (buffer.size() < 2) return incomplete;
  switch (byte_at(buffer, 1)) {
    case kConnect:
      break;
    case kBind:
      return refuse(Socks5Reply::command_not_supported, "BIND is not supported, only CONNECT");
    case kUdpAssociate:
      return refuse(Socks5Reply::command_not_supported,
                    "UDP ASSOCIATE is not supported, only CONNECT");
    default:
      return refuse(Socks5Reply::command_not_supported,
                    "unknown command " + std::to_string(byte_at(buffer, 1)) + ", only CONNECT");
  }
  if (buffer.size() < 3) return incomplete;
  if (byte_at(buffer, 2) != 0) {
    return refuse(Socks5Reply::general_failure,
                  "reserved byte is " + std::to_string(byte_at(buffer, 2)) + ", not 0");
  }
  if (buffer.size() < 4) return incomplete;

  Socks5Request request;
  std::size_t address_end = 0;
  switch (byte_at(buffer, 3)) {
    case kIpv4:
      address_end = 4 + 4;
      if (buffer.size() < address_end) return incomplete;
      request.type = Socks5Request::AddressType::ipv4;
      request.host = address_text(AF_INET, buffer.substr(4, 4));
      break;
    case kIpv6:
      address_end = 4 + 16;
      if (buffer.size() < address_end) return incomplete;
      request.type = Socks5Request::AddressType::ipv6;
      request.host = address_text(AF_INET6, buffer.substr(4, 16));
      break;
    case kDomain: {
      if (buffer.size() < 5) return incomplete;
      const std::size_t length = byte_at(buffer, 4);
      if (length == 0) return refuse(Socks5Reply::general_failure, "domain name is empty");
      address_end = 5 + length;
      if (buffer.size() < address_end) return incomplete;
      const std::string_view name = buffer.substr(5, length);
      for (std::size_t i = 0; i < name.size(); ++i) {
        const auto c = static_cast<std::uint8_t>(name[i]);
        if (c <= 0x20 || c == 0x7f) {
          return refuse(Socks5Reply::general_failure, "domain name holds control or space byte " +
                                                          std::to_string(c) + " at offset " +
                                                          std::to_string(i));
        }
      }
      request.type = Socks5Request::AddressType::domain;
      request.host = std::string(name);
      break;
    }
    default:
      return refuse(Socks5Reply::address_type_not_supported,
                    "unknown address type " + std::to_string(byte_at(buffer, 3)));
  }
  if (buffer.size() < address_end + 2) return incomplete;
  request.port = static_cast<std::uint16_t>(byte_at(buffer, address_end) << 8 |
                                            byte_at(buffer, address_end + 1));
  if (request.port == 0) return refuse(Socks5Reply::general_failure, "port is 0");

  RequestParse5 result;
  result.state = ParseState::complete;
  result.consumed = address_end + 2;
  result.request = std::move(request);
  return result;
}

std::string socks5_reply(Socks5Reply reply) {
  // VER REP RSV ATYP=IPv4 BND.ADDR BND.PORT
  std::string out(10, '\0');
  out[0] = static_cast<char>(kVersion);
  out[1] = static_cast<char>(reply);
  out[3] = static_cast<char>(kIpv4);
  return out;
}

}  // namespace sandbox_host::egress
