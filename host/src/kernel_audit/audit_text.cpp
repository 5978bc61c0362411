#include <sandbox_host/host/kernel_audit/audit_text.hpp>

#include <charconv>

namespace sandbox_host::kernel_audit {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string_view unquoted(std::string_view raw) {
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
    return raw.substr(1, raw.size() - 2);
  }
  return raw;
}

}  // namespace

std::optional<AuditText> split_audit_text(std::string_view text) {
  constexpr std::string_view kStart = "audit(";
  if (text.substr(0, kStart.size()) != kStart) return std::nullopt;
  const auto close = text.find("):");
  const auto colon = text.rfind(':', close);
  if (close == std::string_view::npos || colon == std::string_view::npos || colon < kStart.size()) {
    return std::nullopt;
  }
  AuditText out;
  const char *first = text.data() + colon + 1;
  const char *last = text.data() + close;
  const auto [end, error] = std::from_chars(first, last, out.serial);
  if (error != std::errc() || end != last) return std::nullopt;
  out.fields = text.substr(close + 2);
  while (!out.fields.empty() && out.fields.front() == ' ') out.fields.remove_prefix(1);
  // The kernel pads a record's payload with NULs.
  while (!out.fields.empty() && (out.fields.back() == '\0' || out.fields.back() == '\n')) {
    out.fields.remove_suffix(1);
  }
  return out;
}

std::optional<std::string_view> raw_field(std::string_view fields, std::string_view key) {
  for (std::size_t at = 0; at < fields.size();) {
    const std::size_t end = std::min(fields.find(' ', at), fields.size());
    const std::string_view token = fields.substr(at, end - at);
    if (token.size() > key.size() && token.substr(0, key.size()) == key &&
        token[key.size()] == '=') {
      return token.substr(key.size() + 1);
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> field(std::string_view fields, std::string_view key) {
  const auto raw = raw_field(fields, key);
  if (!raw) return std::nullopt;
  return std::string(unquoted(*raw));
}

std::optional<std::string> untrusted_field(std::string_view fields, std::string_view key) {
  const auto raw = raw_field(fields, key);
  if (!raw) return std::nullopt;
  if (raw->empty() || raw->front() == '"' || raw->size() % 2 != 0) {
    return std::string(unquoted(*raw));
  }
  std::string bytes;
  for (std::size_t i = 0; i < raw->size(); i += 2) {
    const int high = hex_digit((*raw)[i]);
    const int low = hex_digit((*raw)[i + 1]);
    if (high < 0 || low < 0) return std::string(*raw);  // "(null)", "?": not hex
    bytes.push_back(static_cast<char>(high * 16 + low));
  }
  return bytes;
}

namespace {

template <class Number>
std::optional<Number> parsed(std::optional<std::string_view> raw, int base) {
  if (!raw || raw->empty()) return std::nullopt;
  Number value = 0;
  const auto [end, error] = std::from_chars(raw->data(), raw->data() + raw->size(), value, base);
  if (error != std::errc() || end != raw->data() + raw->size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::int64_t> number_field(std::string_view fields, std::string_view key) {
  return parsed<std::int64_t>(raw_field(fields, key), 10);
}

std::optional<std::uint64_t> hex_field(std::string_view fields, std::string_view key) {
  return parsed<std::uint64_t>(raw_field(fields, key), 16);
}

}  // namespace sandbox_host::kernel_audit
