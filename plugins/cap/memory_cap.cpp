// Checking a requested cap (memory_cap.hpp). The requester is sandboxed and untrusted: each
// message quotes its text escaped, and every name that reaches a path or a bus is checked
// here first.
#include "memory_cap.hpp"

#include <sandbox_host/command_op.hpp>

#include <charconv>
#include <stdexcept>

namespace sandbox_host::cap {
namespace {

constexpr std::size_t kLongestUnitName = 128;

std::invalid_argument bad(std::string_view field, std::string_view text, std::string_view what) {
  return std::invalid_argument(std::string(field) + " " + in_quotes(text) + " " +
                               std::string(what));
}

}  // namespace

MemoryLimit parse_memory_limit(std::string_view field, std::string_view text) {
  static constexpr std::string_view kForm =
      "is not a size: bytes, or a whole number with K, M, G or T (1024-based), or \"infinity\"";
  if (text == "infinity") return std::nullopt;
  if (text.empty()) throw std::invalid_argument(std::string(field) + " is required");
  std::uint64_t unit = 1;
  std::string_view digits = text;
  switch (text.back()) {
    case 'K':
      unit = 1ULL << 10;
      break;
    case 'M':
      unit = 1ULL << 20;
      break;
    case 'G':
      unit = 1ULL << 30;
      break;
    case 'T':
      unit = 1ULL << 40;
      break;
    default:
      break;
  }
  if (unit != 1) digits.remove_suffix(1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    throw bad(field, text, kForm);
  }
  std::uint64_t number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (error != std::errc() || end != digits.data() + digits.size() ||
      number > kLargestLimit / unit) {
    throw bad(field, text, "is too large: at most " + std::to_string(kLargestLimit) + " bytes");
  }
  return number * unit;
}

std::string to_string(const MemoryLimit &limit) {
  return limit ? std::to_string(*limit) : "infinity";
}

MemoryCap memory_cap(std::string_view slice, std::string_view max, std::string_view swap) {
  if (slice.empty()) throw std::invalid_argument("slice is required: the slot's <name>.slice");
  check_unit_name("slice", slice, ".slice");
  MemoryCap cap{std::string(slice), parse_memory_limit("max", max),
                parse_memory_limit("swap", swap)};
  if (cap.max && *cap.max < kSmallestMax) {
    throw bad("max", max,
              "is below the smallest cap, 1M (" + std::to_string(kSmallestMax) + " bytes)");
  }
  // cgroup v1 caps memory + swap together, so their sum must be a limit too.
  if (cap.max && cap.swap && *cap.swap > kLargestLimit - *cap.max) {
    throw std::invalid_argument("max " + in_quotes(max) + " and swap " + in_quotes(swap) +
                                " add up to more than " + std::to_string(kLargestLimit) + " bytes");
  }
  return cap;
}

void check_unit_name(std::string_view field, std::string_view name, std::string_view suffix) {
  const std::string wanted = "must be <name>" + std::string(suffix);
  if (name.size() > kLongestUnitName) {
    throw bad(field, name, "is longer than " + std::to_string(kLongestUnitName) + " bytes");
  }
  if (name.find('/') != std::string_view::npos) throw bad(field, name, "contains \"/\"");
  if (name.find("..") != std::string_view::npos) throw bad(field, name, "contains \"..\"");
  if (!name.ends_with(suffix) || name.size() == suffix.size()) throw bad(field, name, wanted);
  const std::string_view stem = name.substr(0, name.size() - suffix.size());
  if (stem.front() == '-' || stem.front() == '.') {
    throw bad(field, name, "must not start with \"-\" or \".\"");
  }
  // systemd reads each "-" of a slice's name as a level: "a--b" and "a-" name no slice.
  if (stem.back() == '-' || stem.find("--") != std::string_view::npos) {
    throw bad(field, name, "has an empty level between \"-\"");
  }
  const bool slice = suffix == ".slice";
  for (char c : stem) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != ':' && c != '_' && c != '.' && c != '-' && (slice || c != '@')) {
      throw bad(field, name,
                std::string("contains ") + in_quotes(std::string_view(&c, 1)) +
                    "; a unit name takes letters, digits and \":_.-" + (slice ? "" : "@") + "\"");
    }
  }
}

}  // namespace sandbox_host::cap
