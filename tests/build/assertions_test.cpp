// The sanitizer build runs cmhost's assertions: it must not define NDEBUG
// (CMakePresets.json), or AddressSanitizer runs would pass over the checks
// the code states as assertions. Built into the tests of sanitizer builds
// only (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cassert>

namespace {

[[maybe_unused]] void assert_false() { assert(false && "an assertion that fails"); }

TEST(SanitizerBuild, AssertionsRun) {
#ifdef NDEBUG
  FAIL() << "the sanitizer build defines NDEBUG: its assertions do not run";
#else
  EXPECT_DEATH(assert_false(), "an assertion that fails");
#endif
}

}  // namespace
