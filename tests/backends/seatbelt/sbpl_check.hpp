// A check of seatbelt profiles that runs without macOS.
//
// It reads SBPL as TinyScheme would read its syntax (lists, atoms, "strings", #"regexes",
// ; comments) and holds every form to a model of the subset this project writes: which
// operations exist, which filters each takes and what their arguments look like, and that
// every (param "NAME") is defined with -D and every -D is used. The model is this
// project's reading of public profiles and Apple's sandbox(7) era documentation; Apple's
// compiler in sandbox-exec is the only authority, and it is not run here.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sandbox_host::seatbelt::test {

// Every problem found in profile, given the names its -D arguments define; empty when none.
std::vector<std::string> sbpl_problems(const std::string &profile,
                                       const std::vector<std::string> &defined_names);

// Every string constant of profile outside (param ...): what the profile names by itself.
// Throws std::invalid_argument when the profile does not parse.
std::vector<std::string> sbpl_string_constants(const std::string &profile);

// sandbox-exec's argv (after the program) read as its getopt would read "D:p:".
struct SandboxExecInvocation {
  std::vector<std::pair<std::string, std::string>> defines;  // -D NAME=VALUE, in order
  std::string profile;                                       // -p
  std::vector<std::string> command;                          // the program and its arguments
};
// Throws std::invalid_argument, naming the argument, for anything sandbox-exec would not take
// as this project means it: an unknown option, a -D without '=' or with a bad name, no or two
// -p, no command.
SandboxExecInvocation parse_sandbox_exec_args(const std::vector<std::string> &args);

}  // namespace sandbox_host::seatbelt::test
