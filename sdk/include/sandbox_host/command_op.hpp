// Operations that run one command on the host for their requester: the rules an operator
// writes for such an op in its [ops.<name>] table (CommandRules), and the op that refuses
// requests by them and has the host run the command (CommandOp).
//
//   [ops.agents]
//   command = "/usr/local/bin/beekeeper"
//   args = ["agents"]
//   subcommands = ["start", "wake"]
//   arg_pattern = "^[a-z0-9-]+$"        # and no leading "-" without allow_options = true
//   requester_env = ["AGENT_PROFILE"]   # read by the host, handed over as Requester::env
//
//   class AgentsOp final : public sandbox_host::CommandOp {
//    public:
//     explicit AgentsOp(const sandbox_host::HostInfo &host)
//         : CommandOp(host, {.defaults = {.subcommands = {"start", "wake", "resume"}}}) {}
//   };
//
// A request for `agents start reviewer` runs `beekeeper agents start -- reviewer`.
#pragma once

#include <sandbox_host/module.hpp>
#include <sandbox_host/op_config.hpp>
#include <sandbox_host/request_pattern.hpp>

#include <charconv>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace sandbox_host {

// A refused request: "<op>: <what>", the way every op of the SDK words one.
inline std::invalid_argument refusal(std::string_view op, std::string_view what) {
  return std::invalid_argument(std::string(op) + ": " + std::string(what));
}

// Text a requester or an operator wrote, as a message quotes it: a requester's bytes must
// not forge lines of a log or drive the terminal that shows the message.
inline std::string in_quotes(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Text a requester wrote, as a refusal quotes it: in_quotes() of its first 64 bytes (cut on
// a UTF-8 character's boundary), then its length when there was more, so that a refusal
// never echoes a huge argument.
inline std::string in_quotes_cut(std::string_view text) {
  static constexpr std::size_t kMost = 64;
  if (text.size() <= kMost) return in_quotes(text);
  std::size_t cut = kMost;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return in_quotes(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

// [A-Za-z_][A-Za-z0-9_]*: a name every shell and execve() caller agrees on.
inline bool is_variable_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  for (char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '_') return false;
  }
  return true;
}

// What an op fixes where its operator wrote nothing (every member initialized, as in
// CommandBehaviour).
struct CommandDefaults {
  // The allowed values of the request's first argument without a `subcommands` key; empty:
  // any.
  std::vector<std::string> subcommands{};
  // Without a `timeout_ms` key; zero: none.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  // Without an `end_of_options` key (and with allow_options false): whether "--" goes
  // before the requester's arguments. False for a command whose first requester argument
  // is a subcommand of its own that the op does not list: a parser that finds subcommands
  // (Cobra's) stops looking at "--".
  bool end_of_options = true;
};

// The operator's rules for an op that runs one command: which command, with which fixed
// arguments, which request arguments it takes, and the environment and directory it runs in.
class CommandRules {
 public:
  // Reads the rules from the op's table, refusing any key but the rules' own and
  // extra_keys (those the op reads itself). Throws OpConfig::error's "ops.<op>.<key>: ..."
  // for a key written wrong, which refuses the module's loading.
  template <std::convertible_to<std::string_view>... Extra>
  static CommandRules from(const OpConfig &config, const CommandDefaults &defaults = {},
                           Extra... extra_keys) {
    config.allow_only({"command", "args", "subcommands", "arg_pattern", "allow_options",
                       "end_of_options", "max_args", "max_arg_bytes", "env", "path", "cwd",
                       "timeout_ms", "input", std::string_view(extra_keys)...});
    return CommandRules(config, defaults);
  }

  const std::string &op() const noexcept { return op_; }

  // The command for one request. Its arguments: the fixed ones, the request's subcommand
  // (when the op has a list), the op's options, "--" (end_of_options) when requester
  // arguments follow, the request's other arguments, then the op's operands; options and
  // operands are what the op made of the request's other fields. Its environment is PATH,
  // HOME and LANG, then the requester's selected variables, then the operator's env, then
  // extra_env (the op's own), each later one replacing an earlier one of the same name;
  // nothing else of the broker's environment. Throws refusal() for a request the rules do
  // not allow.
  HostCommand command_for(const Request &request, const Requester &requester,
                          const std::vector<std::string> &extra_env,
                          const std::vector<std::string> &options = {},
                          const std::vector<std::string> &operands = {}) const {
    check(request);
    return build(request, requester, extra_env, options, operands);
  }

 private:
  friend class CommandOp;

  void check(const Request &request) const {
    check_args(request.args);
    if (!input_ && !request.input.empty()) {
      throw refusal(op_, "takes no input (ops." + op_ + ".input is false)");
    }
  }

  HostCommand build(const Request &request, const Requester &requester,
                    const std::vector<std::string> &extra_env,
                    const std::vector<std::string> &options,
                    const std::vector<std::string> &operands) const {
    HostCommand command;
    command.path = command_;
    command.args = args_;
    auto rest = request.args.begin();
    if (!subcommands_.empty()) command.args.push_back(*rest++);  // check() saw one
    command.args.insert(command.args.end(), options.begin(), options.end());
    if (end_of_options_ && (rest != request.args.end() || !operands.empty())) {
      command.args.push_back("--");
    }
    command.args.insert(command.args.end(), rest, request.args.end());
    command.args.insert(command.args.end(), operands.begin(), operands.end());
    command.env = {"PATH=" + path_};
    if (!home_.empty()) command.env.push_back("HOME=" + home_);
    command.env.push_back("LANG=C.UTF-8");
    for (const auto &list : {&requester.env, &env_, &extra_env}) {
      for (const auto &entry : *list) set_variable(command.env, entry);
    }
    command.input = request.input;
    command.cwd = cwd_;
    command.cwd_of_requester = cwd_of_requester_;
    command.timeout = timeout_;
    return command;
  }

  CommandRules(const OpConfig &config, const CommandDefaults &defaults)
      : op_(config.op()),
        command_(executable(config)),
        args_(config.values("args")),
        subcommands_(config.has("subcommands") ? config.values("subcommands")
                                               : defaults.subcommands),
        max_args_(whole_number(config, "max_args", 32, 0, 1024)),
        max_arg_bytes_(whole_number(config, "max_arg_bytes", 4096, 1, 65536)),
        env_(config.values("env")),
        path_(config.value("path").value_or("/usr/local/bin:/usr/bin:/bin")),
        home_(broker_home()),
        timeout_(whole_number(config, "timeout_ms", static_cast<uint64_t>(defaults.timeout.count()),
                              0, 86'400'000)),
        input_(flag(config, "input", false)),
        allow_options_(flag(config, "allow_options", false)),
        // Allowed options come before "--" or they would be operands; say both to get
        // operands that start with "-".
        end_of_options_(
            flag(config, "end_of_options", !allow_options_ && defaults.end_of_options)) {
    if (auto pattern = config.value("arg_pattern")) {
      try {
        arg_pattern_.emplace(*pattern);
      } catch (const std::invalid_argument &e) {
        throw config.error(
            "arg_pattern",
            in_quotes(*pattern) + " is not an RE2 regular expression (" + e.what() + ")");
      }
    }
    for (const auto &entry : env_) {
      const auto equals = entry.find('=');
      if (equals == std::string::npos || !is_variable_name(entry.substr(0, equals))) {
        throw config.error("env", in_quotes(entry) +
                                      " is not NAME=VALUE with NAME of letters, digits and _, "
                                      "not starting with a digit");
      }
    }
    const std::string cwd = config.value("cwd").value_or("/");
    if (cwd == "requester") {
      cwd_of_requester_ = true;
    } else if (!std::filesystem::path(cwd).is_absolute()) {
      throw config.error("cwd",
                         "must be an absolute directory or \"requester\", not " + in_quotes(cwd));
    } else if (std::error_code ec; !std::filesystem::is_directory(cwd, ec)) {
      throw config.error("cwd", in_quotes(cwd) + " is not a directory");
    } else {
      cwd_ = cwd;
    }
  }

  static std::string executable(const OpConfig &config) {
    const auto command = config.value("command");
    if (!command) throw config.error("command", "required: the absolute path of the command");
    if (!std::filesystem::path(*command).is_absolute()) {
      throw config.error("command", in_quotes(*command) + " is not an absolute path");
    }
    std::error_code ec;
    const auto status = std::filesystem::status(*command, ec);
    if (status.type() == std::filesystem::file_type::not_found) {
      throw config.error("command", in_quotes(*command) + " does not exist");
    }
    if (ec) {
      throw config.error("command", "cannot examine " + in_quotes(*command) + ": " + ec.message());
    }
    if (!std::filesystem::is_regular_file(status)) {
      throw config.error("command", in_quotes(*command) + " is not a regular file");
    }
    using std::filesystem::perms;
    if ((status.permissions() & (perms::owner_exec | perms::group_exec | perms::others_exec)) ==
        perms::none) {
      throw config.error("command", in_quotes(*command) + " is not executable");
    }
    return *command;
  }

  static uint64_t whole_number(const OpConfig &config, std::string_view key, uint64_t fallback,
                               uint64_t min, uint64_t max) {
    const auto text = config.value(key);
    if (!text) return fallback;
    uint64_t number = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), number);
    if (ec != std::errc() || end != text->data() + text->size() || number < min || number > max) {
      throw config.error(key, "must be a whole number from " + std::to_string(min) + " to " +
                                  std::to_string(max) + ", not " + in_quotes(*text));
    }
    return number;
  }

  static bool flag(const OpConfig &config, std::string_view key, bool fallback) {
    const auto text = config.value(key);
    if (!text) return fallback;
    if (*text != "true" && *text != "false") {
      throw config.error(key, "must be true or false, not " + in_quotes(*text));
    }
    return *text == "true";
  }

  // The broker's HOME as it was when the op loaded, so that a command finds the user's own
  // configuration; a relative one would mean whatever directory the command runs in.
  static std::string broker_home() {
    const char *home = std::getenv("HOME");
    return home != nullptr && home[0] == '/' ? home : "";
  }

  static std::string_view variable_name(std::string_view entry) {
    return entry.substr(0, entry.find('='));
  }

  static void set_variable(std::vector<std::string> &env, const std::string &entry) {
    for (auto &existing : env) {
      if (variable_name(existing) == variable_name(entry)) {
        existing = entry;
        return;
      }
    }
    env.push_back(entry);
  }

  void check_args(const std::vector<std::string> &args) const {
    if (args.size() > max_args_) {
      throw refusal(op_, std::to_string(args.size()) +
                             (args.size() == 1 ? " argument" : " arguments") +
                             ", more than max_args " + std::to_string(max_args_));
    }
    if (!subcommands_.empty() && args.empty()) {
      throw refusal(op_, "a subcommand is required; allowed: " + allowed_subcommands());
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string &arg = args[i];
      const std::string which = "argument " + std::to_string(i + 1);
      if (arg.find('\0') != std::string::npos) throw refusal(op_, which + " contains a NUL byte");
      if (arg.size() > max_arg_bytes_) {
        throw refusal(op_, which + " is " + std::to_string(arg.size()) +
                               " bytes, more than max_arg_bytes " + std::to_string(max_arg_bytes_));
      }
      const bool subcommand = i == 0 && !subcommands_.empty();
      if (subcommand && !is_subcommand(arg)) {
        throw refusal(op_, in_quotes_cut(arg) +
                               " is not an allowed subcommand; allowed: " + allowed_subcommands());
      }
      // "-" alone too: many commands read it as their stdin. An arg_pattern that matches an
      // option does not allow it: a pattern written for the characters of names would.
      if (!subcommand && !allow_options_ && arg.starts_with('-')) {
        throw refusal(op_, which + " (" + in_quotes_cut(arg) +
                               ") starts with \"-\", which the command would read as an option; "
                               "ops." +
                               op_ + ".allow_options = true allows options");
      }
      if (arg_pattern_ && !arg_pattern_->matches(arg)) {
        throw refusal(op_, which + " (" + in_quotes_cut(arg) + ") does not match arg_pattern " +
                               arg_pattern_->text());
      }
    }
  }

  bool is_subcommand(const std::string &arg) const {
    for (const auto &allowed : subcommands_) {
      if (arg == allowed) return true;
    }
    return false;
  }

  std::string allowed_subcommands() const {
    std::string list;
    for (const auto &allowed : subcommands_) list += (list.empty() ? "" : ", ") + allowed;
    return list;
  }

  std::string op_;
  std::string command_;
  std::vector<std::string> args_;
  std::vector<std::string> subcommands_;
  uint64_t max_args_;
  uint64_t max_arg_bytes_;
  std::vector<std::string> env_;
  std::string path_;
  std::string home_;
  std::chrono::milliseconds timeout_;
  bool input_;
  bool allow_options_;
  bool end_of_options_;
  std::optional<RequestPattern> arg_pattern_;
  std::string cwd_;
  bool cwd_of_requester_ = false;
};

// What sets one command op apart from another. Every member has an initializer, so that
// designated initializers naming only some stay quiet under -Wextra.
struct CommandBehaviour {
  CommandDefaults defaults{};
  // "NAME=VALUE" the op always sets, over the operator's env.
  std::vector<std::string> env{};
  // Refuse a request that does not stream: for a command that runs as long as its
  // requester holds the request.
  bool streams_only = false;
  // Options the op passes before "--", made from the request's other fields; throws
  // refusal() for fields it cannot take.
  std::function<std::vector<std::string>(const Request &)> option_args{};
  // Operands after the request's arguments, made the same way; they must not start with
  // "-" when end_of_options is off.
  std::function<std::vector<std::string>(const Request &)> extra_args{};
};

// An op that runs one command on the host per request, by its operator's CommandRules.
class CommandOp : public BrokerOp {
 public:
  CommandOp(const HostInfo &host, CommandBehaviour behaviour)
      : rules_(CommandRules::from(host.config, behaviour.defaults)),
        behaviour_(std::move(behaviour)) {}
  // For an op that reads keys of its own: rules from CommandRules::from(config, defaults,
  // "its_key"...).
  CommandOp(CommandRules rules, CommandBehaviour behaviour)
      : rules_(std::move(rules)), behaviour_(std::move(behaviour)) {}

  // Throws refusal() for a request the rules or the op's behaviour refuse, and what
  // Reply::run throws when the command could not run to its end.
  void handle(const Request &request, const Requester &requester, Reply &reply) override {
    if (behaviour_.streams_only && !reply.streaming()) {
      throw refusal(rules_.op(), "streams only; ask with stream: true (sandbox-host ask --stream)");
    }
    rules_.check(request);
    const auto made = [&](const auto &make) {
      return make ? make(request) : std::vector<std::string>{};
    };
    reply.run(rules_.build(request, requester, behaviour_.env, made(behaviour_.option_args),
                           made(behaviour_.extra_args)));
  }

 private:
  CommandRules rules_;
  CommandBehaviour behaviour_;
};

}  // namespace sandbox_host
