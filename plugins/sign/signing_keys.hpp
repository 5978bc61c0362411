// Which keys the sign operation may sign with, and how a requested key is matched against
// them. The rule is strict so that no spelling can reach a key the operator did not name:
// an entry is a long key id (16 hex digits) or a fingerprint (40 or 64), written in any
// case, with or without "0x", spaces or a trailing "!"; a request matches an entry only
// when both normalise to the same digits. Short ids (8 digits) are refused outright, since
// anyone can make a key that collides with one, and a prefix or suffix of an entry is no
// match. gpg then gets the operator's entry with "!", which pins exactly that key.
#pragma once

#include <sandbox_host/command_op.hpp>
#include <sandbox_host/op_config.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sign_op {

// The key's hex digits in upper case, without "0x", spaces or the trailing "!"; nullopt
// when what remains is not 16, 40 or 64 hex digits.
inline std::optional<std::string> normalised_key(std::string_view key) {
  if (!key.empty() && key.back() == '!') key.remove_suffix(1);
  std::string digits;
  for (char c : key) {
    if (c != ' ') digits += c;
  }
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.erase(0, 2);
  }
  for (char &c : digits) {
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return std::nullopt;
  }
  if (digits.size() != 16 && digits.size() != 40 && digits.size() != 64) return std::nullopt;
  return digits;
}

class SigningKeys {
 public:
  // The config's `keys`: at least one, each a long key id or a fingerprint.
  explicit SigningKeys(const sandbox_host::OpConfig &config) {
    for (const auto &entry : config.values("keys")) {
      auto key = normalised_key(entry);
      if (!key) {
        throw config.error("keys", sandbox_host::in_quotes(entry) +
                                       " is not a long key id (16 hex digits) or a fingerprint "
                                       "(40 or 64); short ids collide too easily");
      }
      keys_.push_back(std::move(*key));
    }
    if (keys_.empty()) {
      throw config.error("keys", "required: the fingerprints or long key ids it may sign with");
    }
  }

  // The operator's entry that key names, as gpg's --local-user takes it ("<digits>!");
  // throws refusal() naming the allowed keys when it names none.
  std::string local_user_for(const std::string &op, std::string_view key) const {
    const auto wanted = normalised_key(key);
    if (wanted) {
      for (const auto &allowed : keys_) {
        if (*wanted == allowed) return allowed + "!";
      }
    }
    throw sandbox_host::refusal(
        op, "key " + sandbox_host::in_quotes(key) +
                (wanted ? " is not one this broker signs with"
                        : " is not a long key id or fingerprint (set git's user.signingkey)") +
                "; allowed: " + allowed());
  }

 private:
  std::string allowed() const {
    std::string list;
    for (const auto &key : keys_) list += (list.empty() ? "" : ", ") + key;
    return list;
  }

  std::vector<std::string> keys_;
};

}  // namespace sign_op
