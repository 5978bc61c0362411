// `sandbox-host sandbox gpg`: git's gpg.program inside a sandbox (the egress directory's
// gpg script execs it with git's arguments). The sandbox holds no key, keyring or agent,
// so it hands the work to the broker's sign operation and writes the answer where git
// reads it. It takes exactly the two command lines git 2.39 gives gpg, in every spelling
// of their options that gpg takes, and refuses anything else rather than guess:
//
//   sign:   gpg --status-fd=2 -bsau KEY              payload on stdin; the armoured
//                                                    signature to stdout, status to fd 2
//   verify: gpg --keyid-format=long --status-fd=1 --verify SIGFILE -
//                                                    signed data on stdin; status to fd 1
//
// The broker is the one SANDBOX_HOST_BROKER names (a spool directory, or a broker socket),
// since git passes its gpg no option of ours; without it, the default config's spool, as
// `sandbox-host ask` finds it.
#include "broker_target.hpp"
#include "commands.hpp"

#include <sandbox_host/command_op.hpp>

#include <sandbox_host/host/broker/client.hpp>
#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace sandbox_host::cli {
namespace {

// gpg's own exit status for a command line it cannot take.
constexpr int kBadArguments = 2;
// As `sandbox-host ask`: the broker refused; kHostFailure: no broker answered.
constexpr int kRefused = 126;
// gpg's status lines start with this; git looks for them on the status descriptor.
constexpr std::string_view kStatusPrefix = "[GNUPG:] ";
// What the sign operation takes at most as a signature to verify.
constexpr std::size_t kMaxSignatureBytes = 64 * 1024;
// Far beyond any commit or tag; the broker's max_request_bytes refuses less already.
constexpr std::size_t kMaxPayloadBytes = 64 * 1024 * 1024;

constexpr const char *kWhatGitGives =
    "it takes what git gives gpg: --status-fd=2 -bsau KEY (sign) or --keyid-format=long "
    "--status-fd=1 --verify SIGFILE - (verify)";

class BadArguments : public std::invalid_argument {
 public:
  explicit BadArguments(const std::string &what)
      : std::invalid_argument(what + "; " + kWhatGitGives) {}
};

// One of git's gpg command lines, understood.
struct GpgCall {
  bool verify = false;
  std::string key;               // sign: --local-user
  std::string signature_file;    // verify: --verify's file
  std::optional<int> status_fd;  // --status-fd
};

int descriptor(const std::string &text) {
  int fd = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), fd);
  if (ec != std::errc() || end != text.data() + text.size() || fd < 0) {
    throw BadArguments("--status-fd " + text + ": not a file descriptor number");
  }
  if (::fcntl(fd, F_GETFD) < 0) {
    throw BadArguments("--status-fd " + text + ": descriptor " + text + " is not open");
  }
  return fd;
}

// The parser of git's gpg command lines. Long options take their value as --opt=V or as
// the next argument; short options b, s, a and u may be clustered, u last, taking the next.
class GpgArguments {
 public:
  explicit GpgArguments(std::vector<std::string> args) : args_(std::move(args)) {}

  GpgCall parse() {
    std::vector<std::string> positionals;
    while (at_ < args_.size()) {
      const std::string arg = args_[at_++];
      if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
        long_option(arg);
      } else if (arg.size() > 1 && arg[0] == '-') {
        short_options(arg);
      } else {
        positionals.push_back(arg);
      }
    }
    return call_from(positionals);
  }

 private:
  void long_option(const std::string &arg) {
    const auto equals = arg.find('=');
    const std::string name = arg.substr(2, equals == std::string::npos ? equals : equals - 2);
    auto value = [&]() -> std::string {
      if (equals != std::string::npos) return arg.substr(equals + 1);
      return next_value("--" + name);
    };
    auto flag = [&](bool &set) {
      if (equals != std::string::npos) throw BadArguments("--" + name + " takes no value");
      set = true;
    };
    if (name == "status-fd") {
      if (call_.status_fd) throw BadArguments("--status-fd given twice");
      call_.status_fd = descriptor(value());
    } else if (name == "local-user") {
      set_key(value());
    } else if (name == "keyid-format") {
      // The sign op verifies with long key ids, what git asks for; another format would
      // be ignored silently.
      if (const std::string format = value(); format != "long") {
        throw BadArguments("--keyid-format " + format + ": only long is supported");
      }
    } else if (name == "detach-sign") {
      flag(detach_);
    } else if (name == "armor" || name == "armour") {
      flag(armor_);
    } else if (name == "sign") {
      flag(signs_);
    } else if (name == "verify") {
      flag(call_.verify);
    } else {
      throw BadArguments("unsupported gpg option " + sandbox_host::in_quotes(arg));
    }
  }

  void short_options(const std::string &arg) {
    for (std::size_t i = 1; i < arg.size(); ++i) {
      switch (arg[i]) {
        case 'b':
          detach_ = true;
          break;
        case 's':
          signs_ = true;
          break;
        case 'a':
          armor_ = true;
          break;
        case 'u':
          if (i + 1 != arg.size()) {
            throw BadArguments(
                "-u must end its cluster and take the key as the next argument, "
                "not " +
                sandbox_host::in_quotes(arg));
          }
          set_key(next_value("-u"));
          break;
        default:
          throw BadArguments("unsupported gpg option -" + std::string(1, arg[i]) + " in " +
                             sandbox_host::in_quotes(arg));
      }
    }
  }

  GpgCall call_from(const std::vector<std::string> &positionals) {
    if (call_.verify) {
      if (!call_.key.empty() || detach_ || armor_ || signs_) {
        throw BadArguments("--verify cannot be combined with signing options");
      }
      if (positionals.size() != 2 || positionals[1] != "-") {
        throw BadArguments("--verify takes a signature file and - (the data on stdin)");
      }
      call_.signature_file = positionals[0];
      return call_;
    }
    if (!positionals.empty()) {
      throw BadArguments("unexpected argument " + sandbox_host::in_quotes(positionals.front()));
    }
    if (!detach_ && !armor_ && !signs_ && call_.key.empty()) {
      throw BadArguments("nothing to do");
    }
    if (!detach_) throw BadArguments("only detached signatures (-b) are made");
    if (!armor_) throw BadArguments("only armoured signatures (-a) are made");
    if (call_.key.empty()) throw BadArguments("a key is required (-u KEY)");
    if (call_.status_fd == STDOUT_FILENO) {
      throw BadArguments("--status-fd=1 would mix the status lines into the signature on stdout");
    }
    return call_;
  }

  std::string next_value(const std::string &option) {
    if (at_ == args_.size()) throw BadArguments(option + " needs a value");
    return args_[at_++];
  }

  void set_key(const std::string &key) {
    if (!call_.key.empty()) throw BadArguments("one key only (-u given twice)");
    if (key.empty()) throw BadArguments("-u: the key is empty");
    call_.key = key;
  }

  std::vector<std::string> args_;
  std::size_t at_ = 0;
  GpgCall call_;
  // -b, -a and -s: a sign call needs the first two; -s alone changes nothing.
  bool detach_ = false, armor_ = false, signs_ = false;
};

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::system_error(errno, std::generic_category(),
                              "write to descriptor " + std::to_string(fd));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_all(int fd, const std::string &what, std::size_t limit) {
  std::string data;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "read " + what);
    if (n == 0) return data;
    data.append(buffer, static_cast<std::size_t>(n));
    if (data.size() > limit) {
      throw std::runtime_error(what + " is larger than " + std::to_string(limit) + " bytes");
    }
  }
}

std::string read_signature(const std::string &path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw std::system_error(errno, std::generic_category(), "open " + path);
  return read_all(fd.get(), "signature file " + path, kMaxSignatureBytes);
}

// The sign op's err holds gpg's status lines and its messages together (--status-fd=2 on
// the host): status lines go to the status descriptor, messages to stderr.
void write_sign_err(std::string_view err, std::optional<int> status_fd) {
  if (status_fd == STDERR_FILENO) return write_all(STDERR_FILENO, err);
  while (!err.empty()) {
    const auto end = err.find('\n');
    const std::string_view line =
        err.substr(0, end == std::string_view::npos ? err.size() : end + 1);
    if (line.rfind(kStatusPrefix, 0) != 0) {
      write_all(STDERR_FILENO, line);
    } else if (status_fd) {
      write_all(*status_fd, line);
    }
    err.remove_prefix(line.size());
  }
}

int run_gpg(const std::vector<std::string> &args) {
  GpgCall call;
  Request request;
  request.op = "sign";
  try {
    call = GpgArguments(args).parse();
    if (call.verify) {
      request.args = {"verify", read_signature(call.signature_file)};
    } else {
      request.args = {"sign", call.key};
    }
  } catch (const std::exception &e) {
    std::cerr << "sandbox-host sandbox gpg: " << e.what() << "\n";
    return kBadArguments;
  }
  request.input = read_all(STDIN_FILENO, "the data on stdin", kMaxPayloadBytes);
  try {
    const broker::Answer answer = ask_broker({}, request);
    if (call.verify) {
      // The op verified with --status-fd=1: out is the status, err gpg's messages.
      if (call.status_fd) write_all(*call.status_fd, answer.out);
      write_all(STDERR_FILENO, answer.err);
    } else {
      write_all(STDOUT_FILENO, answer.out);
      write_sign_err(answer.err, call.status_fd);
    }
    return answer.code;
  } catch (const broker::Refused &e) {
    std::cerr << "sandbox-host sandbox gpg: refused: " << e.what() << "\n";
    return kRefused;
  } catch (const broker::NoBroker &e) {
    std::cerr << "sandbox-host sandbox gpg: " << e.what() << "\n";
    return kHostFailure;
  }
}

}  // namespace

Command add_sandbox_gpg_command(CLI::App &sandbox) {
  auto *sub = sandbox.add_subcommand(
      "gpg",
      "git's gpg.program in a sandbox: signs and verifies through the broker's sign operation "
      "(the broker: $SANDBOX_HOST_BROKER, a spool or socket, else the default config's spool)");
  // Every argument is gpg's, for GpgArguments, never CLI11's.
  sub->prefix_command();
  sub->allow_extras();
  return {sub, [sub] { return run_gpg(sub->remaining()); }};
}

}  // namespace sandbox_host::cli
