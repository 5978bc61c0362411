// The structured form of a backend's probe warning (ProbeReport::warning): what a degraded
// backend does not cover, as a list of gaps that `sandbox-host probe` shows one per line and
// `probe --json` as an array of objects.
//
//   warning = [<heading> "; not covered: "] <gap> *("; " <gap>)
//   gap     = <what it lets a plugin do (or keeps from it)> [" (close: " <how> ")"]
//
// A gap's texts hold no "; " and no line break. A warning without "; not covered: " is one
// gap with no heading (the off backend's "no confinement: ...").
//
// Why a form of the one warning string and not a field of the module ABI: the warning is
// already the contract for callers that want one string (Availability::warning, the Go
// package's Availability.Warning), so the list is parsed from it and the two can never
// disagree; and a module built against any older ABI minor keeps working unchanged, its
// warning shown as the gaps it happens to spell out this way (or as one gap).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// One thing a degraded backend does not cover.
struct CoverageGap {
  std::string what;   // what it lets a plugin do, or what it keeps from one
  std::string close;  // how to close it ("Linux 6.12+", "the namespaces backend"); "" for no way
  bool operator==(const CoverageGap &) const = default;
};

struct Coverage {
  std::string heading;  // "degraded: Landlock ABI 7 without namespaces"; "" when none
  std::vector<CoverageGap> gaps;
};

inline constexpr std::string_view kNotCovered = "; not covered: ";
inline constexpr std::string_view kCloseOpen = " (close: ";

// The warning for heading and gaps, in the form above.
inline std::string coverage_warning(std::string_view heading,
                                    const std::vector<CoverageGap> &gaps) {
  std::string warning(heading);
  if (!heading.empty()) warning += kNotCovered;
  for (std::size_t i = 0; i < gaps.size(); ++i) {
    if (i != 0) warning += "; ";
    warning += gaps[i].what;
    if (!gaps[i].close.empty()) warning += std::string(kCloseOpen) + gaps[i].close + ")";
  }
  return warning;
}

// The heading and gaps of a warning in the form above; an empty warning has none.
inline Coverage parse_coverage(std::string_view warning) {
  Coverage coverage;
  if (warning.empty()) return coverage;
  std::string_view items = warning;
  const std::size_t at = warning.find(kNotCovered);
  if (at != std::string_view::npos) {
    coverage.heading = warning.substr(0, at);
    items = warning.substr(at + kNotCovered.size());
  }
  for (std::size_t start = 0;;) {
    // Without the heading the warning is in no form: one gap, whatever "; " it holds.
    const std::size_t end =
        at == std::string_view::npos ? std::string_view::npos : items.find("; ", start);
    std::string_view item = items.substr(start, end - start);
    CoverageGap gap;
    const std::size_t close = item.rfind(kCloseOpen);
    if (close != std::string_view::npos && item.ends_with(')')) {
      gap.close =
          item.substr(close + kCloseOpen.size(), item.size() - close - kCloseOpen.size() - 1);
      item = item.substr(0, close);
    }
    gap.what = item;
    if (!gap.what.empty()) coverage.gaps.push_back(std::move(gap));
    if (end == std::string_view::npos) break;
    start = end + 2;
  }
  return coverage;
}

}  // namespace sandbox_host
