// Reading a Prometheus text exposition the way a scraper does: one sample per line,
// `name{label="value",...} number`, comments (# HELP, # TYPE) aside.
#pragma once

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

namespace sandbox_host::test {

// The value of the sample whose name and labels are written exactly as `series` (labels in
// the order the exposition writes them, which is by name); nullopt when there is none.
inline std::optional<double> sample(const std::string &exposition, const std::string &series) {
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with('#') || !line.starts_with(series)) continue;
    const std::string rest = line.substr(series.size());
    if (!rest.starts_with(' ')) continue;
    return std::strtod(rest.c_str() + 1, nullptr);
  }
  return std::nullopt;
}

// The sample's value, 0 when the series is not there yet (a counter never incremented).
inline double count(const std::string &exposition, const std::string &series) {
  return sample(exposition, series).value_or(0);
}

}  // namespace sandbox_host::test
