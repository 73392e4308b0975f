// Rejections checked by kind: a test that expects, say, a validation error
// fails when the code throws a decode error (or any other kind) instead.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "cmhost/error.hpp"

namespace cmhost::checks {

// Passes when `run()` throws a cmhost::Error of `kind` whose message
// contains `needle` (any message when it is empty).
template <class Run>
::testing::AssertionResult throws_error(ErrorKind kind, Run&& run, std::string_view needle = {}) {
  try {
    std::forward<Run>(run)();
  } catch (const Error& e) {
    if (e.kind() != kind)
      return ::testing::AssertionFailure() << "threw a " << to_string(e.kind()) << " error, expected a "
                                           << to_string(kind) << " error: " << e.what();
    if (std::string_view(e.what()).find(needle) == std::string_view::npos)
      return ::testing::AssertionFailure() << "the " << to_string(kind) << " error does not mention \"" << needle
                                           << "\": " << e.what();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw " << e.what() << ", expected a " << to_string(kind) << " error";
  }
  return ::testing::AssertionFailure() << "threw nothing, expected a " << to_string(kind) << " error";
}

// The same as a check that records a failure, returning the error thrown
// (one of `kind` with an empty message when there was none) for more checks.
template <class Run>
Error expect_error(ErrorKind kind, Run&& run, std::string_view needle = {}) {
  try {
    std::forward<Run>(run)();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string_view(e.what()).find(needle), std::string_view::npos) << e.what();
    return e;
  }
  ADD_FAILURE() << "threw nothing, expected a " << to_string(kind) << " error";
  return Error(kind, "");
}

}  // namespace cmhost::checks

namespace cmhost {
using checks::expect_error;
}  // namespace cmhost

// EXPECT_ERROR(statement, ErrorKind::Trap)
#define EXPECT_ERROR(statement, kind) \
  EXPECT_TRUE(::cmhost::checks::throws_error(kind, [&] { (void)(statement); }))

// EXPECT_ERROR_SAYING(statement, ErrorKind::Usage, "part of the message")
#define EXPECT_ERROR_SAYING(statement, kind, needle) \
  EXPECT_TRUE(::cmhost::checks::throws_error(kind, [&] { (void)(statement); }, needle))
