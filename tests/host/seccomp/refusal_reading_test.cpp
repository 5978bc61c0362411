// The host names a refused call's rule by reading its number and arguments (the SDK's
// seccomp_refusals.hpp); the kernel decides by running the filter's BPF. Here the generated
// programs run, in a small interpreter of classic BPF, over every system call number with
// argument words chosen to sit on each rule's edges, and the reading must give the same
// answer: refused with the same errno, sent to the host, or let through.
#include "seccomp_program.hpp"

#include <sandbox_host/backends/learn_traced_calls.hpp>
#include <sandbox_host/seccomp_refusals.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

// Classic BPF as the kernel runs a seccomp filter: A, X, 16 words of scratch, loads from
// seccomp_data only. An instruction the interpreter does not know fails the test.
std::uint32_t run_bpf(const sock_fprog &program, const seccomp_data &data) {
  std::uint32_t a = 0, x = 0, memory[BPF_MEMWORDS] = {};
  const auto *bytes = reinterpret_cast<const unsigned char *>(&data);
  for (unsigned pc = 0; pc < program.len; ++pc) {
    const sock_filter &op = program.filter[pc];
    const std::uint32_t operand = BPF_SRC(op.code) == BPF_X ? x : op.k;
    switch (BPF_CLASS(op.code)) {
      case BPF_LD:
        if (BPF_MODE(op.code) == BPF_ABS && BPF_SIZE(op.code) == BPF_W) {
          if (op.k + 4 > sizeof data) ADD_FAILURE() << "load past seccomp_data at " << pc;
          std::memcpy(&a, bytes + op.k, 4);
        } else if (BPF_MODE(op.code) == BPF_IMM) {
          a = op.k;
        } else if (BPF_MODE(op.code) == BPF_MEM) {
          a = memory[op.k];
        } else {
          ADD_FAILURE() << "unknown load " << op.code;
          return 0;
        }
        break;
      case BPF_LDX:
        if (BPF_MODE(op.code) == BPF_IMM)
          x = op.k;
        else if (BPF_MODE(op.code) == BPF_MEM)
          x = memory[op.k];
        else {
          ADD_FAILURE() << "unknown ldx " << op.code;
          return 0;
        }
        break;
      case BPF_ST:
        memory[op.k] = a;
        break;
      case BPF_STX:
        memory[op.k] = x;
        break;
      case BPF_ALU:
        switch (BPF_OP(op.code)) {
          case BPF_AND:
            a &= operand;
            break;
          case BPF_OR:
            a |= operand;
            break;
          case BPF_ADD:
            a += operand;
            break;
          case BPF_SUB:
            a -= operand;
            break;
          case BPF_LSH:
            a <<= operand;
            break;
          case BPF_RSH:
            a >>= operand;
            break;
          case BPF_NEG:
            a = -a;
            break;
          default:
            ADD_FAILURE() << "unknown alu " << op.code;
            return 0;
        }
        break;
      case BPF_JMP: {
        bool taken = false;
        switch (BPF_OP(op.code)) {
          case BPF_JA:
            pc += op.k;
            continue;
          case BPF_JEQ:
            taken = a == operand;
            break;
          case BPF_JGT:
            taken = a > operand;
            break;
          case BPF_JGE:
            taken = a >= operand;
            break;
          case BPF_JSET:
            taken = (a & operand) != 0;
            break;
          default:
            ADD_FAILURE() << "unknown jump " << op.code;
            return 0;
        }
        pc += taken ? op.jt : op.jf;
        break;
      }
      case BPF_RET:
        return BPF_RVAL(op.code) == BPF_A ? a : op.k;
      case BPF_MISC:
        if (BPF_MISCOP(op.code) == BPF_TAX)
          x = a;
        else
          a = x;
        break;
      default:
        ADD_FAILURE() << "unknown class " << op.code;
        return 0;
    }
  }
  ADD_FAILURE() << "the program ran off its end";
  return 0;
}

// Words that sit on the rules' edges, in any argument.
std::vector<std::uint64_t> edge_words() {
  std::vector<std::uint64_t> words = {0,
                                      1,
                                      CLONE_NEWUSER,
                                      CLONE_PARENT,
                                      CLONE_NEWUSER | CLONE_VM,
                                      CLONE_VM | CLONE_THREAD | CLONE_SIGHAND,
                                      TIOCSTI,
                                      TIOCLINUX,
                                      TIOCGWINSZ,
                                      (1ULL << 32) | TIOCSTI,
                                      S_ISUID,
                                      S_ISGID,
                                      S_ISUID | 0755,
                                      0755,
                                      O_CREAT,
                                      O_CREAT | S_ISUID,
                                      __O_TMPFILE,
                                      O_TMPFILE | O_RDWR,
                                      O_TMPFILE | O_RDWR | S_ISUID,
                                      O_RDWR,
                                      AF_UNIX,
                                      AF_INET,
                                      AF_INET6,
                                      (1ULL << 32) | AF_UNIX,
                                      PER_LINUX32,
                                      UNAME26,
                                      std::uint64_t{PER_LINUX32} | UNAME26,
                                      ADDR_NO_RANDOMIZE,
                                      READ_IMPLIES_EXEC,
                                      0xFFFFFFFFu,
                                      0xFFFFFFFEu,
                                      ~0ULL};
  return words;
}

// Argument vectors: each edge word alone in each of the first four arguments, each pair in
// neighbouring ones, and random mixes.
std::vector<std::array<std::uint64_t, 6>> argument_vectors() {
  const std::vector<std::uint64_t> words = edge_words();
  std::vector<std::array<std::uint64_t, 6>> out;
  for (unsigned position = 0; position < 4; ++position) {
    for (std::uint64_t word : words) {
      std::array<std::uint64_t, 6> args{};
      args[position] = word;
      out.push_back(args);
    }
  }
  for (unsigned position = 0; position < 3; ++position) {
    for (std::uint64_t first : words) {
      for (std::uint64_t second : words) {
        std::array<std::uint64_t, 6> args{};
        args[position] = first;
        args[position + 1] = second;
        out.push_back(args);
      }
    }
  }
  std::mt19937_64 random(43);
  for (int i = 0; i < 300; ++i) {
    std::array<std::uint64_t, 6> args{};
    for (auto &arg : args) arg = random() % 3 == 0 ? random() : words[random() % words.size()];
    out.push_back(args);
  }
  return out;
}

std::string describe(const seccomp_data &data) {
  std::ostringstream out;
  out << "nr " << data.nr << " args";
  for (auto arg : data.args) out << " 0x" << std::hex << arg;
  return out.str();
}

// A rule only the filters without an ipc or a net namespace have.
bool substitute_rule(const Refusal &refusal) {
  return refusal.rule == "socket (not AF_UNIX)" ||
         std::find(std::begin(kSharedIpcCalls), std::end(kSharedIpcCalls), refusal.rule) !=
             std::end(kSharedIpcCalls);
}

#if defined(__x86_64__)
constexpr std::uint32_t kArchitecture = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kArchitecture = AUDIT_ARCH_AARCH64;
#endif
constexpr int kLastSyscall = 470;
constexpr int kFilters = 3;  // Namespaces: all, none_network_outbound, none_network_none
constexpr int kErrno = 0, kNotify = 1, kLearn = 2;

class RefusalReading : public ::testing::TestWithParam<int> {};

TEST_P(RefusalReading, NamesTheRuleTheFilterApplies) {
  const int filter = GetParam();
  const auto vectors = argument_vectors();
  std::set<std::string> traced_names(backends::kLearnTracedCalls.begin(),
                                     backends::kLearnTracedCalls.end());
  unsigned refused = 0, disagreements = 0;
  for (int nr = 0; nr <= kLastSyscall; ++nr) {
    for (const auto &args : vectors) {
      seccomp_data data{};
      data.nr = nr;
      data.arch = kArchitecture;
      std::copy(args.begin(), args.end(), data.args);
      const std::uint32_t answered = run_bpf(backends::kSeccompPrograms[filter][kErrno], data);
      const std::uint32_t sent = run_bpf(backends::kSeccompPrograms[filter][kNotify], data);
      const std::uint32_t learned = run_bpf(backends::kSeccompPrograms[filter][kLearn], data);
      const std::optional<Refusal> reading = refusal_of(data);
      const std::uint32_t action = answered & SECCOMP_RET_ACTION_FULL;
      const int error = static_cast<int>(answered & SECCOMP_RET_DATA);
      bool agrees = true;
      if (action == SECCOMP_RET_ERRNO && error != ENOSYS) {
        // A refusal: the notifying filters send it, and the reading names it, same errno.
        ++refused;
        agrees = reading && reading->error == error && sent == SECCOMP_RET_USER_NOTIF &&
                 learned == SECCOMP_RET_USER_NOTIF;
      } else if (action == SECCOMP_RET_ERRNO) {
        // clone3 and openat2: answered ENOSYS by every filter, nothing sent.
        agrees = sent == answered && !reading;
      } else {
        // Let through: never sent as a refusal; the learn filter sends what it traces.
        agrees = action == SECCOMP_RET_ALLOW && sent == SECCOMP_RET_ALLOW &&
                 (learned == SECCOMP_RET_ALLOW || learned == SECCOMP_RET_USER_NOTIF);
        // The reading covers every filter's rules: what this one lets through may be
        // another's refusal (IPC, sockets), never one of the default rules.
        if (reading && (filter == 2 || !substitute_rule(*reading))) agrees = false;
      }
      if (!agrees && ++disagreements <= 20) {
        ADD_FAILURE() << "filter " << filter << ", " << describe(data) << ": BPF 0x" << std::hex
                      << answered << " / sent 0x" << sent << ", reading "
                      << (reading ? std::string(reading->rule) : "none");
      }
    }
  }
  EXPECT_EQ(disagreements, 0u);
  EXPECT_GT(refused, 1000u) << "the filter refused too little for the comparison to mean much";
}

INSTANTIATE_TEST_SUITE_P(EachFilter, RefusalReading, ::testing::Range(0, kFilters));

TEST(RefusalReading, TheLearnFilterSendsEachTracedCallAndOnlyThose) {
  std::set<int> traced;
  // Numbers the learn filter sends with all arguments zero, where the notify filter does not.
  for (int nr = 0; nr <= kLastSyscall; ++nr) {
    seccomp_data data{};
    data.nr = nr;
    data.arch = kArchitecture;
    if (run_bpf(backends::kSeccompPrograms[0][kLearn], data) == SECCOMP_RET_USER_NOTIF &&
        run_bpf(backends::kSeccompPrograms[0][kNotify], data) == SECCOMP_RET_ALLOW) {
      traced.insert(nr);
    }
  }
  EXPECT_EQ(traced.size(), backends::kLearnTracedCalls.size());
}

TEST(RefusalReading, AnotherArchitectureIsKilledNeverSent) {
  seccomp_data data{};
  data.nr = 1;
  data.arch = 0x40000003;  // i386
  for (int filter = 0; filter < kFilters; ++filter) {
    for (int verdicts : {kErrno, kNotify, kLearn}) {
      const std::uint32_t action =
          run_bpf(backends::kSeccompPrograms[filter][verdicts], data) & SECCOMP_RET_ACTION_FULL;
      EXPECT_TRUE(action == SECCOMP_RET_KILL_PROCESS || action == SECCOMP_RET_KILL_THREAD)
          << filter << "/" << verdicts;
    }
    EXPECT_FALSE(refusal_of(data));
  }
}

}  // namespace
}  // namespace sandbox_host
