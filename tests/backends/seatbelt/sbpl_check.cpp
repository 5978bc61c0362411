#include "sbpl_check.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>

namespace sandbox_host::seatbelt::test {
namespace {

struct Node {
  enum class Kind { list, atom, string, regex };
  Kind kind = Kind::atom;
  std::string text;  // an atom's name, a string's or regex's contents
  std::vector<Node> items;
  size_t offset = 0;  // byte offset in the profile, for messages
};

class Reader {
 public:
  explicit Reader(const std::string &text) : text_(text) {}

  std::vector<Node> forms() {
    std::vector<Node> out;
    for (skip_blank(); pos_ < text_.size(); skip_blank()) {
      if (text_[pos_] == ')') fail("a ')' closes nothing");
      out.push_back(node());
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string &what) const {
    throw std::invalid_argument("byte " + std::to_string(pos_) + ": " + what);
  }

  void skip_blank() {
    while (pos_ < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      } else if (text_[pos_] == ';') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  Node node() {
    Node n;
    n.offset = pos_;
    char c = text_[pos_];
    if (c == '(') {
      n.kind = Node::Kind::list;
      ++pos_;
      for (skip_blank(); pos_ < text_.size() && text_[pos_] != ')'; skip_blank()) {
        n.items.push_back(node());
      }
      if (pos_ >= text_.size()) {
        pos_ = n.offset;
        fail("this '(' is never closed");
      }
      ++pos_;
    } else if (c == '"') {
      n.kind = Node::Kind::string;
      n.text = quoted();
    } else if (c == '#' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
      n.kind = Node::Kind::regex;
      ++pos_;
      n.text = quoted();
    } else {
      n.kind = Node::Kind::atom;
      while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])) &&
             std::string_view("()\";").find(text_[pos_]) == std::string_view::npos) {
        n.text += text_[pos_++];
      }
    }
    return n;
  }

  std::string quoted() {
    const size_t start = pos_++;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') {
        if (++pos_ >= text_.size()) break;
        out += text_[pos_] == 'n' ? '\n' : text_[pos_];
      } else {
        out += text_[pos_];
      }
      ++pos_;
    }
    if (pos_ >= text_.size()) {
      pos_ = start;
      fail("this string is never closed");
    }
    ++pos_;
    return out;
  }

  const std::string &text_;
  size_t pos_ = 0;
};

// Which filters an operation takes.
enum class Filters { none, path, target, sysctl, mach, ipc, socket_domain, network };

const std::map<std::string, Filters, std::less<>> &operations() {
  static const std::map<std::string, Filters, std::less<>> known{
      {"file-read*", Filters::path},          {"file-read-data", Filters::path},
      {"file-read-metadata", Filters::path},  {"file-write*", Filters::path},
      {"file-write-data", Filters::path},     {"file-map-executable", Filters::path},
      {"process-exec", Filters::path},        {"process-fork", Filters::none},
      {"process-info*", Filters::target},     {"signal", Filters::target},
      {"sysctl-read", Filters::sysctl},       {"mach-lookup", Filters::mach},
      {"ipc-posix-shm-read*", Filters::ipc},  {"system-socket", Filters::socket_domain},
      {"network-bind", Filters::network},     {"network-inbound", Filters::network},
      {"network-outbound", Filters::network},
  };
  return known;
}

const std::map<std::string, Filters, std::less<>> &filter_kinds() {
  static const std::map<std::string, Filters, std::less<>> known{
      {"literal", Filters::path},
      {"subpath", Filters::path},
      {"path-literal", Filters::path},
      {"target", Filters::target},
      {"sysctl-name", Filters::sysctl},
      {"sysctl-name-prefix", Filters::sysctl},
      {"global-name", Filters::mach},
      {"ipc-posix-name", Filters::ipc},
      {"socket-domain", Filters::socket_domain},
      {"local", Filters::network},
      {"remote", Filters::network},
  };
  return known;
}

bool is_atom(const Node &n, std::string_view name) {
  return n.kind == Node::Kind::atom && n.text == name;
}

std::string head(const Node &n) {
  return n.kind == Node::Kind::list && !n.items.empty() && n.items[0].kind == Node::Kind::atom
             ? n.items[0].text
             : std::string();
}

bool valid_name(std::string_view name) {
  return !name.empty() && std::isupper(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isupper(static_cast<unsigned char>(c)) ||
                  std::isdigit(static_cast<unsigned char>(c)) || c == '_';
         });
}

class Checker {
 public:
  Checker(const std::vector<std::string> &defined, std::vector<std::string> &problems)
      : problems_(problems) {
    for (const auto &name : defined) {
      if (!valid_name(name)) problem(0, "-D name \"" + name + "\" is not of A-Z, 0-9 and _");
      if (!defined_.insert(name).second) problem(0, "-D " + name + " is defined twice");
    }
  }

  void check(const std::vector<Node> &forms) {
    if (forms.empty() || forms[0].kind != Node::Kind::list || forms[0].items.size() != 2 ||
        !is_atom(forms[0].items[0], "version") || !is_atom(forms[0].items[1], "1")) {
      problem(0, "the profile must start with (version 1)");
    }
    if (forms.size() < 2 || forms[1].kind != Node::Kind::list || forms[1].items.size() != 2 ||
        !is_atom(forms[1].items[0], "deny") || !is_atom(forms[1].items[1], "default")) {
      problem(forms.size() < 2 ? 0 : forms[1].offset,
              "the profile's second form must be (deny default)");
    }
    for (size_t i = 2; i < forms.size(); ++i) rule(forms[i]);
    for (const auto &name : defined_) {
      if (!used_.count(name))
        problem(0, "-D " + name + " is defined but the profile never uses it");
    }
  }

 private:
  void problem(size_t offset, const std::string &what) {
    problems_.push_back("byte " + std::to_string(offset) + ": " + what);
  }

  void rule(const Node &form) {
    const std::string action = head(form);
    if (action != "allow" && action != "deny") {
      problem(form.offset, "a rule must be (allow ...) or (deny ...)");
      return;
    }
    std::vector<Filters> wanted;
    size_t i = 1;
    for (; i < form.items.size() && form.items[i].kind == Node::Kind::atom; ++i) {
      auto op = operations().find(form.items[i].text);
      if (op == operations().end()) {
        problem(form.items[i].offset, "unknown operation " + form.items[i].text);
      } else {
        wanted.push_back(op->second);
      }
    }
    if (i == 1) problem(form.offset, "a rule names no operation");
    for (; i < form.items.size(); ++i) {
      const Node &f = form.items[i];
      auto kind = filter_kinds().find(head(f));
      if (kind == filter_kinds().end()) {
        problem(f.offset, "not a filter this profile may use: " +
                              (head(f).empty() ? "a " + kind_name(f) : head(f)));
        continue;
      }
      for (Filters w : wanted) {
        if (w != kind->second) {
          problem(f.offset, "filter " + kind->first +
                                " does not apply to every operation of "
                                "its rule");
          break;
        }
      }
      filter(f);
    }
  }

  static std::string kind_name(const Node &n) {
    switch (n.kind) {
      case Node::Kind::list:
        return "list";
      case Node::Kind::atom:
        return "bare atom";
      case Node::Kind::string:
        return "bare string";
      case Node::Kind::regex:
        return "bare regex";
    }
    return "node";
  }

  void arguments(const Node &f, size_t count) {
    if (f.items.size() != count + 1) {
      problem(f.offset, "(" + head(f) + " ...) takes " + std::to_string(count) + " argument" +
                            (count == 1 ? "" : "s"));
    }
  }

  void path_argument(const Node &f) {
    arguments(f, 1);
    if (f.items.size() < 2) return;
    const Node &arg = f.items[1];
    if (arg.kind == Node::Kind::string) {
      if (arg.text.empty() || arg.text[0] != '/') {
        problem(arg.offset, "path \"" + arg.text + "\" is not absolute");
      }
    } else if (head(arg) == "param") {
      if (arg.items.size() != 2 || arg.items[1].kind != Node::Kind::string) {
        problem(arg.offset, "(param ...) takes one string");
      } else if (!defined_.count(arg.items[1].text)) {
        problem(arg.offset, "(param \"" + arg.items[1].text + "\") has no -D");
      } else {
        used_.insert(arg.items[1].text);
      }
    } else {
      problem(arg.offset, "(" + head(f) + " ...) takes a string or a (param ...)");
    }
  }

  void string_argument(const Node &f) {
    arguments(f, 1);
    if (f.items.size() >= 2 && f.items[1].kind != Node::Kind::string) {
      problem(f.items[1].offset, "(" + head(f) + " ...) takes a string");
    }
  }

  void network_argument(const Node &f) {
    if (f.items.size() < 2 || f.items[1].kind != Node::Kind::atom) {
      problem(f.offset, "(" + head(f) + " ...) starts with an address family");
      return;
    }
    static const std::set<std::string, std::less<>> families{
        "unix-socket", "ip", "ip4", "ip6", "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6"};
    const std::string &family = f.items[1].text;
    if (!families.count(family)) {
      problem(f.items[1].offset, "unknown address family " + family);
      return;
    }
    if (f.items.size() != 3) {
      problem(f.offset, "(" + head(f) + " " + family + " ...) takes one more argument");
      return;
    }
    const Node &address = f.items[2];
    if (family == "unix-socket") {
      auto kind = filter_kinds().find(head(address));
      if (kind == filter_kinds().end() || kind->second != Filters::path) {
        problem(address.offset, "a unix-socket address is a path filter");
      } else {
        path_argument(address);
      }
      return;
    }
    // "host:port", host * or localhost, port * or a number.
    const std::string &text = address.text;
    const size_t colon = text.rfind(':');
    const std::string host = text.substr(0, colon), port = text.substr(colon + 1);
    if (address.kind != Node::Kind::string || colon == std::string::npos ||
        (host != "*" && host != "localhost") ||
        (port != "*" && (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c)) != 0;
                         })))) {
      problem(address.offset, "an IP address filter is \"*:*\", \"localhost:PORT\" and the like");
    }
  }

  void filter(const Node &f) {
    const std::string name = head(f);
    const Filters kind = filter_kinds().at(name);
    switch (kind) {
      case Filters::path:
        path_argument(f);
        break;
      case Filters::sysctl:
      case Filters::mach:
      case Filters::ipc:
        string_argument(f);
        break;
      case Filters::target:
        arguments(f, 1);
        if (f.items.size() >= 2 && !is_atom(f.items[1], "same-sandbox") &&
            !is_atom(f.items[1], "self")) {
          problem(f.offset, "(target ...) takes same-sandbox or self");
        }
        break;
      case Filters::socket_domain:
        arguments(f, 1);
        if (f.items.size() >= 2 &&
            (f.items[1].kind != Node::Kind::atom || f.items[1].text.rfind("AF_", 0) != 0 ||
             !valid_name(f.items[1].text))) {
          problem(f.offset, "(socket-domain ...) takes an AF_ name");
        }
        break;
      case Filters::network:
        network_argument(f);
        break;
      case Filters::none:
        problem(f.offset, "filter " + name + " takes nothing");
        break;
    }
  }

  std::vector<std::string> &problems_;
  std::set<std::string, std::less<>> defined_;
  std::set<std::string, std::less<>> used_;
};

void collect_constants(const Node &n, std::vector<std::string> &out) {
  if (n.kind == Node::Kind::string) out.push_back(n.text);
  if (n.kind != Node::Kind::list || head(n) == "param") return;
  for (const auto &item : n.items) collect_constants(item, out);
}

}  // namespace

std::vector<std::string> sbpl_problems(const std::string &profile,
                                       const std::vector<std::string> &defined_names) {
  std::vector<std::string> problems;
  std::vector<Node> forms;
  try {
    forms = Reader(profile).forms();
  } catch (const std::invalid_argument &e) {
    problems.push_back(e.what());
    return problems;
  }
  Checker(defined_names, problems).check(forms);
  return problems;
}

std::vector<std::string> sbpl_string_constants(const std::string &profile) {
  std::vector<std::string> out;
  for (const auto &form : Reader(profile).forms()) collect_constants(form, out);
  return out;
}

SandboxExecInvocation parse_sandbox_exec_args(const std::vector<std::string> &args) {
  SandboxExecInvocation invocation;
  bool have_profile = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;
    if (arg != "-D" && arg != "-p") throw std::invalid_argument("unknown option " + arg);
    if (i + 1 >= args.size()) throw std::invalid_argument(arg + " has no value");
    const std::string &value = args[++i];
    if (arg == "-p") {
      if (have_profile) throw std::invalid_argument("a second -p");
      invocation.profile = value;
      have_profile = true;
      continue;
    }
    const size_t equals = value.find('=');
    if (equals == std::string::npos) {
      throw std::invalid_argument("-D \"" + value + "\" has no '='");
    }
    if (!valid_name(value.substr(0, equals))) {
      throw std::invalid_argument("-D \"" + value + "\": the name is not of A-Z, 0-9 and _");
    }
    invocation.defines.emplace_back(value.substr(0, equals), value.substr(equals + 1));
  }
  if (!have_profile) throw std::invalid_argument("no -p profile");
  invocation.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (invocation.command.empty()) throw std::invalid_argument("no command after the options");
  return invocation;
}

}  // namespace sandbox_host::seatbelt::test
