// The seatbelt profile (SBPL) for one plugin launch, as a pure function of its Spec.
//
// No path of the Spec is ever written into the profile's text: each travels to
// sandbox-exec as its own `-D NAME=VALUE` argument and the profile refers to it as
// (param "NAME"). The text therefore depends only on the network, on how many ReadPaths
// there are and on the accesses of an agent policy's view in the order of its paths'
// lengths, and no path, whatever bytes it holds, can change what the profile says.
//
// A view (Spec::view) comes first: the whole file system readable and executable but /dev,
// then each rule, shortest path first (SBPL's last matching rule wins, so the longest path
// does): none denies reading, writing, exec and executable mapping beneath it; read allows
// reading, exec and mapping and denies writing; write allows all four. Everything a plugin
// is granted follows it and keeps its grant on top.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <vector>

namespace sandbox_host::seatbelt {

// One value the profile refers to as (param "NAME").
struct ProfileParameter {
  std::string name;
  std::string value;
};

struct Profile {
  std::string text;
  // BINARY, SOCKET_DIR, TMP_DIR, READ_PATH_<i>..., VIEW_<i>... (the view's rules, shortest
  // path first)
  std::vector<ProfileParameter> parameters;
};

// Throws std::invalid_argument, naming the Spec field, for a path that is empty, relative
// or holds a NUL byte (argv would cut it short there: a shorter path, a wider grant).
Profile make_profile(const Spec &spec);

// sandbox-exec's arguments for the parameters: "-D", "NAME=VALUE" for each, in order.
std::vector<std::string> define_arguments(const std::vector<ProfileParameter> &parameters);

}  // namespace sandbox_host::seatbelt
