// The checks every request passes before a driver touches the host (plugins/cap's
// memory_cap): sizes as systemd writes them, their ranges, and slice and unit names that
// cannot climb out of the parent.
#include <memory_cap.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace {

using sandbox_host::cap::memory_cap;
using sandbox_host::cap::parse_memory_limit;

std::string refusal_of(const std::function<void()> &body) {
  try {
    body();
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

TEST(MemoryLimit, ReadsBytesSuffixesAndInfinity) {
  EXPECT_EQ(parse_memory_limit("max", "4096"), 4096u);
  EXPECT_EQ(parse_memory_limit("max", "32K"), 32u << 10);
  EXPECT_EQ(parse_memory_limit("max", "32M"), 32u << 20);
  EXPECT_EQ(parse_memory_limit("max", "2G"), 2ull << 30);
  EXPECT_EQ(parse_memory_limit("max", "1T"), 1ull << 40);
  EXPECT_EQ(parse_memory_limit("swap", "0"), 0u);
  EXPECT_EQ(parse_memory_limit("max", "infinity"), std::nullopt);
}

TEST(MemoryLimit, RefusesWhatIsNoSize) {
  for (const char *text : {"12X", "1.5G", "-1", "32m", "G", " 32M", "32M ", "50%", "0x10"}) {
    EXPECT_EQ(refusal_of([&] { parse_memory_limit("max", text); }),
              "max \"" + std::string(text) +
                  "\" is not a size: bytes, or a whole number with K, M, G or T (1024-based), or "
                  "\"infinity\"")
        << text;
  }
}

TEST(MemoryLimit, RefusesWhatOverflows) {
  EXPECT_EQ(refusal_of([] { parse_memory_limit("max", "99999999999999999999"); }),
            "max \"99999999999999999999\" is too large: at most 9223372036854775807 bytes");
  EXPECT_EQ(refusal_of([] { parse_memory_limit("swap", "8388608T"); }),
            "swap \"8388608T\" is too large: at most 9223372036854775807 bytes");
  EXPECT_EQ(parse_memory_limit("max", "8388607T"), 8388607ull << 40);
}

TEST(MemoryCap, NeedsSliceMaxAndSwap) {
  EXPECT_EQ(refusal_of([] { memory_cap("", "1G", "0"); }),
            "slice is required: the slot's <name>.slice");
  EXPECT_EQ(refusal_of([] { memory_cap("a.slice", "", "0"); }), "max is required");
  EXPECT_EQ(refusal_of([] { memory_cap("a.slice", "1G", ""); }), "swap is required");
}

TEST(MemoryCap, RefusesACapTooSmallToRunAnything) {
  EXPECT_EQ(refusal_of([] { memory_cap("a.slice", "512", "0"); }),
            "max \"512\" is below the smallest cap, 1M (1048576 bytes)");
  EXPECT_EQ(memory_cap("a.slice", "1M", "0").max, 1u << 20);
}

TEST(MemoryCap, RefusesMaxAndSwapThatOverflowTogether) {
  EXPECT_EQ(refusal_of([] { memory_cap("a.slice", "8388607T", "8388607T"); }),
            "max \"8388607T\" and swap \"8388607T\" add up to more than 9223372036854775807 bytes");
  EXPECT_EQ(memory_cap("a.slice", "infinity", "8388607T").max, std::nullopt);
}

TEST(MemoryCap, RefusesSliceNamesThatClimbOrAreNoSlice) {
  const std::map<std::string, std::string> refused{
      {"../x.slice", "slice \"../x.slice\" contains \"/\""},
      {"a/b.slice", "slice \"a/b.slice\" contains \"/\""},
      {"a..slice", "slice \"a..slice\" contains \"..\""},
      {"build", "slice \"build\" must be <name>.slice"},
      {".slice", "slice \".slice\" must be <name>.slice"},
      {"build.scope", "slice \"build.scope\" must be <name>.slice"},
      {"-.slice", "slice \"-.slice\" must not start with \"-\" or \".\""},
      {"a--b.slice", "slice \"a--b.slice\" has an empty level between \"-\""},
      {"a-.slice", "slice \"a-.slice\" has an empty level between \"-\""},
      {"a b.slice",
       "slice \"a b.slice\" contains \" \"; a unit name takes letters, digits and "
       "\":_.-\""},
      {"a@b.slice",
       "slice \"a@b.slice\" contains \"@\"; a unit name takes letters, digits and "
       "\":_.-\""},
      {"a\nb.slice",
       "slice \"a\\x0ab.slice\" contains \"\\x0a\"; a unit name takes letters, "
       "digits and \":_.-\""},
      {std::string(200, 'a') + ".slice",
       "slice \"" + std::string(200, 'a') + ".slice\" is longer than 128 bytes"},
  };
  for (const auto &[slice, why] : refused) {
    EXPECT_EQ(refusal_of([&] { memory_cap(slice, "1G", "0"); }), why) << slice;
  }
  EXPECT_EQ(memory_cap("sandbox-slot_1:a.slice", "1G", "0").slice, "sandbox-slot_1:a.slice");
}

TEST(UnitName, TakesAScopeWithAnAt) {
  using sandbox_host::cap::check_unit_name;
  EXPECT_NO_THROW(check_unit_name("unit", "run@1.scope", ".scope"));
  EXPECT_EQ(refusal_of([] { check_unit_name("unit", "run.service", ".scope"); }),
            "unit \"run.service\" must be <name>.scope");
  EXPECT_EQ(refusal_of([] { check_unit_name("unit", "../run.scope", ".scope"); }),
            "unit \"../run.scope\" contains \"/\"");
}

}  // namespace
