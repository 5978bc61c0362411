#include <sandbox_host/host/policy/path_access.hpp>
#include <sandbox_host/host/policy/reallowed_paths.hpp>

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace sandbox_host::policy {
namespace {

std::vector<std::string> components(const std::string &path) {
  std::vector<std::string> out;
  for (const auto &part : std::filesystem::path(path).relative_path()) {
    if (!part.empty()) out.push_back(part.string());
  }
  return out;
}

std::string joined(const std::vector<std::string> &parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) (out += '/') += parts[i];
  return out.empty() ? "/" : out;
}

}  // namespace

ReallowedPaths::ReallowedPaths(const Policy &policy, const std::string &region) : policy_(policy) {
  const auto regions = forms(region, false);
  // Whether form names a path strictly above one form of the region.
  auto above_region = [&](const Form &form) {
    return std::any_of(regions.begin(), regions.end(), [&](const Form &inside) {
      return form.parts.size() < inside.parts.size() && prefix_matches(form, inside.parts);
    });
  };
  auto add = [&](const std::string &label, const std::string &path, bool globs) {
    Entry entry{label, forms(path, globs)};
    std::erase_if(entry.forms, above_region);
    if (!entry.forms.empty()) entries_.push_back(std::move(entry));
  };
  for (const auto &[key, paths] :
       {std::pair{"read", &policy.read}, std::pair{"write", &policy.write},
        std::pair{"tool_write", &policy.tool_write}}) {
    for (std::size_t i = 0; i < paths->size(); ++i) {
      add(std::string(key) + "[" + std::to_string(i) + "] " + (*paths)[i], (*paths)[i],
          paths == &policy.tool_write);
    }
  }
  if (!policy.egress.empty()) add("egress " + policy.egress, policy.egress, false);
}

std::vector<ReallowedPaths::Form> ReallowedPaths::forms(const std::string &path, bool globs) const {
  Form written{components(path), 0};
  while (written.literal < written.parts.size() &&
         !(globs && written.parts[written.literal].find_first_of("*?[") != std::string::npos)) {
    ++written.literal;
  }
  std::vector<Form> out{written};
  try {
    Form resolved{components(resolve(policy_, joined(written.parts, written.literal), "/")), 0};
    resolved.literal = resolved.parts.size();
    resolved.parts.insert(resolved.parts.end(),
                          written.parts.begin() + static_cast<long>(written.literal),
                          written.parts.end());
    if (resolved.parts != written.parts) out.push_back(std::move(resolved));
  } catch (const std::exception &) {
    // A symlink loop: the path as written is all there is to compare.
  }
  return out;
}

bool ReallowedPaths::prefix_matches(const Form &form, const std::vector<std::string> &path) {
  const std::size_t count = std::min(form.parts.size(), path.size());
  for (std::size_t i = 0; i < count; ++i) {
    const bool matches = i < form.literal
                             ? form.parts[i] == path[i]
                             : ::fnmatch(form.parts[i].c_str(), path[i].c_str(), 0) == 0;
    if (!matches) return false;
  }
  return true;
}

ReallowedMatch ReallowedPaths::match(const std::string &path) const {
  ReallowedMatch out;
  const auto paths = forms(path, false);
  for (const auto &entry : entries_) {
    bool covers = false, below = false;
    for (const auto &form : entry.forms) {
      for (const auto &each : paths) {
        if (!prefix_matches(form, each.parts)) continue;
        (form.parts.size() <= each.parts.size() ? covers : below) = true;
      }
    }
    if (covers && !out.covering) out.covering = entry.label;
    if (below) out.below.push_back(entry.label);
  }
  return out;
}

}  // namespace sandbox_host::policy
