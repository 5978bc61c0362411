// sandbox-host-launch: `sandbox-host run --via` as a program of its own, for gateways that
// launch through the launch service. Its start-up is part of every launch, so it is a small
// program: statically linked, no module loader, no config reader, no iostreams, and its
// command line read with getopt_long from the table run's CLI11 options come from too
// (docs/benchmarks.md measures it).
#include "launch_option_table.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launch_client/launch_client.hpp>

#include <getopt.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace sh = sandbox_host;

constexpr std::string_view kProgram = "sandbox-host-launch";
constexpr int kViaOption = 1000;
constexpr int kHelpOption = 'h';
constexpr int kFirstTableOption = 2000;

int refuse(const std::string &why) {
  sh::write_text(STDERR_FILENO, std::string(kProgram) + ": " + why + "\n");
  return sh::kHostFailure;
}

std::string usage() {
  std::string text =
      std::string(kProgram) +
      ": launch one plugin through the launch service of `sandbox-host serve` ([launcher]); "
      "its stdio is this program's and its exit status this program's (125: refused or no "
      "service, 87: the sandbox could not be set up)\n\nUsage: " +
      std::string(kProgram) + " [OPTIONS] -- BINARY [ARGS...]\n\nOptions:\n";
  auto line = [&text](std::string_view flag, std::string_view help) {
    text += "  ";
    text += flag;
    text += "\n      ";
    text += help;
    text += "\n";
  };
  line("-h, --help", "Print this help and exit");
  line("--via SOCKET",
       "The launch service's socket (default: " + std::string(sh::kEnvLauncher) + ")");
  for (const sh::LaunchOptionField &field : sh::kLaunchOptionFields) {
    line(std::string("--") + field.name + " VALUE", field.help);
  }
  line("command", sh::kLaunchCommandHelp);
  return text;
}

struct CommandLine {
  bool help = false;
  std::optional<std::string> via;
  sh::LaunchOptions options;
};

// Throws std::invalid_argument naming the argument that is wrong.
CommandLine parse(int argc, char **argv) {
  std::vector<option> longs{{"help", no_argument, nullptr, kHelpOption},
                            {"via", required_argument, nullptr, kViaOption}};
  for (size_t i = 0; i < sh::kLaunchOptionFields.size(); ++i) {
    longs.push_back({sh::kLaunchOptionFields[i].name, required_argument, nullptr,
                     kFirstTableOption + static_cast<int>(i)});
  }
  longs.push_back({nullptr, 0, nullptr, 0});

  CommandLine line;
  auto set_once = [](std::optional<std::string> &value, const std::string &flag) {
    if (value) throw std::invalid_argument(flag + ": given twice; it takes one value");
    value = optarg;
  };
  opterr = 0;  // the messages below name the argument
  // "+": options end at the plugin's binary, so that its own arguments stay its own.
  auto not_an_option = [](const std::string &argument) {
    return std::invalid_argument(argument + ": not an option of " + std::string(kProgram) +
                                 " (see --help)");
  };
  for (;;) {
    const int at = optind;
    int index = -1;
    const int got = ::getopt_long(argc, argv, "+:h", longs.data(), &index);
    if (got == -1) break;
    if (got == '?') throw not_an_option(argv[optind - 1]);
    if (got == ':') throw std::invalid_argument(std::string(argv[optind - 1]) + ": needs a value");
    if (index >= 0) {
      // getopt_long takes an abbreviation too; run, and so this client, only the whole name.
      const std::string typed = argv[at];
      const std::string name = typed.substr(0, typed.find('='));
      if (name != std::string("--") + longs[index].name) throw not_an_option(name);
    }
    if (got == kHelpOption) {
      line.help = true;
    } else if (got == kViaOption) {
      set_once(line.via, "--via");
    } else {
      const sh::LaunchOptionField &field = sh::kLaunchOptionFields[got - kFirstTableOption];
      if (field.once != nullptr) {
        set_once(line.options.*field.once, std::string("--") + field.name);
      } else {
        (line.options.*field.repeated).emplace_back(optarg);
      }
    }
  }
  line.options.command.assign(argv + optind, argv + argc);
  return line;
}

}  // namespace

int main(int argc, char **argv) {
  CommandLine line;
  try {
    line = parse(argc, argv);
  } catch (const std::invalid_argument &e) {
    return refuse(e.what());
  }
  if (line.help) {
    sh::write_text(STDOUT_FILENO, usage());
    return 0;
  }
  if (line.options.command.empty()) {
    return refuse("no plugin named: -- BINARY [ARGS...] (see --help)");
  }
  if (!line.via) {
    const char *socket = std::getenv(std::string(sh::kEnvLauncher).c_str());
    if (socket == nullptr || *socket == '\0') {
      return refuse("no launch service: name its socket with --via or " +
                    std::string(sh::kEnvLauncher));
    }
    line.via = socket;
  }
  sh::LaunchRequest request;
  try {
    request = sh::make_launch_request(line.options);
  } catch (const std::exception &e) {
    return refuse(e.what());
  }
  return sh::launch_via(std::string(kProgram), *line.via, request);
}
