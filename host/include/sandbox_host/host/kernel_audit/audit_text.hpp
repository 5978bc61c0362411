// The text of one kernel audit record as the audit netlink socket delivers it:
// `audit(<seconds>.<millis>:<serial>): key=value key="value" ...`. The records of one event
// share its serial. A value the kernel took from a process (a path, a command name) is
// quoted when it holds only printable ASCII other than the quote, and is otherwise written
// as hex digits; either way it cannot hold a space, so a hostile path cannot add a field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::kernel_audit {

struct AuditText {
  std::uint64_t serial = 0;
  std::string_view fields;  // after "): "
};

// nullopt when text does not begin as a record does.
std::optional<AuditText> split_audit_text(std::string_view text);

// The raw value of key in fields (quotes kept), as it stands after the first " key=" or at
// the start; nullopt when absent.
std::optional<std::string_view> raw_field(std::string_view fields, std::string_view key);

// The value of key, unquoted; for an untrusted string (a path, a command name), the hex
// form decoded to its bytes too. nullopt when absent.
std::optional<std::string> field(std::string_view fields, std::string_view key);
std::optional<std::string> untrusted_field(std::string_view fields, std::string_view key);

// A decimal number field (exit=-13), or a hexadecimal one (domain=1e42eaee1); nullopt
// when absent or not a number.
std::optional<std::int64_t> number_field(std::string_view fields, std::string_view key);
std::optional<std::uint64_t> hex_field(std::string_view fields, std::string_view key);

}  // namespace sandbox_host::kernel_audit
