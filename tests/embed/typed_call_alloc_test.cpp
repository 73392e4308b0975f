// A synchronous typed call allocates nothing on the heap once the store is
// warm, and a host stream reader visits elements without allocating: every
// operator new of this test binary is counted (support/counting_new.cpp, so
// the binary is one of its own).
#include <gtest/gtest.h>

#include "../support/test_engine.hpp"

#include <string>

#include "../support/counting_new.hpp"
#include "cmhost/cmhost.hpp"
#include "cmhost/streams.hpp"

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

// The variant of tests/components/host-streams.wat, read in place.
struct Num : abi::typed::Case<uint32_t> {
  using Case::Case;
};
struct TextView : abi::typed::Case<std::string_view> {
  using Case::Case;
};
struct None : abi::typed::Case<void> {};
using OpView = std::variant<Num, TextView, None>;

TEST(StreamAllocations, ReadVisitAllocatesNothingPerElement) {
  Engine engine{testing_support::test_engine_config()};
  Store store(engine);
  const Instance guest = Linker().instantiate(
      store, Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-streams.wasm"));
  const std::vector<Val> args{Val::u32(4000), Val::u32(1000)};
  StreamReader<OpView> reader(store, guest.func("produce-ops").call(store, args).at(0));
  uint64_t bytes = 0, elements = 0;
  auto visit = [&](auto, const auto& c) {
    ++elements;
    if constexpr (std::is_same_v<std::decay_t<decltype(c)>, TextView>) bytes += c.value.size();
  };
  // The guest's first write of 1000 is parked: reading it runs no guest code.
  const uint64_t before_chunk = checks::heap_allocations();
  ASSERT_EQ(reader.read_visit(store, visit), 1000u);
  EXPECT_EQ(checks::heap_allocations() - before_chunk, 0u) << "heap allocations visiting 1000 elements in place";
  // The other three writes: the guest runs between them (its stream.write
  // makes a buffer per write), but nothing is allocated per element.
  const uint64_t before_rest = checks::heap_allocations();
  while (!(reader.read_visit(store, visit) == 0 && reader.ended())) {
  }
  EXPECT_EQ(elements, 4000u);
  EXPECT_LT(checks::heap_allocations() - before_rest, 100u) << "heap allocations reading 3000 more elements";
  EXPECT_GT(bytes, 0u);
}

}  // namespace
}  // namespace cmhost
