// What a TOML value is, as the config's and the agent policy's errors name it ("a string").
#pragma once

#include <toml++/toml.h>

namespace sandbox_host {

inline const char *toml_type_name(const toml::node &node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

}  // namespace sandbox_host
