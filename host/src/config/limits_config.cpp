#include "limits_config.hpp"

#include "schema_key.hpp"
#include "toml_type_name.hpp"

#include <sandbox_host/host/config_schema.hpp>

#include <sched.h>

#include <algorithm>
#include <iterator>
#include <optional>

namespace sandbox_host {

void set_limit(LaunchLimits &limits, const LimitField &field, std::uint64_t value) {
  if (const auto *process = std::get_if<std::uint64_t Limits::*>(&field)) {
    limits.process.**process = value;
  } else if (const auto *cgroup = std::get_if<std::uint64_t CgroupLimits::*>(&field)) {
    limits.cgroup.**cgroup = value;
  } else {
    limits.watch.*std::get<std::uint64_t WatchLimits::*>(field) = value;
  }
}

std::uint64_t CgroupLimits::half_the_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int cpus = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 2;
  return std::max<std::uint64_t>(1000, static_cast<std::uint64_t>(cpus) * 500);
}

namespace {

struct LimitKey {
  LimitKeyDoc doc;
  LimitField field;
  enum Unit { count, bytes, cpus, seconds } unit;
  std::uint64_t least;
};

// Each doc is a row of docs/config.md's [limits] table, which a test holds to it. A bound
// below its least leaves a plugin unable to start (its stdio, its loader, one page).
const LimitKey kLimitKeys[] = {
    {{"processes", "1024", "", "processes and threads"}, &Limits::processes, LimitKey::count, 1},
    {{"open_files", "4096", "", "descriptors"}, &Limits::open_files, LimitKey::count, 8},
    {{"file_size", "\"4G\"", "",
      "bytes of one file the plugin writes; past it the write gets `SIGXFSZ`"},
     &Limits::file_size,
     LimitKey::bytes,
     4096},
    {{"tmp_size", "\"512M\"", "", "bytes in the sandbox's own `/tmp` (host memory: a tmpfs)"},
     &Limits::tmp_size,
     LimitKey::bytes,
     4096},
    {{"tmp_inodes", "65536", "", "files in the sandbox's `/tmp`, and again in its `/dev/shm`"},
     &Limits::tmp_inodes,
     LimitKey::count,
     16},
    {{"shm_size", "\"64M\"", "", "bytes in the sandbox's `/dev/shm`"},
     &Limits::shm_size,
     LimitKey::bytes,
     4096},
    {{"memory", "\"2G\"", "", "bytes of memory and swap together (the plugin's tmpfs files count)"},
     &CgroupLimits::memory,
     LimitKey::bytes,
     16 << 20},
    {{"cpu", "", "half of the CPUs sandbox-host may run on, at least 1",
      "CPU time, as a number of CPUs (`1`, `0.5`, `2.5`; least `0.01`)"},
     &CgroupLimits::cpu_millis,
     LimitKey::cpus,
     10},
    {{"scratch_size", "\"1G\"", "",
      "bytes the plugin keeps in SocketDir and TmpDir together (the host's disk): allocated "
      "blocks, each inode once, files it holds open after removing them included"},
     &WatchLimits::scratch_size,
     LimitKey::bytes,
     4096},
    {{"scratch_files", "65536", "", "names in SocketDir and TmpDir together, directories included"},
     &WatchLimits::scratch_files,
     LimitKey::count,
     16},
    {{"lifetime", "\"unlimited\"", "",
      "wall-clock time from the plugin's start: `90` (seconds), `\"90s\"`, `\"15m\"`, `\"2h\"`, "
      "`\"1d\"`"},
     &WatchLimits::lifetime_seconds,
     LimitKey::seconds,
     1},
};

// "512M": digits and one of K, M, G or T (powers of 1024); nullopt when it is not that.
std::optional<std::uint64_t> parse_size(const std::string &text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits + 1 != text.size() || digits > 12) return std::nullopt;
  const std::string units = "KMGT";
  const std::size_t unit = units.find(text.back());
  if (unit == std::string::npos) return std::nullopt;
  const unsigned shift = 10 * static_cast<unsigned>(unit + 1);
  const std::uint64_t count = std::stoull(text.substr(0, digits));
  if (count > (Limits::kUnlimited >> shift)) return std::nullopt;
  return count << shift;
}

// "90s", "15m", "2h", "1d": digits and one of s, m, h, d; nullopt when it is not that.
std::optional<std::uint64_t> parse_duration(const std::string &text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits + 1 != text.size() || digits > 9) return std::nullopt;
  const std::string units = "smhd";
  const std::uint64_t seconds[] = {1, 60, 3600, 86400};
  const std::size_t unit = units.find(text.back());
  if (unit == std::string::npos) return std::nullopt;
  return std::stoull(text.substr(0, digits)) * seconds[unit];
}

std::string allowed_for(const LimitKey &limit) {
  switch (limit.unit) {
    case LimitKey::seconds:
      return "seconds as an integer or a string such as \"90s\", \"15m\", \"2h\" or \"1d\" of "
             "at least 1 second, or \"unlimited\"";
    case LimitKey::bytes:
      return "bytes as an integer or a string such as \"512M\" (K, M, G, T) of at least " +
             std::to_string(limit.least) + ", or \"unlimited\"";
    case LimitKey::cpus:
      return "a number of CPUs such as 1 or 1.5, of at least 0.01, or \"unlimited\"";
    case LimitKey::count:
      break;
  }
  return "an integer of at least " + std::to_string(limit.least) + ", or \"unlimited\"";
}

std::uint64_t read_limit(const ConfigReader &r, const toml::node &node, const std::string &key,
                         const LimitKey &limit) {
  const std::string allowed = allowed_for(limit);
  std::uint64_t value = 0;
  if (const auto *integer = node.as_integer()) {
    if (integer->get() < 0) {
      r.fail(node.source(), key,
             std::to_string(integer->get()) + " is negative; allowed: " + allowed);
    }
    value = static_cast<std::uint64_t>(integer->get());
    if (limit.unit == LimitKey::cpus) {
      if (value > 1'000'000) r.fail(node.source(), key, "is more CPUs than any host has");
      value *= 1000;
    }
  } else if (const auto *real = node.as_floating_point(); real && limit.unit == LimitKey::cpus) {
    const double cpus = real->get();
    if (!(cpus >= 0.01 && cpus <= 1'000'000)) {
      r.fail(node.source(), key, std::to_string(cpus) + " is out of range; allowed: " + allowed);
    }
    value = static_cast<std::uint64_t>(cpus * 1000 + 0.5);
  } else if (const auto *text = node.as_string()) {
    if (text->get() == "unlimited") return Limits::kUnlimited;
    const std::optional<std::uint64_t> size =
        limit.unit == LimitKey::bytes     ? parse_size(text->get())
        : limit.unit == LimitKey::seconds ? parse_duration(text->get())
                                          : std::nullopt;
    if (!size) r.fail(node.source(), key, "\"" + text->get() + "\" is not " + allowed);
    value = *size;
  } else {
    r.fail(node.source(), key, "must be " + allowed + ", not " + std::string(toml_type_name(node)));
  }
  if (value < limit.least) {
    r.fail(node.source(), key,
           (limit.unit == LimitKey::cpus ? std::to_string(value / 1000) : std::to_string(value)) +
               " is too small; allowed: " + allowed);
  }
  return value;
}

// [limits] cgroup: "auto", "off" or an absolute cgroup path without "." or ".." parts.
std::string read_cgroup_setting(const ConfigReader &r, const toml::node &node,
                                const std::string &key) {
  const auto *text = node.as_string();
  const std::string allowed =
      "\"auto\", \"off\" or a cgroup path such as \"/sandbox-host\" (as /proc/self/cgroup "
      "writes it)";
  if (text == nullptr) {
    r.fail(node.source(), key, "must be " + allowed + ", not " + std::string(toml_type_name(node)));
  }
  const std::string value = text->get();
  if (value == "auto" || value == "off") return value;
  bool clean = value.starts_with("/") && value.find("//") == std::string::npos &&
               value.find('\0') == std::string::npos;
  for (std::size_t start = 1; clean && start < value.size();) {
    const std::size_t end = std::min(value.find('/', start), value.size());
    const std::string part = value.substr(start, end - start);
    clean = part != "." && part != "..";
    start = end + 1;
  }
  if (!clean) r.fail(node.source(), key, "\"" + value + "\" is not " + allowed);
  return value;
}

}  // namespace

std::vector<LimitKeyDoc> limit_keys() {
  return key_docs(kLimitKeys);
}

std::vector<std::pair<LimitField, std::uint64_t>> read_limits(const ConfigReader &r,
                                                              const toml::table &t,
                                                              const std::string &prefix,
                                                              std::string *cgroup) {
  std::vector<std::pair<LimitField, std::uint64_t>> out;
  for (auto &&[key, node] : t) {
    const std::string name(key.str());
    const std::string dotted = prefix + "." + key_part(name);
    if (name == "cgroup") {
      if (cgroup == nullptr) {
        r.fail(key.source(), dotted,
               "is where every launch's cgroup goes; set it in [limits], not for one plugin");
      }
      *cgroup = read_cgroup_setting(r, node, dotted);
      continue;
    }
    const auto *limit = std::find_if(std::begin(kLimitKeys), std::end(kLimitKeys),
                                     [&](const LimitKey &k) { return name == k.doc.name; });
    if (limit == std::end(kLimitKeys)) {
      // [limits] allows its cgroup key besides the bounds.
      r.unknown(key, dotted, allowed_keys(kLimitKeys) + (cgroup != nullptr ? ", cgroup" : ""));
    }
    out.emplace_back(limit->field, read_limit(r, node, dotted, *limit));
  }
  return out;
}

}  // namespace sandbox_host
