// Reading and writing cgroupfs control files, as the kernel wants them: a value in one
// write(), errors that name the file, the value and the kernel's reason. Shared by the
// plugins' cgroups (host/src/limits) and the cap-slot and scope drivers (plugins/cap).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace sandbox_host::cgroup {

// The file's text without its trailing newline. Throws with the file's name.
std::string read_control(const std::filesystem::path &file);
// Throws with the file, the value and the kernel's reason.
void write_control(const std::filesystem::path &file, const std::string &value);
// The number after `key` in a flat-keyed file ("oom_kill 3" in memory.events); 0 when the
// file or the key is missing, as a kernel without the counter has counted nothing.
std::uint64_t read_counter(const std::filesystem::path &file, const std::string &key);

}  // namespace sandbox_host::cgroup
