// A synchronous typed call allocates nothing on the heap once the store is
// warm: every operator new of this test binary is counted
// (support/counting_new.cpp, so the binary is one of its own).
#include <gtest/gtest.h>

#include "../support/test_engine.hpp"

#include <string>

#include "../support/counting_new.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

TEST(TypedCallAllocations, ASynchronousTypedCallAllocatesNothing) {
  Engine engine{testing_support::test_engine_config()};
  Store store(engine);
  const Instance basics =
      Linker().instantiate(store, Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/basics.wasm"));
  const auto add = basics.typed_func<uint32_t(uint32_t, uint32_t)>("add");
  for (uint32_t i = 0; i < 10; ++i) ASSERT_EQ(add.call(store, i, 1), i + 1);  // warms the task pool
  const uint64_t before = checks::heap_allocations();
  uint32_t sum = 0;
  for (uint32_t i = 0; i < 1000; ++i) sum += add.call(store, i, 1);
  const uint64_t typed = checks::heap_allocations() - before;
  EXPECT_EQ(sum, 1000u * 1001u / 2);
  EXPECT_EQ(typed, 0u) << "heap allocations in 1000 typed calls";
  // The dynamic call, for contrast, allocates its result vector at least.
  const Func dynamic = basics.func("add");
  const Val args[2] = {Val::u32(1), Val::u32(2)};
  const uint64_t before_dynamic = checks::heap_allocations();
  EXPECT_EQ(dynamic.call(store, args)[0].as_u32(), 3u);
  EXPECT_GT(checks::heap_allocations() - before_dynamic, 0u);
}

}  // namespace
}  // namespace cmhost
