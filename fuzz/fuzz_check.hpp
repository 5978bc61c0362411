// What the fuzz targets share: a property check that stops the run with its name, and the
// points at which an input is cut to check that parsers give the same however bytes arrive.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace sandbox_host::egress::fuzz {

// libFuzzer saves the input that made the process abort, so a broken property is a crash.
inline void check(bool holds, const char *property) {
  if (!holds) {
    std::fprintf(stderr, "property does not hold: %s\n", property);
    std::abort();
  }
}

// No control character or non-ASCII byte: a reason goes into log lines and reply bodies.
inline bool printable(std::string_view text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) return false;
  }
  return true;
}

// Every length of a short input; for a long one, a spread of lengths that still depends on
// the input, so that the fuzzer can steer where the cut falls.
inline std::vector<std::size_t> cut_points(std::string_view input) {
  std::vector<std::size_t> points;
  constexpr std::size_t kEvery = 64, kSpread = 8;
  if (input.size() <= kEvery) {
    for (std::size_t k = 0; k < input.size(); ++k) points.push_back(k);
    return points;
  }
  std::size_t hash = 1469598103934665603ull;
  for (char c : input) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  for (std::size_t i = 0; i < kSpread; ++i) {
    points.push_back(input.size() * i / kSpread);
    hash = hash * 6364136223846793005ull + 1442695040888963407ull;
    points.push_back(static_cast<std::size_t>(hash >> 33) % input.size());
  }
  return points;
}

}  // namespace sandbox_host::egress::fuzz
