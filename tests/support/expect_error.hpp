// Rejections checked by kind: a test that expects, say, a validation error
// fails when the code throws a decode error (or any other kind) instead.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <utility>

#include "cmhost/error.hpp"

namespace cmhost::testing {

// Passes when `run()` throws a cmhost::Error of `kind`.
template <class Run>
::testing::AssertionResult throws_error(ErrorKind kind, Run&& run) {
  try {
    std::forward<Run>(run)();
  } catch (const Error& e) {
    if (e.kind() == kind) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "threw a " << to_string(e.kind()) << " error, expected a "
                                         << to_string(kind) << " error: " << e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw " << e.what() << ", expected a " << to_string(kind) << " error";
  }
  return ::testing::AssertionFailure() << "threw nothing, expected a " << to_string(kind) << " error";
}

}  // namespace cmhost::testing

// EXPECT_ERROR(statement, ErrorKind::Trap)
#define EXPECT_ERROR(statement, kind) \
  EXPECT_TRUE(::cmhost::testing::throws_error(kind, [&] { (void)(statement); }))
