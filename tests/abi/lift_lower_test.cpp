// store/load and lower_flat/lift_flat of every kind of value, with expected
// bytes and core values worked out from definitions.py (store, load,
// lower_flat, lift_flat, lower_flat_variant, lift_flat_variant).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

using Bytes = std::vector<uint8_t>;
using Flat = std::vector<uint64_t>;

// A host memory with helpers to run one ValueAbi operation at a time.
struct Rig {
  explicit Rig(size_t size = 256, uint64_t heap_base = 1, CanonOptions options = {})
      : mem(size, heap_base), opts(options) {}

  AbiContext cx() { return AbiContext(&mem, opts, hooks); }

  // Reserves a slot with the allocator, as the reference vectors do.
  uint64_t slot(const TypeRef& t) {
    const Layout& l = t->layout(opts.addr);
    return mem.realloc(0, 0, l.align, l.size);
  }
  void store(const TypeRef& t, const Val& v, uint64_t ptr) {
    ValueAbi abi(t, opts.addr);
    AbiContext c = cx();
    abi.store(c, v, ptr);
  }
  Val load(const TypeRef& t, uint64_t ptr) {
    ValueAbi abi(t, opts.addr);
    AbiContext c = cx();
    return abi.load(c, ptr);
  }
  Flat lower(const TypeRef& t, const Val& v) {
    ValueAbi abi(t, opts.addr);
    AbiContext c = cx();
    Flat out;
    abi.lower_flat(c, v, out);
    return out;
  }
  Val lift(const TypeRef& t, const Flat& flat) {
    ValueAbi abi(t, opts.addr);
    AbiContext c = cx();
    return abi.lift_flat(c, flat);
  }
  Bytes bytes(size_t at, size_t n) const {
    return Bytes(mem.data().begin() + at, mem.data().begin() + at + n);
  }
  void poke(size_t at, const Bytes& b) { std::copy(b.begin(), b.end(), mem.bytes().begin() + at); }

  HostMemory mem;
  CanonOptions opts;
  HandleHooks* hooks = nullptr;
};

CanonOptions with_addr(AddrWidth w) {
  CanonOptions o;
  o.addr = w;
  return o;
}

CanonOptions nan_off() {
  CanonOptions o;
  o.canonicalize_nan = false;
  return o;
}

std::vector<std::string> labels(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("l" + std::to_string(i));
  return out;
}

TypeRef variant2(TypeRef a, TypeRef b) {
  return Type::variant({Case{"a", std::move(a)}, Case{"b", std::move(b)}});
}

Val f32_bits(uint32_t bits) { return Val::from_bits(ValKind::F32, bits); }
Val f64_bits(uint64_t bits) { return Val::from_bits(ValKind::F64, bits); }

// ---- every kind of value, both directions, both memory widths --------------

struct Sample {
  TypeRef type;
  Val value;
};

std::vector<Sample> samples() {
  auto res = std::make_shared<ResourceType>(ResourceType{"r"});
  const uint8_t raw[] = {1, 2, 3, 250};
  std::vector<Case> many;
  for (int i = 0; i < 300; ++i) many.push_back(Case{"c" + std::to_string(i), nullptr});
  many[299].type = Type::string();
  auto rich = Type::variant({Case{"a", Type::u8()}, Case{"b", Type::string()}, Case{"c", nullptr},
                             Case{"d", Type::list(Type::f32())}});
  return {
      {Type::bool_(), Val::bool_(true)},
      {Type::s8(), Val::s8(-100)},
      {Type::u8(), Val::u8(200)},
      {Type::s16(), Val::s16(-30000)},
      {Type::u16(), Val::u16(60000)},
      {Type::s32(), Val::s32(-2000000000)},
      {Type::u32(), Val::u32(4000000000u)},
      {Type::s64(), Val::s64(INT64_MIN)},
      {Type::u64(), Val::u64(UINT64_MAX)},
      {Type::f32(), Val::f32(-1.5f)},
      {Type::f64(), Val::f64(3.25)},
      {Type::char_(), Val::char_(U'\U0001F600')},
      {Type::string(), Val::string("h\xC3\xA9llo w\xC3\xB6rld")},
      {Type::list(Type::u8()), Val::bytes(raw)},
      {Type::list(Type::s32()), Val::list({Val::s32(-1), Val::s32(2)})},
      {Type::list(Type::string()), Val::list({Val::string("a"), Val::string(""), Val::string("ccc")})},
      {Type::list(Type::list(Type::u16())),
       Val::list({Val::list({Val::u16(1)}), Val::list({}), Val::list({Val::u16(2), Val::u16(3)})})},
      {Type::fixed_list(Type::u16(), 3), Val::list({Val::u16(1), Val::u16(2), Val::u16(3)})},
      {Type::fixed_list(Type::string(), 2), Val::list({Val::string("x"), Val::string("yz")})},
      {Type::record({{"a", Type::u8()}, {"b", Type::string()}, {"c", Type::option(Type::f64())}}),
       Val::record({Val::u8(9), Val::string("rec"), Val::some(Val::f64(-0.5))})},
      {Type::tuple({Type::u64(), Type::bool_(), Type::char_()}),
       Val::tuple({Val::u64(1ull << 40), Val::bool_(true), Val::char_(U'z')})},
      {rich, Val::variant(3, Val::list({Val::f32(1.0f), Val::f32(2.0f)}))},
      {rich, Val::variant(1, Val::string("bee"))},
      {rich, Val::variant(2)},
      {Type::variant(many), Val::variant(299, Val::string("last"))},
      {Type::enum_(labels(300)), Val::enum_(299)},
      {Type::option(Type::option(Type::u32())), Val::some(Val::none())},
      {Type::option(Type::option(Type::u32())), Val::some(Val::some(Val::u32(77)))},
      {Type::result(Type::string(), Type::u32()), Val::err(Val::u32(7))},
      {Type::result(Type::string(), Type::u32()), Val::ok(Val::string("yes"))},
      {Type::result(nullptr, nullptr), Val::err()},
      {Type::flags(labels(5)), Val::flags(0b10101)},
      {Type::flags(labels(12)), Val::flags(0x801)},
      {Type::flags(labels(32)), Val::flags(0x80000001u)},
      {Type::map(Type::string(), Type::list(Type::u8())),
       Val::map({Val::tuple({Val::string("k1"), Val::bytes(raw)}),
                 Val::tuple({Val::string("k2"), Val::bytes({})})})},
      {Type::own(res), Val::own(1)},
      {Type::borrow(res), Val::borrow(2)},
      {Type::stream(Type::u8()), Val::stream(3)},
      {Type::future(nullptr), Val::future(4)},
      {Type::error_context(), Val::error_context(5)},
      {Type::list(Type::record({{"k", Type::string()}, {"v", rich}})),
       Val::list({Val::record({Val::string("one"), Val::variant(0, Val::u8(1))}),
                  Val::record({Val::string("two"), Val::variant(1, Val::string("2"))})})},
  };
}

TEST(LiftLower, StoreThenLoadEveryKind) {
  for (AddrWidth w : {AddrWidth::I32, AddrWidth::I64}) {
    for (const Sample& s : samples()) {
      SCOPED_TRACE(s.type->to_wit() + (w == AddrWidth::I32 ? " (i32)" : " (i64)"));
      Rig rig(1024, 1, with_addr(w));
      const uint64_t ptr = rig.slot(s.type);
      rig.store(s.type, s.value, ptr);
      EXPECT_EQ(rig.load(s.type, ptr), s.value);
    }
  }
}

TEST(LiftLower, LowerFlatThenLiftFlatEveryKind) {
  for (AddrWidth w : {AddrWidth::I32, AddrWidth::I64}) {
    for (const Sample& s : samples()) {
      SCOPED_TRACE(s.type->to_wit() + (w == AddrWidth::I32 ? " (i32)" : " (i64)"));
      Rig rig(1024, 1, with_addr(w));
      const Flat flat = rig.lower(s.type, s.value);
      EXPECT_EQ(flat.size(), s.type->layout(w).flat_count);
      EXPECT_EQ(rig.lift(s.type, flat), s.value);
    }
  }
}

TEST(LiftLower, LoadThenStoreReproducesBytes) {
  // record { a: s16, b: u8, c: u64 } from known bytes, stored elsewhere.
  auto t = Type::record({{"a", Type::s16()}, {"b", Type::u8()}, {"c", Type::u64()}});
  Rig rig(64);
  const Bytes image = {0xFE, 0xFF, 0x7F, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0x88};
  rig.poke(0, image);
  const Val v = rig.load(t, 0);
  EXPECT_EQ(v, Val::record({Val::s16(-2), Val::u8(0x7F), Val::u64(0x8807060504030201ull)}));
  rig.store(t, v, 32);
  EXPECT_EQ(rig.bytes(32, 16), image);
}

// ---- exact bytes ------------------------------------------------------------

TEST(LiftLowerBytes, RecordU8U32) {
  // a @0, b @4 (3 padding bytes untouched), size 8.
  auto t = Type::record({{"a", Type::u8()}, {"b", Type::u32()}});
  Rig rig(32);
  rig.store(t, Val::record({Val::u8(0xAB), Val::u32(0x11223344)}), 8);
  EXPECT_EQ(rig.bytes(8, 8), (Bytes{0xAB, 0, 0, 0, 0x44, 0x33, 0x22, 0x11}));
  EXPECT_EQ(rig.bytes(16, 16), Bytes(16, 0));
  EXPECT_TRUE(rig.mem.allocations().empty());
  EXPECT_EQ(rig.lower(t, Val::record({Val::u8(0xAB), Val::u32(0x11223344)})),
            (Flat{0xAB, 0x11223344}));
}

TEST(LiftLowerBytes, OptionU64) {
  auto t = Type::option(Type::u64());
  Rig rig(64);
  rig.store(t, Val::some(Val::u64(0x0102030405060708ull)), 16);
  EXPECT_EQ(rig.bytes(16, 16),
            (Bytes{1, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1}));
  // none writes only the discriminant; the payload bytes keep their content.
  rig.store(t, Val::none(), 16);
  EXPECT_EQ(rig.bytes(16, 16),
            (Bytes{0, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(rig.load(t, 16), Val::none());
  EXPECT_EQ(rig.lower(t, Val::some(Val::u64(5))), (Flat{1, 5}));
  EXPECT_EQ(rig.lower(t, Val::none()), (Flat{0, 0}));
}

TEST(LiftLowerBytes, ResultErrString32) {
  // result<_, string>: disc @0, string (ptr, len) @4; "hi" allocated at the
  // heap base 64 by realloc(0, 0, 1, 2).
  auto t = Type::result(nullptr, Type::string());
  Rig rig(128, 64);
  rig.store(t, Val::err(Val::string("hi")), 16);
  EXPECT_EQ(rig.bytes(16, 12), (Bytes{1, 0, 0, 0, 64, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(rig.bytes(64, 2), (Bytes{'h', 'i'}));
  ASSERT_EQ(rig.mem.allocations().size(), 1u);
  EXPECT_EQ(rig.mem.allocations()[0], (HostMemory::Allocation{0, 0, 1, 2, 64}));
  EXPECT_EQ(rig.load(t, 16), Val::err(Val::string("hi")));
}

TEST(LiftLowerBytes, ResultErrString64) {
  // In a 64-bit memory the payload sits at 8 and ptr/len are 8 bytes each.
  auto t = Type::result(nullptr, Type::string());
  Rig rig(128, 64, with_addr(AddrWidth::I64));
  rig.store(t, Val::err(Val::string("hi")), 16);
  EXPECT_EQ(rig.bytes(16, 24), (Bytes{1, 0, 0, 0, 0, 0, 0, 0,     //
                                      64, 0, 0, 0, 0, 0, 0, 0,    //
                                      2, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(rig.load(t, 16), Val::err(Val::string("hi")));
  EXPECT_EQ(rig.lower(t, Val::err(Val::string("hi"))), (Flat{1, 66, 2}));
  EXPECT_EQ(rig.lower(t, Val::ok()), (Flat{0, 0, 0}));
}

TEST(LiftLowerBytes, SignedIntegersAndChar) {
  Rig rig(64);
  rig.store(Type::s8(), Val::s8(-2), 0);
  rig.store(Type::s16(), Val::s16(-2), 2);
  rig.store(Type::s32(), Val::s32(-2), 4);
  rig.store(Type::s64(), Val::s64(-2), 8);
  rig.store(Type::char_(), Val::char_(U'\U0001F600'), 16);
  EXPECT_EQ(rig.bytes(0, 20), (Bytes{0xFE, 0, 0xFE, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF,
                                     0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0x00, 0xF6, 0x01, 0x00}));
  EXPECT_EQ(rig.load(Type::s8(), 0), Val::s8(-2));
  EXPECT_EQ(rig.load(Type::u8(), 0), Val::u8(0xFE));
  EXPECT_EQ(rig.load(Type::s16(), 2), Val::s16(-2));
  EXPECT_EQ(rig.load(Type::u16(), 2), Val::u16(0xFFFE));
  EXPECT_EQ(rig.load(Type::s64(), 8), Val::s64(-2));
}

TEST(LiftLowerBytes, FixedListFlagsEnumMap) {
  Rig rig(64, 32);
  // Fixed list: inline, no allocation.
  rig.store(Type::fixed_list(Type::u16(), 3), Val::list({Val::u16(1), Val::u16(0x0203), Val::u16(4)}), 2);
  EXPECT_EQ(rig.bytes(2, 6), (Bytes{1, 0, 3, 2, 4, 0}));
  EXPECT_TRUE(rig.mem.allocations().empty());
  // flags with 9 labels are 2 bytes, with 17 labels 4 bytes.
  rig.store(Type::flags(labels(9)), Val::flags(0x101), 8);
  EXPECT_EQ(rig.bytes(8, 2), (Bytes{1, 1}));
  rig.store(Type::flags(labels(17)), Val::flags(0x10001), 12);
  EXPECT_EQ(rig.bytes(12, 4), (Bytes{1, 0, 1, 0}));
  // An enum of 300 cases has a 2-byte discriminant.
  rig.store(Type::enum_(labels(300)), Val::enum_(299), 16);
  EXPECT_EQ(rig.bytes(16, 2), (Bytes{0x2B, 0x01}));
  // map<string, u8>: one 12-byte entry buffer at 32, then "k" at 44.
  auto m = Type::map(Type::string(), Type::u8());
  rig.store(m, Val::map({Val::tuple({Val::string("k"), Val::u8(9)})}), 24);
  EXPECT_EQ(rig.bytes(24, 8), (Bytes{32, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(rig.bytes(32, 9), (Bytes{44, 0, 0, 0, 1, 0, 0, 0, 9}));
  EXPECT_EQ(rig.bytes(44, 1), (Bytes{'k'}));
  EXPECT_EQ(rig.mem.allocations(),
            (std::vector<HostMemory::Allocation>{{0, 0, 4, 12, 32}, {0, 0, 1, 1, 44}}));
}

TEST(LiftLowerBytes, FourByteDiscriminant) {
  // 65537 cases need a 4-byte discriminant; the last one carries a u8 at 4.
  std::vector<Case> cases;
  for (int i = 0; i < 65537; ++i) cases.push_back(Case{"c" + std::to_string(i), nullptr});
  cases.back().type = Type::u8();
  auto t = Type::variant(std::move(cases));
  Rig rig(64);
  const Val v = Val::variant(65536, Val::u8(0x77));
  rig.store(t, v, 8);
  EXPECT_EQ(rig.bytes(8, 8), (Bytes{0x00, 0x00, 0x01, 0x00, 0x77, 0, 0, 0}));
  EXPECT_EQ(rig.load(t, 8), v);
  rig.store(t, Val::variant(0x1234), 8);
  EXPECT_EQ(rig.bytes(8, 4), (Bytes{0x34, 0x12, 0x00, 0x00}));
  EXPECT_EQ(rig.lower(t, v), (Flat{65536, 0x77}));
  EXPECT_EQ(rig.lift(t, {65536, 0x77}), v);
}

TEST(LiftLowerBytes, ScalarFlatValues) {
  Rig rig;
  EXPECT_EQ(rig.lower(Type::s8(), Val::s8(-1)), (Flat{0xFFFFFFFF}));
  EXPECT_EQ(rig.lower(Type::s16(), Val::s16(-2)), (Flat{0xFFFFFFFE}));
  EXPECT_EQ(rig.lower(Type::s32(), Val::s32(INT32_MIN)), (Flat{0x80000000}));
  EXPECT_EQ(rig.lower(Type::s64(), Val::s64(-1)), (Flat{UINT64_MAX}));
  EXPECT_EQ(rig.lower(Type::u8(), Val::u8(255)), (Flat{255}));
  EXPECT_EQ(rig.lower(Type::char_(), Val::char_(U'€')), (Flat{0x20AC}));
  EXPECT_EQ(rig.lower(Type::f32(), Val::f32(1.0f)), (Flat{0x3F800000}));
  EXPECT_EQ(rig.lower(Type::f64(), Val::f64(-2.0)), (Flat{0xC000000000000000ull}));
  EXPECT_EQ(rig.lower(Type::bool_(), Val::bool_(true)), (Flat{1}));
  EXPECT_EQ(rig.lower(Type::flags(labels(3)), Val::flags(5)), (Flat{5}));
}

TEST(LiftLowerBytes, LiftFlatTruncatesToTheTypeWidth) {
  // lift_flat_unsigned / lift_flat_signed: i % 2^width, then the sign.
  Rig rig;
  EXPECT_EQ(rig.lift(Type::u8(), {0x1FF}), Val::u8(0xFF));
  EXPECT_EQ(rig.lift(Type::s8(), {0x80}), Val::s8(-128));
  EXPECT_EQ(rig.lift(Type::s8(), {0xFFFFFF7F}), Val::s8(127));
  EXPECT_EQ(rig.lift(Type::u16(), {0xFFFF1234}), Val::u16(0x1234));
  EXPECT_EQ(rig.lift(Type::s16(), {0x18000}), Val::s16(-32768));
  EXPECT_EQ(rig.lift(Type::s32(), {0xFFFFFFFF}), Val::s32(-1));
  EXPECT_EQ(rig.lift(Type::s64(), {UINT64_MAX}), Val::s64(-1));
  EXPECT_EQ(rig.lift(Type::bool_(), {0x80000000}), Val::bool_(true));
  // Flag bits above the last label are ignored.
  EXPECT_EQ(rig.lift(Type::flags(labels(3)), {0xFFFFFFFF}), Val::flags(7));
}

// ---- variants flattened with joined slots --------------------------------------

TEST(LiftLowerVariantFlat, F32AndI64Join) {
  // variant { a(f32), b(s64) } flattens to [i32, i64]; f32 is zero-extended
  // by its bit pattern into the i64 slot.
  auto t = variant2(Type::f32(), Type::s64());
  Rig rig;
  EXPECT_EQ(rig.lower(t, Val::variant(0, Val::f32(1.5f))), (Flat{0, 0x3FC00000}));
  EXPECT_EQ(rig.lower(t, Val::variant(0, Val::f32(-1.0f))), (Flat{0, 0xBF800000}));
  EXPECT_EQ(rig.lower(t, Val::variant(1, Val::s64(-2))), (Flat{1, 0xFFFFFFFFFFFFFFFEull}));
  EXPECT_EQ(rig.lift(t, {0, 0x3FC00000}), Val::variant(0, Val::f32(1.5f)));
  EXPECT_EQ(rig.lift(t, {1, 0xFFFFFFFFFFFFFFFEull}), Val::variant(1, Val::s64(-2)));
  // Lifting an f32 from an i64 slot wraps to the low 32 bits first.
  EXPECT_EQ(rig.lift(t, {0, 0x123456783F800000ull}), Val::variant(0, Val::f32(1.0f)));
}

TEST(LiftLowerVariantFlat, I32AndF32JoinToI32) {
  auto t = variant2(Type::s32(), Type::f32());
  Rig rig;
  EXPECT_EQ(rig.lower(t, Val::variant(1, Val::f32(1.0f))), (Flat{1, 0x3F800000}));
  EXPECT_EQ(rig.lower(t, Val::variant(0, Val::s32(-1))), (Flat{0, 0xFFFFFFFF}));
  EXPECT_EQ(rig.lift(t, {1, 0x40000000}), Val::variant(1, Val::f32(2.0f)));
}

TEST(LiftLowerVariantFlat, I32InI64SlotIsZeroExtended) {
  // lower_flat_signed(-1, 32) is 2^32-1, and ('i32', 'i64') keeps it as is.
  auto t = variant2(Type::s32(), Type::s64());
  Rig rig;
  EXPECT_EQ(rig.lower(t, Val::variant(0, Val::s32(-1))), (Flat{0, 0xFFFFFFFFull}));
  EXPECT_EQ(rig.lift(t, {0, 0xFFFFFFFFull}), Val::variant(0, Val::s32(-1)));
  // A bool in an i64 slot is wrapped to i32 before the nonzero test.
  auto b = variant2(Type::bool_(), Type::u64());
  EXPECT_EQ(rig.lift(b, {0, 0x100000000ull}), Val::variant(0, Val::bool_(false)));
  EXPECT_EQ(rig.lift(b, {0, 0x100000002ull}), Val::variant(0, Val::bool_(true)));
  auto u = variant2(Type::u8(), Type::u64());
  EXPECT_EQ(rig.lift(u, {0, 0xFFFFFFFF000000FFull}), Val::variant(0, Val::u8(0xFF)));
}

TEST(LiftLowerVariantFlat, F32AndF64JoinToI64) {
  auto t = variant2(Type::f32(), Type::f64());
  Rig rig;
  EXPECT_EQ(rig.lower(t, Val::variant(1, Val::f64(1.0))), (Flat{1, 0x3FF0000000000000ull}));
  EXPECT_EQ(rig.lower(t, Val::variant(0, Val::f32(-1.0f))), (Flat{0, 0xBF800000ull}));
  EXPECT_EQ(rig.lift(t, {1, 0x4000000000000000ull}), Val::variant(1, Val::f64(2.0)));
}

TEST(LiftLowerVariantFlat, UnusedSlotsAreZeroAndIgnored) {
  auto t = Type::variant({Case{"a", Type::u8()}, Case{"b", Type::tuple({Type::u64(), Type::u64()})},
                          Case{"c", nullptr}});
  Rig rig;
  EXPECT_EQ(rig.lower(t, Val::variant(0, Val::u8(5))), (Flat{0, 5, 0}));
  EXPECT_EQ(rig.lower(t, Val::variant(2)), (Flat{2, 0, 0}));
  EXPECT_EQ(rig.lower(t, Val::variant(1, Val::tuple({Val::u64(7), Val::u64(8)}))), (Flat{1, 7, 8}));
  EXPECT_EQ(rig.lift(t, {0, 7, 0xDEAD}), Val::variant(0, Val::u8(7)));
  EXPECT_EQ(rig.lift(t, {2, 0xAAAA, 0xBBBB}), Val::variant(2));
}

TEST(LiftLowerVariantFlat, StringInWideSlotsWraps) {
  // result<string, u64> in an i32 memory: [i32, i64, i32]. The string's
  // pointer shares the i64 slot and is wrapped to 32 bits on lift.
  auto t = Type::result(Type::string(), Type::u64());
  Rig rig(64, 40);
  rig.poke(16, {'o', 'k'});
  EXPECT_EQ(rig.lift(t, {0, 0xFFFFFFFF00000010ull, 2}), Val::ok(Val::string("ok")));
  EXPECT_EQ(rig.lower(t, Val::ok(Val::string("ab"))), (Flat{0, 40, 2}));
  EXPECT_EQ(rig.lower(t, Val::err(Val::u64(UINT64_MAX))), (Flat{1, UINT64_MAX, 0}));
}

// ---- memory that moves ------------------------------------------------------

TEST(LiftLowerMemory, ListOfStringsWhileMemoryMoves) {
  auto t = Type::list(Type::string());
  Rig rig(64, 8);
  rig.mem.set_growth_per_allocation(4096);
  const uint8_t* before = rig.mem.data().data();
  const Val v = Val::list({Val::string("alpha"), Val::string("beta"), Val::string("gamma")});
  rig.store(t, v, 0);
  // The memory grew on each of the four allocations and was reallocated.
  EXPECT_EQ(rig.mem.data().size(), 64u + 4 * 4096);
  EXPECT_NE(rig.mem.data().data(), before);
  // Buffer of three (ptr, len) pairs at 8, then the strings back to back.
  EXPECT_EQ(rig.mem.allocations(), (std::vector<HostMemory::Allocation>{
                                       {0, 0, 4, 24, 8},
                                       {0, 0, 1, 5, 32},
                                       {0, 0, 1, 4, 37},
                                       {0, 0, 1, 5, 41},
                                   }));
  EXPECT_EQ(rig.bytes(0, 8), (Bytes{8, 0, 0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(rig.bytes(8, 24), (Bytes{32, 0, 0, 0, 5, 0, 0, 0, 37, 0, 0, 0, 4, 0, 0, 0,
                                     41, 0, 0, 0, 5, 0, 0, 0}));
  const std::string text(rig.mem.data().begin() + 32, rig.mem.data().begin() + 46);
  EXPECT_EQ(text, "alphabetagamma");
  EXPECT_EQ(rig.load(t, 0), v);
}

TEST(LiftLowerMemory, RecordFieldsAfterAMovingAllocation) {
  // The u32 after the string is written after realloc moved memory.
  auto t = Type::record({{"s", Type::string()}, {"n", Type::u32()}, {"l", Type::list(Type::u16())}});
  Rig rig(32, 16);
  rig.mem.set_growth_per_allocation(1 << 16);
  const Val v = Val::record({Val::string("xyz"), Val::u32(0xCAFEBABE),
                             Val::list({Val::u16(1), Val::u16(2)})});
  const Flat flat = rig.lower(t, v);
  EXPECT_EQ(flat, (Flat{16, 3, 0xCAFEBABE, 20, 2}));
  EXPECT_EQ(rig.bytes(16, 8), (Bytes{'x', 'y', 'z', 0, 1, 0, 2, 0}));
  rig.store(t, v, 0);
  EXPECT_EQ(rig.bytes(8, 4), (Bytes{0xBE, 0xBA, 0xFE, 0xCA}));
  EXPECT_EQ(rig.load(t, 0), v);
}

// ---- packed lists ---------------------------------------------------------------

// Stores `a` and `b` as list<elem> into two fresh memories and requires the
// same memory bytes and realloc calls.
void expect_same_store(const TypeRef& list_type, const Val& a, const Val& b) {
  Rig ra(128, 8), rb(128, 8);
  ra.store(list_type, a, 0);
  rb.store(list_type, b, 0);
  EXPECT_EQ(ra.mem.data(), rb.mem.data()) << list_type->to_wit();
  EXPECT_EQ(ra.mem.allocations(), rb.mem.allocations()) << list_type->to_wit();
  Rig fa(128, 8), fb(128, 8);
  EXPECT_EQ(fa.lower(list_type, a), fb.lower(list_type, b)) << list_type->to_wit();
  EXPECT_EQ(fa.mem.data(), fb.mem.data()) << list_type->to_wit();
}

template <typename T>
void expect_packed_matches_unpacked(ValKind kind, const TypeRef& elem, std::vector<T> values,
                                    Val (*make)(T)) {
  std::vector<Val> items;
  for (T x : values) items.push_back(make(x));
  const Val packed = Val::packed_list(kind, values.data(), values.size());
  expect_same_store(Type::list(elem), packed, Val::list(items));
  expect_same_store(Type::fixed_list(elem, static_cast<uint32_t>(values.size())), packed,
                    Val::list(items));
}

TEST(LiftLowerPacked, BulkPathMatchesElementPath) {
  expect_packed_matches_unpacked<uint8_t>(ValKind::U8, Type::u8(), {1, 2, 255}, &Val::u8);
  expect_packed_matches_unpacked<int8_t>(ValKind::S8, Type::s8(), {-1, 0, 127}, &Val::s8);
  expect_packed_matches_unpacked<uint16_t>(ValKind::U16, Type::u16(), {1, 0xBEEF}, &Val::u16);
  expect_packed_matches_unpacked<int16_t>(ValKind::S16, Type::s16(), {-300, 2}, &Val::s16);
  expect_packed_matches_unpacked<uint32_t>(ValKind::U32, Type::u32(), {7, 0xFFFFFFFF}, &Val::u32);
  expect_packed_matches_unpacked<int32_t>(ValKind::S32, Type::s32(), {-7, 1 << 30}, &Val::s32);
  expect_packed_matches_unpacked<uint64_t>(ValKind::U64, Type::u64(), {1, UINT64_MAX}, &Val::u64);
  expect_packed_matches_unpacked<int64_t>(ValKind::S64, Type::s64(), {INT64_MIN, 3}, &Val::s64);
  expect_packed_matches_unpacked<float>(ValKind::F32, Type::f32(), {1.5f, -0.0f}, &Val::f32);
  expect_packed_matches_unpacked<double>(ValKind::F64, Type::f64(), {2.5, -1e300}, &Val::f64);
}

TEST(LiftLowerPacked, ExactBytesOfAPackedList) {
  const uint16_t data[] = {1, 0x0203, 0xFFFF};
  Rig rig(64, 9);
  rig.store(Type::list(Type::u16()), Val::packed_list(ValKind::U16, data, 3), 0);
  // realloc(0, 0, 2, 6) from heap base 9 returns 10.
  EXPECT_EQ(rig.mem.allocations(), (std::vector<HostMemory::Allocation>{{0, 0, 2, 6, 10}}));
  EXPECT_EQ(rig.bytes(0, 8), (Bytes{10, 0, 0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(rig.bytes(10, 6), (Bytes{1, 0, 3, 2, 0xFF, 0xFF}));
  const Val loaded = rig.load(Type::list(Type::u16()), 0);
  EXPECT_TRUE(loaded.is_packed());
  EXPECT_EQ(loaded, Val::list({Val::u16(1), Val::u16(0x0203), Val::u16(0xFFFF)}));
}

// Record fields take the lifter's short paths: inline text and number lists
// copied without memcpy calls. Every length around the inline limits.
TEST(LiftLowerPacked, ShortTextAndSmallListsInRecordsAtEveryLength) {
  const TypeRef record = Type::record({{"text", Type::string()}, {"bytes", Type::list(Type::u8())},
                                       {"halves", Type::list(Type::u16())}});
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (size_t n = 0; n <= Val::kMaxInlineText + 2; ++n) {
    std::vector<uint8_t> bytes;
    std::vector<uint16_t> halves;
    for (size_t i = 0; i < n % 11; ++i) bytes.push_back(static_cast<uint8_t>(0xF0 + i));
    for (size_t i = 0; i < n % 6; ++i) halves.push_back(static_cast<uint16_t>(0x1234 * (i + 1)));
    const Val value = Val::record({Val::string(alphabet.substr(0, n)), Val::bytes(bytes),
                                   Val::packed_list(ValKind::U16, halves.data(), halves.size())});
    Rig rig(512, 64);
    rig.store(record, value, 0);
    const Val loaded = rig.load(record, 0);
    EXPECT_EQ(loaded, value) << n;
    EXPECT_EQ(loaded.items()[0].as_string(), alphabet.substr(0, n));
    EXPECT_TRUE(std::ranges::equal(loaded.items()[1].packed_bytes(), bytes)) << n;
    EXPECT_EQ(loaded.items()[2].list_size(), halves.size());
  }
}

TEST(LiftLowerPacked, PackedListOfAnotherKindIsInvalid) {
  const uint16_t data[] = {1};
  Rig rig;
  expect_error(ErrorKind::InvalidValue, [&] {
    rig.store(Type::list(Type::u8()), Val::packed_list(ValKind::U16, data, 1), 0);
  });
  expect_error(ErrorKind::InvalidValue, [&] {
    rig.lower(Type::list(Type::s16()), Val::packed_list(ValKind::U16, data, 1));
  });
  expect_error(ErrorKind::InvalidValue, [&] {
    rig.lower(Type::list(Type::bool_()), Val::packed_list(ValKind::U8, data, 1));
  });
  expect_error(ErrorKind::InvalidValue, [&] {
    rig.lower(Type::fixed_list(Type::u8(), 1), Val::packed_list(ValKind::U16, data, 1));
  });
}

// ---- NaN canonicalisation ---------------------------------------------------------

constexpr uint32_t kSignallingNan32 = 0x7FA00001;
constexpr uint32_t kNegativeNan32 = 0xFFC00123;
constexpr uint64_t kOddNan64 = 0xFFF0000000000001ull;
constexpr uint32_t kCanonNan32 = 0x7FC00000;
constexpr uint64_t kCanonNan64 = 0x7FF8000000000000ull;

TEST(LiftLowerNan, CanonicalisedByDefault) {
  Rig rig(64);
  rig.store(Type::f32(), f32_bits(kSignallingNan32), 0);
  rig.store(Type::f64(), f64_bits(kOddNan64), 8);
  EXPECT_EQ(rig.bytes(0, 4), (Bytes{0x00, 0x00, 0xC0, 0x7F}));
  EXPECT_EQ(rig.bytes(8, 8), (Bytes{0, 0, 0, 0, 0, 0, 0xF8, 0x7F}));
  rig.poke(16, {0x23, 0x01, 0xC0, 0xFF});
  EXPECT_EQ(rig.load(Type::f32(), 16).scalar_bits(), kCanonNan32);
  EXPECT_EQ(rig.lower(Type::f32(), f32_bits(kNegativeNan32)), (Flat{kCanonNan32}));
  EXPECT_EQ(rig.lower(Type::f64(), f64_bits(kOddNan64)), (Flat{kCanonNan64}));
  EXPECT_EQ(rig.lift(Type::f32(), {kSignallingNan32}).scalar_bits(), kCanonNan32);
  EXPECT_EQ(rig.lift(Type::f64(), {kOddNan64}).scalar_bits(), kCanonNan64);
  // Through a joined variant slot as well.
  auto v = variant2(Type::f32(), Type::u64());
  EXPECT_EQ(rig.lower(v, Val::variant(0, f32_bits(kNegativeNan32))), (Flat{0, kCanonNan32}));
  // Infinity is not a NaN and is left alone.
  EXPECT_EQ(rig.lower(Type::f32(), f32_bits(0x7F800000)), (Flat{0x7F800000}));
}

TEST(LiftLowerNan, PackedListsCanonicalisedByDefault) {
  const uint32_t in[] = {kSignallingNan32, 0x3F800000, kNegativeNan32};
  Rig rig(64, 8);
  rig.store(Type::list(Type::f32()), Val::packed_list(ValKind::F32, in, 3), 0);
  EXPECT_EQ(rig.bytes(8, 12), (Bytes{0, 0, 0xC0, 0x7F, 0, 0, 0x80, 0x3F, 0, 0, 0xC0, 0x7F}));
  // Loading canonicalises too, whatever the memory holds.
  rig.poke(8, {0x01, 0x00, 0xA0, 0x7F});
  const Val loaded = rig.load(Type::list(Type::f32()), 0);
  EXPECT_EQ(loaded.list_element(0).scalar_bits(), kCanonNan32);
  EXPECT_EQ(loaded.list_element(1).as_f32(), 1.0f);
  // The same for f64 elements.
  rig.poke(40, {1, 0, 0, 0, 0, 0, 0xF0, 0xFF});
  rig.poke(32, {40, 0, 0, 0, 1, 0, 0, 0});
  EXPECT_EQ(rig.load(Type::list(Type::f64()), 32).list_element(0).scalar_bits(), kCanonNan64);
  EXPECT_EQ(rig.load(Type::fixed_list(Type::f64(), 1), 40).list_element(0).scalar_bits(), kCanonNan64);
  // The caller's value is not modified.
  Val value = Val::packed_list(ValKind::F32, in, 3);
  rig.store(Type::list(Type::f32()), value, 0);
  EXPECT_EQ(value.list_element(0).scalar_bits(), kSignallingNan32);
}

TEST(LiftLowerNan, SmallPackedListsInRecordsCanonicalisedUnlessOff) {
  const TypeRef record = Type::record({{"pair", Type::list(Type::f32())}, {"one", Type::list(Type::f64())}});
  const uint32_t pair[] = {kSignallingNan32, 0x3F800000};
  const uint64_t one[] = {kOddNan64};
  const Val value = Val::record({Val::packed_list(ValKind::F32, pair, 2), Val::packed_list(ValKind::F64, one, 1)});
  Rig off(256, 64, nan_off());
  off.store(record, value, 0);
  const Val kept = off.load(record, 0);
  EXPECT_EQ(kept.items()[0].list_element(0).scalar_bits(), kSignallingNan32);
  EXPECT_EQ(kept.items()[1].list_element(0).scalar_bits(), kOddNan64);
  // The same bytes loaded with the default options.
  AbiContext c(&off.mem, CanonOptions{}, nullptr);
  const Val canonical = ValueAbi(record, AddrWidth::I32).load(c, 0);
  EXPECT_EQ(canonical.items()[0].list_element(0).scalar_bits(), kCanonNan32);
  EXPECT_EQ(canonical.items()[0].list_element(1).as_f32(), 1.0f);
  EXPECT_EQ(canonical.items()[1].list_element(0).scalar_bits(), kCanonNan64);
}

TEST(LiftLowerNan, BitsPassThroughWhenOff) {
  Rig rig(64, 32, nan_off());
  rig.store(Type::f32(), f32_bits(kSignallingNan32), 0);
  rig.store(Type::f64(), f64_bits(kOddNan64), 8);
  EXPECT_EQ(rig.bytes(0, 4), (Bytes{0x01, 0x00, 0xA0, 0x7F}));
  EXPECT_EQ(rig.bytes(8, 8), (Bytes{1, 0, 0, 0, 0, 0, 0xF0, 0xFF}));
  EXPECT_EQ(rig.load(Type::f32(), 0).scalar_bits(), kSignallingNan32);
  EXPECT_EQ(rig.load(Type::f64(), 8).scalar_bits(), kOddNan64);
  EXPECT_EQ(rig.lower(Type::f32(), f32_bits(kNegativeNan32)), (Flat{kNegativeNan32}));
  EXPECT_EQ(rig.lift(Type::f64(), {kOddNan64}).scalar_bits(), kOddNan64);
  const uint64_t in[] = {kOddNan64};
  rig.store(Type::list(Type::f64()), Val::packed_list(ValKind::F64, in, 1), 16);
  EXPECT_EQ(rig.bytes(32, 8), (Bytes{1, 0, 0, 0, 0, 0, 0xF0, 0xFF}));
  EXPECT_EQ(rig.load(Type::list(Type::f64()), 16).list_element(0).scalar_bits(), kOddNan64);
}

// ---- bools ------------------------------------------------------------------------------

TEST(LiftLowerBool, AnyNonzeroBitsStoreAsOne) {
  Rig rig(16);
  for (uint64_t bits : {uint64_t{1}, uint64_t{2}, uint64_t{0x100}, uint64_t{1} << 63}) {
    const Val b = Val::from_bits(ValKind::Bool, bits);
    rig.store(Type::bool_(), b, 3);
    EXPECT_EQ(rig.bytes(3, 1), Bytes{1}) << bits;
    EXPECT_EQ(rig.lower(Type::bool_(), b), Flat{1}) << bits;
  }
  rig.store(Type::bool_(), Val::bool_(false), 3);
  EXPECT_EQ(rig.bytes(3, 1), Bytes{0});
  for (uint8_t byte : {1, 2, 7, 0x80, 0xFF}) {
    rig.poke(4, {byte});
    EXPECT_EQ(rig.load(Type::bool_(), 4), Val::bool_(true)) << int(byte);
  }
  EXPECT_EQ(rig.lift(Type::bool_(), {2}), Val::bool_(true));
}

// ---- handles ----------------------------------------------------------------------------

TEST(LiftLowerHandles, PassThroughWithoutHooks) {
  auto res = std::make_shared<ResourceType>(ResourceType{"r"});
  Rig rig(32);
  rig.store(Type::own(res), Val::own(0x12345678), 4);
  EXPECT_EQ(rig.bytes(4, 4), (Bytes{0x78, 0x56, 0x34, 0x12}));
  EXPECT_EQ(rig.load(Type::own(res), 4), Val::own(0x12345678));
  EXPECT_EQ(rig.lower(Type::borrow(res), Val::borrow(9)), Flat{9});
  EXPECT_EQ(rig.lift(Type::future(nullptr), {11}), Val::future(11));
}

class OffsetHooks : public HandleHooks {
 public:
  uint32_t lift_handle(const Type& type, uint32_t index) override {
    lifted.push_back(type.kind());
    return index + 1000;
  }
  uint32_t lower_handle(const Type& type, uint32_t index) override {
    lowered.push_back(type.kind());
    return index + 100;
  }
  std::vector<TypeKind> lifted, lowered;
};

TEST(LiftLowerHandles, MappedByHooks) {
  auto res = std::make_shared<ResourceType>(ResourceType{"r"});
  auto t = Type::record({{"o", Type::own(res)},
                         {"n", Type::u32()},
                         {"b", Type::borrow(res)},
                         {"s", Type::stream(Type::u8())},
                         {"e", Type::error_context()}});
  OffsetHooks hooks;
  Rig rig(64);
  rig.hooks = &hooks;
  const Val v = Val::record({Val::own(1), Val::u32(2), Val::borrow(3), Val::stream(4),
                             Val::error_context(5)});
  rig.store(t, v, 0);
  // Handles are mapped (+100); the plain u32 is not.
  EXPECT_EQ(rig.bytes(0, 20), (Bytes{101, 0, 0, 0, 2, 0, 0, 0, 103, 0, 0, 0, 104, 0, 0, 0,
                                     105, 0, 0, 0}));
  EXPECT_EQ(hooks.lowered, (std::vector<TypeKind>{TypeKind::Own, TypeKind::Borrow,
                                                  TypeKind::Stream, TypeKind::ErrorContext}));
  EXPECT_EQ(rig.load(t, 0), Val::record({Val::own(1101), Val::u32(2), Val::borrow(1103),
                                         Val::stream(1104), Val::error_context(1105)}));
  EXPECT_EQ(hooks.lifted.size(), 4u);
  EXPECT_EQ(rig.lower(t, v), (Flat{101, 2, 103, 104, 105}));
  EXPECT_EQ(rig.lift(t, {1, 2, 3, 4, 5}),
            Val::record({Val::own(1001), Val::u32(2), Val::borrow(1003), Val::stream(1004),
                         Val::error_context(1005)}));
}

// ---- values that do not match their type ------------------------------------------

TEST(LiftLowerInvalid, WrongKindIsInvalidValueNotTrap) {
  auto res = std::make_shared<ResourceType>(ResourceType{"r"});
  struct Row {
    TypeRef type;
    Val value;
  };
  const std::vector<Row> rows = {
      {Type::u8(), Val::u32(1)},
      {Type::s32(), Val::u32(1)},
      {Type::string(), Val::bytes({})},
      {Type::list(Type::u8()), Val::string("x")},
      {Type::map(Type::string(), Type::u8()), Val::list({})},
      {Type::record({{"a", Type::u8()}, {"b", Type::u8()}}), Val::record({Val::u8(1)})},
      {Type::record({{"a", Type::u8()}}), Val::tuple({Val::u8(1)})},
      {Type::record({{"a", Type::u8()}}), Val::record({Val::u16(1)})},
      {Type::tuple({Type::u8()}), Val::tuple({Val::u8(1), Val::u8(2)})},
      {Type::variant({Case{"a", nullptr}}), Val::variant(1)},
      {Type::variant({Case{"a", Type::u8()}}), Val::variant(0)},
      {Type::variant({Case{"a", nullptr}}), Val::variant(0, Val::u8(1))},
      {Type::option(Type::u8()), Val::variant(1, Val::u8(1))},
      {Type::option(Type::u8()), Val::some(Val::s8(1))},
      {Type::option(Type::u8()), Val::compound(ValKind::Option, 1, {})},
      {Type::result(nullptr, nullptr), Val::ok(Val::u8(1))},
      {Type::enum_({"a", "b"}), Val::enum_(2)},
      {Type::flags(labels(3)), Val::flags(8)},
      {Type::char_(), Val::from_bits(ValKind::Char, 0xD800)},
      {Type::char_(), Val::from_bits(ValKind::Char, 0x110000)},
      {Type::fixed_list(Type::u8(), 2), Val::list({Val::u8(1)})},
      {Type::fixed_list(Type::u8(), 2), Val::bytes(std::vector<uint8_t>{1, 2, 3})},
      {Type::own(res), Val::borrow(1)},
      {Type::list(Type::string()), Val::list({Val::string("ok"), Val::u8(1)})},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.type->to_wit());
    Rig rig(64, 16);
    expect_error(ErrorKind::InvalidValue, [&] { rig.store(row.type, row.value, 0); });
    expect_error(ErrorKind::InvalidValue, [&] { rig.lower(row.type, row.value); });
  }
}

TEST(LiftLowerInvalid, MisuseIsUsageError) {
  Rig rig;
  // Wrong number of core values.
  expect_error(ErrorKind::Usage, [&] { rig.lift(Type::u32(), {1, 2}); });
  // Types only passed through memory have no flat form.
  expect_error(ErrorKind::Usage,
               [&] { rig.lower(Type::fixed_list(Type::u8(), 300), Val::list({})); });
  // A string needs a memory.
  ValueAbi abi(Type::string(), AddrWidth::I32);
  AbiContext no_memory(nullptr, CanonOptions{});
  Flat out;
  expect_error(ErrorKind::Usage, [&] { abi.lower_flat(no_memory, Val::string("x"), out); });
  // A program compiled for the other address width.
  ValueAbi abi64(Type::u8(), AddrWidth::I64);
  AbiContext c = rig.cx();
  expect_error(ErrorKind::Usage, [&] { abi64.load(c, 0); });
}

}  // namespace
}  // namespace cmhost::abi
