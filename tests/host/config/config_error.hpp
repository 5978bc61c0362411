// What the config tests compare: the error load_config gives a file, without its path.
#pragma once

#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

#include <string>

namespace sandbox_host {

// The error a config file gets, or "" when it loads.
inline std::string error_of(const std::string &toml) {
  test::TempFile file(toml, "config.toml");
  try {
    load_config(file.path());
  } catch (const ConfigError &e) {
    // The file's path varies; everything after it is what the operator reads.
    std::string message = e.what();
    EXPECT_EQ(message.rfind(file.path().string(), 0), 0u) << message;
    return message.substr(file.path().string().size());
  }
  return "";
}

}  // namespace sandbox_host
