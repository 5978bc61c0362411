// Writing a file that others read while it changes (the egress directory, Claude Code's
// managed settings): a reader sees the old contents or the new, never a part.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

namespace sandbox_host {

// Replaces shown.filename() in the directory dir_fd with contents at mode: a hidden
// temporary file beside it (".<name>.tmp-<random>", which readers that skip hidden files never
// take), written, fsync'ed, renamed over the name, then the directory fsync'ed. shown names
// the file in messages. Throws std::system_error naming the step and shown; the temporary
// file does not outlive a failure.
void replace_file(int dir_fd, const std::filesystem::path &shown, std::string_view contents,
                  mode_t mode);

}  // namespace sandbox_host
