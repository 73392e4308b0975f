// FunctionAbi: core signatures (definitions.py flatten_functype) and passing
// arguments and results flat or through memory (lift_flat_values,
// lower_flat_values, canon_lift, canon_lower).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

using Bytes = std::vector<uint8_t>;
using Flat = std::vector<uint64_t>;
using Allocs = std::vector<HostMemory::Allocation>;
using Types = std::vector<TypeRef>;
using Core = std::vector<CoreType>;

constexpr CoreType I32 = CoreType::I32;
constexpr CoreType I64 = CoreType::I64;
constexpr CoreType F32 = CoreType::F32;

CanonOptions options(AddrWidth w = AddrWidth::I32) {
  CanonOptions o;
  o.addr = w;
  return o;
}

Types repeat(const TypeRef& t, size_t n) { return Types(n, t); }

Core params(const FunctionAbi& f, AbiSide side) { return f.core_signature(side).params; }
Core results(const FunctionAbi& f, AbiSide side) { return f.core_signature(side).results; }

Bytes bytes(const HostMemory& m, size_t at, size_t n) {
  return Bytes(m.data().begin() + at, m.data().begin() + at + n);
}
void poke(HostMemory& m, size_t at, const Bytes& b) {
  std::copy(b.begin(), b.end(), m.bytes().begin() + at);
}

// ---- core signatures ---------------------------------------------------------------

TEST(FunctionSignature, SixteenFlatParamsStayFlat) {
  FunctionAbi f(repeat(Type::u32(), 16), {}, options());
  for (AbiSide side : {AbiSide::Lift, AbiSide::Lower}) {
    EXPECT_EQ(params(f, side), Core(16, I32));
    EXPECT_TRUE(results(f, side).empty());
    EXPECT_FALSE(f.params_spilled(side));
  }
}

TEST(FunctionSignature, SeventeenFlatParamsSpillToOnePointer) {
  FunctionAbi f(repeat(Type::u32(), 17), {}, options());
  for (AbiSide side : {AbiSide::Lift, AbiSide::Lower}) {
    EXPECT_EQ(params(f, side), Core{I32});
    EXPECT_TRUE(f.params_spilled(side));
  }
  // 8 strings are 16 flat values (fits); 8 strings and a bool are 17.
  EXPECT_EQ(params(FunctionAbi(repeat(Type::string(), 8), {}, options()), AbiSide::Lift),
            Core(16, I32));
  Types t = repeat(Type::string(), 8);
  t.push_back(Type::bool_());
  EXPECT_EQ(params(FunctionAbi(t, {}, options()), AbiSide::Lift), Core{I32});
  // In a 64-bit memory the pointer is an i64.
  FunctionAbi f64(repeat(Type::u32(), 17), {}, options(AddrWidth::I64));
  EXPECT_EQ(params(f64, AbiSide::Lift), Core{I64});
}

TEST(FunctionSignature, OneFlatResultIsReturned) {
  FunctionAbi f({Type::u64(), Type::f32()}, {Type::f32()}, options());
  for (AbiSide side : {AbiSide::Lift, AbiSide::Lower}) {
    EXPECT_EQ(params(f, side), (Core{I64, F32}));
    EXPECT_EQ(results(f, side), Core{F32});
  }
  EXPECT_FALSE(f.results_spilled());
}

TEST(FunctionSignature, TwoFlatResultsSpill) {
  FunctionAbi f({Type::u32()}, {Type::string()}, options());
  EXPECT_TRUE(f.results_spilled());
  // canon lift returns a pointer to the results.
  EXPECT_EQ(params(f, AbiSide::Lift), Core{I32});
  EXPECT_EQ(results(f, AbiSide::Lift), Core{I32});
  // canon lower takes an out-pointer after the parameters and returns nothing.
  EXPECT_EQ(params(f, AbiSide::Lower), (Core{I32, I32}));
  EXPECT_TRUE(results(f, AbiSide::Lower).empty());

  FunctionAbi f64({Type::u32()}, {Type::string()}, options(AddrWidth::I64));
  EXPECT_EQ(results(f64, AbiSide::Lift), Core{I64});
  EXPECT_EQ(params(f64, AbiSide::Lower), (Core{I32, I64}));
}

TEST(FunctionSignature, SpilledParamsAndResultsOnLower) {
  FunctionAbi f(repeat(Type::u8(), 17), {Type::tuple({Type::u8(), Type::u8()})}, options());
  EXPECT_EQ(params(f, AbiSide::Lower), (Core{I32, I32}));
  EXPECT_TRUE(results(f, AbiSide::Lower).empty());
  EXPECT_EQ(params(f, AbiSide::Lift), Core{I32});
  EXPECT_EQ(results(f, AbiSide::Lift), Core{I32});
}

TEST(FunctionSignature, MemoryOnlyParamSpills) {
  // 300 flat values are only counted, never listed.
  FunctionAbi f({Type::fixed_list(Type::u8(), 300)}, {}, options());
  EXPECT_EQ(params(f, AbiSide::Lift), Core{I32});
  EXPECT_TRUE(f.params_spilled(AbiSide::Lift));
}

TEST(FunctionSignature, AsyncLowerSpillsAboveFourParams) {
  FunctionAbi four(repeat(Type::u32(), 4), {}, options(), /*async=*/true);
  EXPECT_EQ(params(four, AbiSide::Lower), Core(4, I32));
  EXPECT_EQ(results(four, AbiSide::Lower), Core{I32});
  EXPECT_FALSE(four.params_spilled(AbiSide::Lower));

  FunctionAbi five(repeat(Type::u32(), 5), {}, options(), /*async=*/true);
  EXPECT_EQ(params(five, AbiSide::Lower), Core{I32});
  EXPECT_EQ(results(five, AbiSide::Lower), Core{I32});
  EXPECT_TRUE(five.params_spilled(AbiSide::Lower));
  // Async lifts keep the limit of 16.
  EXPECT_EQ(params(five, AbiSide::Lift), Core(5, I32));
  EXPECT_FALSE(five.params_spilled(AbiSide::Lift));
}

TEST(FunctionSignature, AsyncLowerWithResultsAddsAPointer) {
  // Even a single flat result goes through memory for an async lower.
  FunctionAbi f({Type::u32(), Type::f32()}, {Type::u32()}, options(), /*async=*/true);
  EXPECT_EQ(params(f, AbiSide::Lower), (Core{I32, F32, I32}));
  EXPECT_EQ(results(f, AbiSide::Lower), Core{I32});

  FunctionAbi spilled(repeat(Type::u32(), 5), {Type::string()}, options(AddrWidth::I64), true);
  EXPECT_EQ(params(spilled, AbiSide::Lower), (Core{I64, I64}));
  EXPECT_EQ(results(spilled, AbiSide::Lower), Core{I32});
}

TEST(FunctionSignature, AsyncLift) {
  FunctionAbi f(repeat(Type::u32(), 17), {Type::string()}, options(), /*async=*/true);
  EXPECT_EQ(params(f, AbiSide::Lift), Core{I32});
  // Without knowing the callback option the signature has no results.
  EXPECT_TRUE(results(f, AbiSide::Lift).empty());
}

TEST(FunctionSignature, Empty) {
  FunctionAbi f({}, {}, options());
  for (AbiSide side : {AbiSide::Lift, AbiSide::Lower}) {
    EXPECT_TRUE(params(f, side).empty());
    EXPECT_TRUE(results(f, side).empty());
  }
}

// ---- lower_args / lift_results (the host calls a lifted export) ------------------

TEST(FunctionLowerArgs, FlatWhenTheyFit) {
  HostMemory mem(64, 16);
  AbiContext cx(&mem, options());
  FunctionAbi f({Type::u32(), Type::string(), Type::s8()}, {}, options());
  Flat flat;
  f.lower_args(cx, std::vector<Val>{Val::u32(5), Val::string("ab"), Val::s8(-1)}, flat);
  EXPECT_EQ(flat, (Flat{5, 16, 2, 0xFFFFFFFF}));
  EXPECT_EQ(mem.allocations(), (Allocs{{0, 0, 1, 2, 16}}));
}

TEST(FunctionLowerArgs, SpillThroughReallocWithTheTupleAlignment) {
  // tuple<u8, u64, u8 x 15>: u8 @0, u64 @8, u8s @16..30; size 31 -> 32,
  // align 8. realloc(0, 0, 8, 32) from heap base 1 returns 8.
  Types types = {Type::u8(), Type::u64()};
  std::vector<Val> args = {Val::u8(0xA0), Val::u64(0x0102030405060708ull)};
  for (uint8_t i = 1; i <= 15; ++i) {
    types.push_back(Type::u8());
    args.push_back(Val::u8(i));
  }
  FunctionAbi f(types, {}, options());
  ASSERT_TRUE(f.params_spilled(AbiSide::Lift));
  HostMemory mem(128, 1);
  AbiContext cx(&mem, options());
  Flat flat;
  f.lower_args(cx, args, flat);
  EXPECT_EQ(flat, Flat{8});
  EXPECT_EQ(mem.allocations(), (Allocs{{0, 0, 8, 32, 8}}));
  EXPECT_EQ(bytes(mem, 8, 8), (Bytes{0xA0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bytes(mem, 16, 8), (Bytes{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(bytes(mem, 24, 15), (Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST(FunctionLowerArgs, SpilledStringsAreAllocatedAfterTheTuple) {
  // 16 u32s @0..63 and a string @64: size 72, align 4 (i32 memory); the
  // tuple is allocated first, at 4, then "hi" at 76.
  Types types = repeat(Type::u32(), 16);
  types.push_back(Type::string());
  std::vector<Val> args(16, Val::u32(0x11111111));
  args.push_back(Val::string("hi"));
  FunctionAbi f(types, {}, options());
  HostMemory mem(256, 1);
  AbiContext cx(&mem, options());
  Flat flat;
  f.lower_args(cx, args, flat);
  EXPECT_EQ(flat, Flat{4});
  EXPECT_EQ(mem.allocations(), (Allocs{{0, 0, 4, 72, 4}, {0, 0, 1, 2, 76}}));
  EXPECT_EQ(bytes(mem, 68, 8), (Bytes{76, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(bytes(mem, 76, 2), (Bytes{'h', 'i'}));

  // In a 64-bit memory the string is 16 bytes at 64: size 80, align 8.
  FunctionAbi f64(types, {}, options(AddrWidth::I64));
  HostMemory mem64(256, 1);
  AbiContext cx64(&mem64, options(AddrWidth::I64));
  Flat flat64;
  f64.lower_args(cx64, args, flat64);
  EXPECT_EQ(flat64, Flat{8});
  EXPECT_EQ(mem64.allocations(), (Allocs{{0, 0, 8, 80, 8}, {0, 0, 1, 2, 88}}));
  EXPECT_EQ(bytes(mem64, 72, 16), (Bytes{88, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}));
}

// A guest memory whose realloc always returns the same pointer.
class FixedRealloc : public GuestMemory {
 public:
  FixedRealloc(size_t size, uint64_t result) : bytes_(size, 0), result_(result) {}
  std::span<uint8_t> bytes() override { return bytes_; }
  uint64_t realloc(uint64_t, uint64_t, uint32_t, uint64_t) override { return result_; }

 private:
  std::vector<uint8_t> bytes_;
  uint64_t result_;
};

TEST(FunctionLowerArgs, SpillTrapsOnBadReallocResult) {
  Types types = repeat(Type::u64(), 17);
  std::vector<Val> args(17, Val::u64(1));
  FunctionAbi f(types, {}, options());
  {
    FixedRealloc mem(256, 4);  // the tuple needs alignment 8
    AbiContext cx(&mem, options());
    Flat flat;
    expect_error(ErrorKind::Trap, [&] { f.lower_args(cx, args, flat); }, "not aligned to 8");
  }
  {
    FixedRealloc mem(256, 128);  // 136 bytes do not fit at 128
    AbiContext cx(&mem, options());
    Flat flat;
    expect_error(ErrorKind::Trap, [&] { f.lower_args(cx, args, flat); }, "out of bounds");
  }
}

TEST(FunctionLowerArgs, WrongArgumentCountIsInvalidValue) {
  HostMemory mem(64);
  AbiContext cx(&mem, options());
  FunctionAbi f({Type::u32(), Type::u32()}, {}, options());
  Flat flat;
  expect_error(ErrorKind::InvalidValue, [&] { f.lower_args(cx, std::vector<Val>{Val::u32(1)}, flat); },
               "expected 2 arguments, got 1");
  expect_error(ErrorKind::InvalidValue, [&] {
    f.lower_args(cx, std::vector<Val>{Val::u32(1), Val::u32(2), Val::u32(3)}, flat);
  });
  expect_error(ErrorKind::InvalidValue,
               [&] { f.lower_args(cx, std::vector<Val>{Val::u32(1), Val::string("x")}, flat); });
  FunctionAbi spilled(repeat(Type::u32(), 17), {}, options());
  expect_error(ErrorKind::InvalidValue,
               [&] { spilled.lower_args(cx, std::vector<Val>(16, Val::u32(0)), flat); });
}

TEST(FunctionLiftResults, Flat) {
  HostMemory mem(64);
  AbiContext cx(&mem, options());
  FunctionAbi f({}, {Type::f32()}, options());
  EXPECT_EQ(f.lift_results(cx, Flat{0x3F800000}), std::vector<Val>{Val::f32(1.0f)});
  FunctionAbi none({}, {}, options());
  EXPECT_TRUE(none.lift_results(cx, Flat{}).empty());
}

TEST(FunctionLiftResults, FromTheReturnedPointer) {
  // One record { a: u8, b: u32 } result: 2 flat values, so it is returned
  // through memory as tuple<record { a: u8, b: u32 }> (size 8, align 4).
  auto rec = Type::record({{"a", Type::u8()}, {"b", Type::u32()}});
  FunctionAbi f({}, {rec}, options());
  ASSERT_TRUE(f.results_spilled());
  HostMemory mem(64);
  poke(mem, 16, {7, 0, 0, 0, 4, 3, 2, 1});
  AbiContext cx(&mem, options());
  EXPECT_EQ(f.lift_results(cx, Flat{16}),
            std::vector<Val>{Val::record({Val::u8(7), Val::u32(0x01020304)})});
  expect_error(ErrorKind::Trap, [&] { f.lift_results(cx, Flat{18}); }, "not aligned to 4");
  expect_error(ErrorKind::Trap, [&] { f.lift_results(cx, Flat{60}); }, "out of bounds");
  expect_error(ErrorKind::Trap, [&] { f.lift_results(cx, Flat{0xFFFFFFFC}); }, "out of bounds");
  // The message names the spilled tuple.
  expect_error(ErrorKind::Trap, [&] { f.lift_results(cx, Flat{60}); },
               "tuple<record { a: u8, b: u32 }>");
}

TEST(FunctionLiftResults, StringResultThroughPointer) {
  FunctionAbi f({}, {Type::string()}, options(AddrWidth::I64));
  HostMemory mem(64);
  poke(mem, 8, {32, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0});
  poke(mem, 32, {'y', 'e', 's'});
  AbiContext cx(&mem, options(AddrWidth::I64));
  EXPECT_EQ(f.lift_results(cx, Flat{8}), std::vector<Val>{Val::string("yes")});
  expect_error(ErrorKind::Trap, [&] { f.lift_results(cx, Flat{4}); }, "not aligned to 8");
}

// ---- lift_args / lower_results (a guest calls a lowered import) -----------------

TEST(FunctionLiftArgs, FlatAndThroughTheOutPointer) {
  // (u32, string) -> string: flat params i32, i32, i32 and the out pointer.
  FunctionAbi f({Type::u32(), Type::string()}, {Type::string()}, options());
  HostMemory mem(64, 40);
  poke(mem, 16, {'h', 'i'});
  AbiContext cx(&mem, options());
  const Flat args = {5, 16, 2, 32};
  EXPECT_EQ(f.lift_args(cx, args), (std::vector<Val>{Val::u32(5), Val::string("hi")}));

  Flat out;
  f.lower_results(cx, std::vector<Val>{Val::string("ok")}, args, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(mem.allocations(), (Allocs{{0, 0, 1, 2, 40}}));
  EXPECT_EQ(bytes(mem, 32, 8), (Bytes{40, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(bytes(mem, 40, 2), (Bytes{'o', 'k'}));

  // A misaligned or out-of-bounds out pointer traps.
  expect_error(ErrorKind::Trap,
               [&] { f.lower_results(cx, std::vector<Val>{Val::string("ok")}, Flat{5, 16, 2, 33}, out); },
               "not aligned to 4");
  expect_error(ErrorKind::Trap,
               [&] { f.lower_results(cx, std::vector<Val>{Val::string("ok")}, Flat{5, 16, 2, 60}, out); },
               "out of bounds");
}

TEST(FunctionLiftArgs, FlatResult) {
  FunctionAbi f({Type::u8()}, {Type::s16()}, options());
  HostMemory mem(16);
  AbiContext cx(&mem, options());
  EXPECT_EQ(f.lift_args(cx, Flat{0x1FF}), std::vector<Val>{Val::u8(0xFF)});
  Flat out;
  f.lower_results(cx, std::vector<Val>{Val::s16(-2)}, Flat{0x1FF}, out);
  EXPECT_EQ(out, Flat{0xFFFFFFFE});
}

TEST(FunctionLiftArgs, SpilledParamsLoadedFromThePointer) {
  // 17 u8s are a 17-byte tuple with alignment 1.
  FunctionAbi f(repeat(Type::u8(), 17), {}, options());
  HostMemory mem(64);
  Bytes image;
  for (uint8_t i = 1; i <= 17; ++i) image.push_back(i * 3);
  poke(mem, 9, image);
  AbiContext cx(&mem, options());
  const std::vector<Val> got = f.lift_args(cx, Flat{9});
  ASSERT_EQ(got.size(), 17u);
  for (size_t i = 0; i < 17; ++i) EXPECT_EQ(got[i], Val::u8(image[i])) << i;
  expect_error(ErrorKind::Trap, [&] { f.lift_args(cx, Flat{48}); }, "out of bounds");
  EXPECT_EQ(f.lift_args(cx, Flat{47}).size(), 17u);

  // With u32s the tuple needs alignment 4.
  FunctionAbi g(repeat(Type::u32(), 17), {}, options());
  expect_error(ErrorKind::Trap, [&] { g.lift_args(cx, Flat{2}); }, "not aligned to 4");
}

TEST(FunctionLiftArgs, AsyncLowerSpillsAndUsesTheOutPointer) {
  // Five u32 params (20 bytes) through a pointer, then the out pointer.
  FunctionAbi f(repeat(Type::u32(), 5), {Type::u32()}, options(), /*async=*/true);
  HostMemory mem(64);
  poke(mem, 8, {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0});
  AbiContext cx(&mem, options());
  const Flat args = {8, 40};
  EXPECT_EQ(f.lift_args(cx, args), (std::vector<Val>{Val::u32(1), Val::u32(2), Val::u32(3),
                                                     Val::u32(4), Val::u32(5)}));
  Flat out;
  f.lower_results(cx, std::vector<Val>{Val::u32(0xAABBCCDD)}, args, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(bytes(mem, 40, 4), (Bytes{0xDD, 0xCC, 0xBB, 0xAA}));

  // Two flat params: the out pointer is the third core argument.
  FunctionAbi g({Type::u32(), Type::u64()}, {Type::u8()}, options(), /*async=*/true);
  g.lower_results(cx, std::vector<Val>{Val::u8(0x5A)}, Flat{1, 2, 50}, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(bytes(mem, 50, 1), Bytes{0x5A});
}

TEST(FunctionLowerResults, WrongResultCountIsInvalidValue) {
  HostMemory mem(64);
  AbiContext cx(&mem, options());
  Flat out;
  FunctionAbi flat({}, {Type::u32()}, options());
  expect_error(ErrorKind::InvalidValue,
               [&] { flat.lower_results(cx, std::vector<Val>{}, Flat{}, out); },
               "expected 1 results, got 0");
  FunctionAbi spilled({}, {Type::string()}, options());
  expect_error(ErrorKind::InvalidValue, [&] {
    spilled.lower_results(cx, std::vector<Val>{Val::string("a"), Val::string("b")}, Flat{8}, out);
  });
  expect_error(ErrorKind::InvalidValue,
               [&] { spilled.lower_results(cx, std::vector<Val>{Val::u32(1)}, Flat{8}, out); });
}

}  // namespace
}  // namespace cmhost::abi
