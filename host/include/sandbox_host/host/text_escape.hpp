// How bytes from outside (an op name, a host name, a path, an argument, a command's output)
// are written where people and machines read them: the audit records and the log lines on
// stderr or in a file. A hostile client must not be able to move a terminal's cursor, erase
// or recolour a line, start a line of its own, reorder what a viewer shows, or forge an
// escape; and the reader still sees every byte it sent.
#pragma once

#include <string>
#include <string_view>

namespace sandbox_host {

// bytes for one line of text, in C-style escapes the way journalctl shows them. Printable
// ASCII and valid UTF-8 stay as they are, except: the backslash as \\, so that no escape
// can be forged; \a \b \t \n \v \f \r; \xNN (two lowercase hex digits) for every other C0
// control, DEL and each byte that is not part of valid UTF-8 (RFC 3629: no overlong form,
// no surrogate, nothing above U+10FFFF); \uNNNN for the C1 controls U+0080..U+009F (some
// terminals take U+009B as CSI), the line and paragraph separators U+2028 and U+2029 (some
// viewers start a line there) and the bidi embeddings, overrides and isolates U+202A..U+202E
// and U+2066..U+2069 (they reorder the rest of the line as shown: "Trojan Source").
std::string escape_text(std::string_view bytes);

// bytes as one JSON string, quotes included, that stays valid JSON whatever the bytes:
// valid UTF-8 parses back to the same text, with the code points escape_text escapes
// written as \uNNNN (and " \\ \b \f \n \r \t); each byte that is not part of valid UTF-8
// becomes the four characters \xNN of escape_text, so that nothing is lost.
std::string json_quoted(std::string_view bytes);

}  // namespace sandbox_host
