// Conversions between C++ strings and the boundary's pointer + length strings.
#pragma once

#include <sandbox_host/abi.h>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

constexpr sh_str to_sh_str(std::string_view s) noexcept {
  return {s.data(), s.size()};
}

constexpr std::string_view to_view(sh_str s) noexcept {
  return s.data == nullptr ? std::string_view{} : std::string_view{s.data, s.size};
}

inline std::vector<std::string> to_strings(sh_str_list list) {
  std::vector<std::string> out;
  out.reserve(list.count);
  for (size_t i = 0; i < list.count; ++i) out.emplace_back(to_view(list.items[i]));
  return out;
}

inline void write(sh_writer *writer, std::string_view text) noexcept {
  if (writer != nullptr && writer->write != nullptr) writer->write(writer->ctx, to_sh_str(text));
}

// A sink that collects what a module writes into a std::string.
class StringSink {
 public:
  StringSink() = default;
  StringSink(const StringSink &) = delete;
  StringSink &operator=(const StringSink &) = delete;

  sh_writer *writer() noexcept { return &writer_; }
  const std::string &text() const noexcept { return text_; }

 private:
  static void append(void *ctx, sh_str bytes) noexcept {
    try {
      static_cast<StringSink *>(ctx)->text_.append(to_view(bytes));
    } catch (...) {
      // Out of memory while collecting a message: the message is lost, the call is not.
    }
  }
  std::string text_;
  sh_writer writer_{this, &StringSink::append};
};

}  // namespace sandbox_host
