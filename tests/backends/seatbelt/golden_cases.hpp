// The Specs whose seatbelt profiles are pinned by golden files under golden/.
#pragma once

#include <sandbox_host/spec.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace sandbox_host::seatbelt::test {

struct GoldenCase {
  std::string name;  // golden/<name>.sb and golden/<name>.defines.json
  Spec spec;
};

// What GoogleTest prints for a case: its name, not its bytes.
inline void PrintTo(const GoldenCase &golden, std::ostream *out) {
  *out << golden.name;
}

// Network none and outbound; 0, 1 and 3 ReadPaths; an agent policy's view; paths holding
// double quotes, parentheses, spaces, backslashes, newlines, semicolons, '=', non-ASCII and
// SBPL that tries to end the string it would be spliced into.
std::vector<GoldenCase> golden_cases();

}  // namespace sandbox_host::seatbelt::test
