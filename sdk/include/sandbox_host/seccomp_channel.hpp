// How a sandbox's refused system calls reach the host. The host gives stage 1 one end of a
// SOCK_SEQPACKET socket pair and names it in kEnvSeccompChannel; a backend loads its filter
// with SECCOMP_FILTER_FLAG_NEW_LISTENER, refusals answered SECCOMP_RET_USER_NOTIF, and sends
// the listener back in one message of one byte, kListenerWord, with the descriptor as
// SCM_RIGHTS. Where the kernel gives no listener it sends kDeclinedWord followed by the
// errno in decimal and loads its filter with the refusals answered by the filter itself.
// The host's supervisor records each call it is sent and answers it with the errno of its
// rule (seccomp_refusals.hpp). Neither end may reach the plugin.
#pragma once

#include <string_view>

namespace sandbox_host {

// "<fd>" for refusals, "<fd> learn" for `run --learn`, whose filter also sends the calls it
// traces. Set by the host for stage 1 alone: a caller's CLAWPATROL_* never reaches it.
inline constexpr std::string_view kEnvSeccompChannel = "CLAWPATROL_SANDBOX_SECCOMP";
inline constexpr std::string_view kSeccompLearnSuffix = " learn";
inline constexpr char kListenerWord = 'L';
inline constexpr char kDeclinedWord = 'N';

}  // namespace sandbox_host
