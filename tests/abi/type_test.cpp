// Layout of value types: size, alignment, field offsets, discriminants and
// flattening, each derived by hand from definitions.py (alignment, elem_size,
// discriminant_type, flatten_type, flatten_variant, join).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

constexpr CoreType I32 = CoreType::I32;
constexpr CoreType I64 = CoreType::I64;
constexpr CoreType F32 = CoreType::F32;
constexpr CoreType F64 = CoreType::F64;

const Layout& L32(const TypeRef& t) { return t->layout(AddrWidth::I32); }
const Layout& L64(const TypeRef& t) { return t->layout(AddrWidth::I64); }

std::vector<std::string> labels(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("l" + std::to_string(i));
  return out;
}

TypeRef enum_of(size_t n) { return Type::enum_(labels(n)); }

TypeRef variant2(TypeRef a, TypeRef b) {
  return Type::variant({Case{"a", std::move(a)}, Case{"b", std::move(b)}});
}

template <typename F>
void expect_validate_error(F&& make, const std::string& needle = "") {
  try {
    make();
    ADD_FAILURE() << "expected a validation error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validate) << e.what();
    if (!needle.empty()) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

struct PrimCase {
  TypeRef type;
  uint32_t size;
  CoreType flat;
};

TEST(TypeLayout, Primitives) {
  const std::vector<PrimCase> cases = {
      {Type::bool_(), 1, I32}, {Type::s8(), 1, I32},  {Type::u8(), 1, I32},
      {Type::s16(), 2, I32},   {Type::u16(), 2, I32}, {Type::s32(), 4, I32},
      {Type::u32(), 4, I32},   {Type::s64(), 8, I64}, {Type::u64(), 8, I64},
      {Type::f32(), 4, F32},   {Type::f64(), 8, F64}, {Type::char_(), 4, I32},
      {Type::error_context(), 4, I32},
  };
  for (const auto& c : cases) {
    for (AddrWidth w : {AddrWidth::I32, AddrWidth::I64}) {
      const Layout& l = c.type->layout(w);
      SCOPED_TRACE(c.type->to_wit());
      EXPECT_EQ(l.size, c.size);
      EXPECT_EQ(l.align, c.size);
      EXPECT_EQ(l.flat_count, 1u);
      EXPECT_EQ(l.flat, std::vector<CoreType>{c.flat});
    }
  }
}

TEST(TypeLayout, HandlesAreFourByteI32) {
  auto res = std::make_shared<ResourceType>(ResourceType{"file"});
  for (const TypeRef& t : {Type::own(res), Type::borrow(res), Type::stream(Type::u8()),
                           Type::stream(nullptr), Type::future(Type::string()),
                           Type::future(nullptr)}) {
    for (AddrWidth w : {AddrWidth::I32, AddrWidth::I64}) {
      EXPECT_EQ(t->layout(w).size, 4u) << t->to_wit();
      EXPECT_EQ(t->layout(w).align, 4u) << t->to_wit();
      EXPECT_EQ(t->layout(w).flat, std::vector<CoreType>{I32}) << t->to_wit();
    }
    EXPECT_TRUE(t->is_handle());
  }
}

TEST(TypeLayout, StringAndListDependOnMemoryWidth) {
  for (const TypeRef& t : {Type::string(), Type::list(Type::u8()), Type::list(Type::string()),
                           Type::map(Type::string(), Type::u64())}) {
    SCOPED_TRACE(t->to_wit());
    EXPECT_EQ(L32(t).size, 8u);
    EXPECT_EQ(L32(t).align, 4u);
    EXPECT_EQ(L32(t).flat, (std::vector<CoreType>{I32, I32}));
    EXPECT_EQ(L64(t).size, 16u);
    EXPECT_EQ(L64(t).align, 8u);
    EXPECT_EQ(L64(t).flat, (std::vector<CoreType>{I64, I64}));
  }
}

TEST(TypeLayout, RecordOffsetsAndPadding) {
  // a: u8 @0, b: u32 @4, c: u16 @8, d: u64 @16; size 24 (align 8).
  auto t = Type::record({{"a", Type::u8()}, {"b", Type::u32()}, {"c", Type::u16()},
                         {"d", Type::u64()}});
  EXPECT_EQ(L32(t).offsets, (std::vector<uint32_t>{0, 4, 8, 16}));
  EXPECT_EQ(L32(t).size, 24u);
  EXPECT_EQ(L32(t).align, 8u);
  EXPECT_EQ(L32(t).flat, (std::vector<CoreType>{I32, I32, I32, I64}));

  // Trailing padding: { a: u32, b: u8 } is 5 bytes rounded up to 8.
  auto tail = Type::record({{"a", Type::u32()}, {"b", Type::u8()}});
  EXPECT_EQ(L32(tail).offsets, (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(L32(tail).size, 8u);

  // All bytes: no padding at all.
  auto bytes = Type::record({{"a", Type::u8()}, {"b", Type::bool_()}, {"c", Type::s8()}});
  EXPECT_EQ(L32(bytes).offsets, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(L32(bytes).size, 3u);
  EXPECT_EQ(L32(bytes).align, 1u);
}

TEST(TypeLayout, TupleWithStringIn32And64BitMemories) {
  auto t = Type::tuple({Type::u8(), Type::string(), Type::u16()});
  // i32: u8 @0, string @4 (8 bytes), u16 @12; size 14 -> 16.
  EXPECT_EQ(L32(t).offsets, (std::vector<uint32_t>{0, 4, 12}));
  EXPECT_EQ(L32(t).size, 16u);
  EXPECT_EQ(L32(t).align, 4u);
  EXPECT_EQ(L32(t).flat, (std::vector<CoreType>{I32, I32, I32, I32}));
  // i64: u8 @0, string @8 (16 bytes), u16 @24; size 26 -> 32.
  EXPECT_EQ(L64(t).offsets, (std::vector<uint32_t>{0, 8, 24}));
  EXPECT_EQ(L64(t).size, 32u);
  EXPECT_EQ(L64(t).align, 8u);
  EXPECT_EQ(L64(t).flat, (std::vector<CoreType>{I32, I64, I64, I32}));
  // Tuple fields are named by position.
  ASSERT_EQ(t->fields().size(), 3u);
  EXPECT_EQ(t->fields()[1].name, "1");
  EXPECT_TRUE(t->is_record_like());
}

TEST(TypeLayout, NestedRecordAlignment) {
  // inner { x: u16, y: u8 } is size 4 align 2; outer { a: u8, b: inner, c: u8 }:
  // a @0, b @2, c @6, size 7 -> 8.
  auto inner = Type::record({{"x", Type::u16()}, {"y", Type::u8()}});
  auto outer = Type::record({{"a", Type::u8()}, {"b", inner}, {"c", Type::u8()}});
  EXPECT_EQ(L32(inner).size, 4u);
  EXPECT_EQ(L32(outer).offsets, (std::vector<uint32_t>{0, 2, 6}));
  EXPECT_EQ(L32(outer).size, 8u);
  EXPECT_EQ(L32(outer).align, 2u);
  EXPECT_EQ(L32(outer).flat_count, 4u);
}

TEST(TypeLayout, VariantPayloadOffset) {
  // variant { a(u8), b(u64) }: 1-byte discriminant, payload aligned to 8.
  auto v = variant2(Type::u8(), Type::u64());
  EXPECT_EQ(L32(v).discriminant_size, 1);
  EXPECT_EQ(L32(v).payload_offset, 8u);
  EXPECT_EQ(L32(v).size, 16u);
  EXPECT_EQ(L32(v).align, 8u);

  // option<u16>: disc @0, payload @2, size 4, align 2.
  auto o = Type::option(Type::u16());
  EXPECT_EQ(L32(o).payload_offset, 2u);
  EXPECT_EQ(L32(o).size, 4u);
  EXPECT_EQ(L32(o).align, 2u);

  // option<u8>: no padding at all.
  auto ob = Type::option(Type::u8());
  EXPECT_EQ(L32(ob).payload_offset, 1u);
  EXPECT_EQ(L32(ob).size, 2u);
  EXPECT_EQ(L32(ob).align, 1u);

  // result<_, string>: the payload is a string pointer pair.
  auto r = Type::result(nullptr, Type::string());
  EXPECT_EQ(L32(r).payload_offset, 4u);
  EXPECT_EQ(L32(r).size, 12u);
  EXPECT_EQ(L32(r).align, 4u);
  EXPECT_EQ(L64(r).payload_offset, 8u);
  EXPECT_EQ(L64(r).size, 24u);
  EXPECT_EQ(L64(r).align, 8u);

  // A result with no payloads at all is just the discriminant.
  auto bare = Type::result(nullptr, nullptr);
  EXPECT_EQ(L32(bare).size, 1u);
  EXPECT_EQ(L32(bare).align, 1u);
  EXPECT_EQ(L32(bare).flat, std::vector<CoreType>{I32});
}

TEST(TypeLayout, DiscriminantSizeBoundaries) {
  // discriminant_type: ceil(log2(n)/8) bytes, 1 for n <= 256, 2 up to 65536.
  struct Row {
    size_t cases;
    uint8_t disc;
  };
  for (Row row : {Row{1, 1}, Row{2, 1}, Row{256, 1}, Row{257, 2}, Row{65536, 2}, Row{65537, 4}}) {
    auto e = enum_of(row.cases);
    SCOPED_TRACE(row.cases);
    EXPECT_EQ(L32(e).discriminant_size, row.disc);
    EXPECT_EQ(L32(e).size, row.disc);
    EXPECT_EQ(L32(e).align, row.disc);
    EXPECT_EQ(L32(e).payload_offset, row.disc);
    EXPECT_EQ(L32(e).flat, std::vector<CoreType>{I32});
  }
}

TEST(TypeLayout, TwoByteDiscriminantWithPayload) {
  // 300 cases, the last with a u8 payload: disc 2 bytes, payload @2, size 3 -> 4.
  std::vector<Case> cases;
  for (int i = 0; i < 300; ++i) cases.push_back(Case{"c" + std::to_string(i), nullptr});
  cases.back().type = Type::u8();
  auto v = Type::variant(cases);
  EXPECT_EQ(L32(v).discriminant_size, 2);
  EXPECT_EQ(L32(v).payload_offset, 2u);
  EXPECT_EQ(L32(v).size, 4u);
  EXPECT_EQ(L32(v).align, 2u);

  // Same with a u64 payload: the payload alignment wins.
  cases.back().type = Type::u64();
  auto w = Type::variant(cases);
  EXPECT_EQ(L32(w).payload_offset, 8u);
  EXPECT_EQ(L32(w).size, 16u);
  EXPECT_EQ(L32(w).align, 8u);
}

TEST(TypeLayout, VariantFlatJoins) {
  struct Row {
    TypeRef type;
    std::vector<CoreType> flat;
  };
  const std::vector<Row> rows = {
      {variant2(Type::s32(), Type::f32()), {I32, I32}},
      {variant2(Type::f32(), Type::u32()), {I32, I32}},
      {variant2(Type::s32(), Type::s64()), {I32, I64}},
      {variant2(Type::f32(), Type::f64()), {I32, I64}},
      {variant2(Type::f64(), Type::u64()), {I32, I64}},
      {variant2(Type::f32(), Type::u64()), {I32, I64}},
      {variant2(Type::f32(), Type::f32()), {I32, F32}},
      {variant2(Type::f64(), Type::f64()), {I32, F64}},
      {Type::option(Type::f32()), {I32, F32}},
      {Type::option(Type::f64()), {I32, F64}},
      {Type::result(Type::u32(), Type::f32()), {I32, I32}},
      // string (i32, i32) against u64: slot 1 joins to i64, slot 2 stays i32.
      {Type::result(Type::string(), Type::u64()), {I32, I64, I32}},
      // Slot by slot: (f32,u8) / (u8) / (f64,f32,f32) -> i64, i32, f32.
      {Type::variant({Case{"a", Type::tuple({Type::f32(), Type::u8()})},
                      Case{"b", Type::tuple({Type::u8()})},
                      Case{"n", nullptr},
                      Case{"c", Type::tuple({Type::f64(), Type::f32(), Type::f32()})}}),
       {I32, I64, I32, F32}},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(L32(row.type).flat, row.flat) << row.type->to_wit();
    EXPECT_EQ(L32(row.type).flat_count, row.flat.size()) << row.type->to_wit();
  }
  // In a 64-bit memory the string's slots are i64 already.
  EXPECT_EQ(L64(Type::result(Type::string(), Type::f32())).flat,
            (std::vector<CoreType>{I32, I64, I64}));
}

TEST(TypeLayout, FixedLengthLists) {
  auto a = Type::fixed_list(Type::u16(), 4);
  EXPECT_EQ(L32(a).size, 8u);
  EXPECT_EQ(L32(a).align, 2u);
  EXPECT_EQ(L32(a).flat, (std::vector<CoreType>(4, I32)));
  EXPECT_TRUE(a->is_list_like());
  EXPECT_EQ(a->fixed_length(), 4u);

  // Element size includes its padding: record { a: u8, b: u16 } is 4 bytes.
  auto b = Type::fixed_list(Type::record({{"a", Type::u8()}, {"b", Type::u16()}}), 3);
  EXPECT_EQ(L32(b).size, 12u);
  EXPECT_EQ(L32(b).align, 2u);
  EXPECT_EQ(L32(b).flat_count, 6u);

  auto c = Type::fixed_list(Type::string(), 2);
  EXPECT_EQ(L32(c).size, 16u);
  EXPECT_EQ(L64(c).size, 32u);
  EXPECT_EQ(L64(c).align, 8u);
  EXPECT_EQ(L64(c).flat, (std::vector<CoreType>(4, I64)));

  // Inside a record a fixed list is laid out inline.
  auto r = Type::record({{"x", Type::u8()}, {"y", Type::fixed_list(Type::u32(), 2)}});
  EXPECT_EQ(L32(r).offsets, (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(L32(r).size, 12u);
}

TEST(TypeLayout, FlagsSizes) {
  struct Row {
    size_t labels;
    uint32_t size;
  };
  for (Row row : {Row{1, 1}, Row{8, 1}, Row{9, 2}, Row{16, 2}, Row{17, 4}, Row{32, 4}}) {
    auto f = Type::flags(labels(row.labels));
    EXPECT_EQ(L32(f).size, row.size) << row.labels;
    EXPECT_EQ(L32(f).align, row.size) << row.labels;
    EXPECT_EQ(L32(f).flat, std::vector<CoreType>{I32}) << row.labels;
  }
  expect_validate_error([] { Type::flags(labels(33)); }, "33");
  expect_validate_error([] { Type::flags({}); });
}

TEST(TypeLayout, MapDespecializesToListOfTuples) {
  auto m = Type::map(Type::string(), Type::u32());
  EXPECT_EQ(m->kind(), TypeKind::Map);
  EXPECT_TRUE(m->is_list_like());
  ASSERT_TRUE(m->element());
  EXPECT_EQ(m->element()->kind(), TypeKind::Tuple);
  ASSERT_EQ(m->element()->fields().size(), 2u);
  EXPECT_EQ(m->element()->fields()[0].type->kind(), TypeKind::String);
  EXPECT_EQ(m->element()->fields()[1].type->kind(), TypeKind::U32);
  // The entry tuple<string, u32> is 12 bytes in i32 memories, 24 in i64.
  EXPECT_EQ(L32(m->element()).size, 12u);
  EXPECT_EQ(L64(m->element()).size, 24u);
  // The map itself is laid out as list<tuple<string, u32>>.
  auto l = Type::list(Type::tuple({Type::string(), Type::u32()}));
  for (AddrWidth w : {AddrWidth::I32, AddrWidth::I64}) {
    EXPECT_EQ(m->layout(w).size, l->layout(w).size);
    EXPECT_EQ(m->layout(w).align, l->layout(w).align);
    EXPECT_EQ(m->layout(w).flat, l->layout(w).flat);
  }
  EXPECT_TRUE(equal(*m->element(), *l->element()));
}

TEST(TypeLayout, DespecializedViews) {
  auto o = Type::option(Type::u8());
  ASSERT_EQ(o->cases().size(), 2u);
  EXPECT_EQ(o->cases()[0].name, "none");
  EXPECT_EQ(o->cases()[0].type, nullptr);
  EXPECT_EQ(o->cases()[1].name, "some");
  EXPECT_TRUE(o->is_variant_like());

  auto r = Type::result(Type::u8(), nullptr);
  ASSERT_EQ(r->cases().size(), 2u);
  EXPECT_EQ(r->cases()[0].name, "ok");
  EXPECT_EQ(r->cases()[1].name, "error");
  EXPECT_EQ(r->cases()[1].type, nullptr);

  auto e = Type::enum_({"red", "green"});
  ASSERT_EQ(e->cases().size(), 2u);
  EXPECT_EQ(e->cases()[1].name, "green");
  EXPECT_EQ(e->cases()[1].type, nullptr);
  ASSERT_EQ(e->labels().size(), 2u);
}

TEST(TypeWit, Spellings) {
  auto res = std::make_shared<ResourceType>(ResourceType{"file"});
  const std::vector<std::pair<TypeRef, std::string>> rows = {
      {Type::bool_(), "bool"},
      {Type::char_(), "char"},
      {Type::string(), "string"},
      {Type::error_context(), "error-context"},
      {Type::list(Type::string()), "list<string>"},
      {Type::fixed_list(Type::u16(), 4), "list<u16, 4>"},
      {Type::record({{"a", Type::u8()}, {"b", Type::list(Type::string())}}),
       "record { a: u8, b: list<string> }"},
      {Type::tuple({Type::u8(), Type::string()}), "tuple<u8, string>"},
      {Type::variant({Case{"a", Type::u8()}, Case{"b", nullptr}}), "variant { a(u8), b }"},
      {Type::enum_({"x", "y"}), "enum { x, y }"},
      {Type::flags({"r", "w", "x"}), "flags { r, w, x }"},
      {Type::option(Type::s32()), "option<s32>"},
      {Type::result(nullptr, Type::string()), "result<_, string>"},
      {Type::result(Type::u8(), nullptr), "result<u8>"},
      {Type::result(Type::u8(), Type::string()), "result<u8, string>"},
      {Type::result(nullptr, nullptr), "result"},
      {Type::map(Type::string(), Type::u32()), "map<string, u32>"},
      {Type::own(res), "own<file>"},
      {Type::borrow(res), "borrow<file>"},
      {Type::stream(Type::u8()), "stream<u8>"},
      {Type::stream(nullptr), "stream"},
      {Type::future(Type::string()), "future<string>"},
      {Type::future(nullptr), "future"},
  };
  for (const auto& [type, wit] : rows) EXPECT_EQ(type->to_wit(), wit);
}

TEST(TypeValidate, RejectsEmptyAndNullTypes) {
  expect_validate_error([] { Type::record({}); }, "record");
  expect_validate_error([] { Type::tuple({}); }, "tuple");
  expect_validate_error([] { Type::variant({}); }, "variant");
  expect_validate_error([] { Type::enum_({}); }, "enum");
  expect_validate_error([] { Type::list(nullptr); });
  expect_validate_error([] { Type::option(nullptr); });
  expect_validate_error([] { Type::record({{"a", nullptr}}); });
  expect_validate_error([] { Type::own(nullptr); });
  expect_validate_error([] { Type::primitive(TypeKind::Record); });
}

TEST(TypeValidate, RejectsStreamsOfCharButNotFuturesOfChar) {
  // The Component Model rejects stream<char> for now (component-model#607).
  expect_validate_error([] { Type::stream(Type::char_()); }, "`stream<char>` is not valid");
  EXPECT_EQ(Type::future(Type::char_())->to_wit(), "future<char>");
  EXPECT_EQ(Type::stream(Type::list(Type::char_()))->to_wit(), "stream<list<char>>");
  EXPECT_EQ(invalid_stream_element(Type::u32().get()), nullptr);
  EXPECT_EQ(invalid_stream_element(nullptr), nullptr);
}

TEST(TypeValidate, RejectsZeroLengthFixedList) {
  expect_validate_error([] { Type::fixed_list(Type::u8(), 0); }, "fixed-length list");
}

TEST(TypeValidate, RejectsSizeAbove2To28) {
  // 40,000,000 * 8 = 320,000,000 bytes > 2^28-1 = 268,435,455.
  expect_validate_error([] { Type::fixed_list(Type::u64(), 40000000); }, "list<u64, 40000000>");
  // One byte over the limit.
  expect_validate_error([] { Type::fixed_list(Type::u8(), 268435456); });
  // Two halves that each fit but not together.
  auto half = Type::fixed_list(Type::u8(), 200000000);
  expect_validate_error([&] { Type::tuple({half, half}); });
}

TEST(TypeLayout, LargeFixedListIsCountedNotListed) {
  // list<u8, 2^28-1> is exactly at the size limit: valid, and its flattening
  // of 268,435,455 i32s is counted without being materialised.
  auto t = Type::fixed_list(Type::u8(), 268435455);
  for (AddrWidth w : {AddrWidth::I32, AddrWidth::I64}) {
    const Layout& l = t->layout(w);
    EXPECT_EQ(l.size, 268435455u);
    EXPECT_EQ(l.align, 1u);
    EXPECT_EQ(l.flat_count, 268435455u);
    EXPECT_TRUE(l.flat.empty());
    EXPECT_FALSE(l.flat_listed());
  }
  // Wrapped in an option (1 + 268,435,454 bytes) the count stays exact.
  auto o = Type::option(Type::fixed_list(Type::u8(), 268435454));
  EXPECT_EQ(L32(o).size, 268435455u);
  EXPECT_EQ(L32(o).flat_count, 268435455u);
  EXPECT_TRUE(L32(o).flat.empty());
  // One more byte and the option is over the limit.
  expect_validate_error([&] { Type::option(t); });
}

TEST(TypeLayout, ListedFlatteningBoundary) {
  auto at = Type::fixed_list(Type::u8(), kMaxListedFlat);
  EXPECT_EQ(L32(at).flat_count, kMaxListedFlat);
  EXPECT_EQ(L32(at).flat.size(), kMaxListedFlat);
  EXPECT_TRUE(L32(at).flat_listed());

  auto over = Type::fixed_list(Type::u8(), kMaxListedFlat + 1);
  EXPECT_EQ(L32(over).flat_count, kMaxListedFlat + 1);
  EXPECT_FALSE(L32(over).flat_listed());

  // A record of 200 + 100 values is also only counted.
  auto r = Type::record({{"a", Type::fixed_list(Type::u8(), 200)},
                         {"b", Type::fixed_list(Type::u64(), 100)}});
  EXPECT_EQ(L32(r).flat_count, 300u);
  EXPECT_TRUE(L32(r).flat.empty());
  EXPECT_EQ(L32(r).offsets, (std::vector<uint32_t>{0, 200}));
  EXPECT_EQ(L32(r).size, 1000u);
}

TEST(TypeEquality, StructuralWithResourceIdentity) {
  auto r1 = std::make_shared<ResourceType>(ResourceType{"file"});
  auto r2 = std::make_shared<ResourceType>(ResourceType{"file"});
  EXPECT_TRUE(equal(*Type::list(Type::u8()), *Type::list(Type::u8())));
  EXPECT_FALSE(equal(*Type::list(Type::u8()), *Type::list(Type::s8())));
  EXPECT_FALSE(equal(*Type::fixed_list(Type::u8(), 2), *Type::fixed_list(Type::u8(), 3)));
  EXPECT_FALSE(equal(*Type::record({{"a", Type::u8()}}), *Type::record({{"b", Type::u8()}})));
  EXPECT_FALSE(equal(*Type::tuple({Type::u8()}), *Type::record({{"0", Type::u8()}})));
  EXPECT_TRUE(equal(*Type::own(r1), *Type::own(r1)));
  EXPECT_FALSE(equal(*Type::own(r1), *Type::own(r2)));
  EXPECT_FALSE(equal(*Type::own(r1), *Type::borrow(r1)));
  EXPECT_FALSE(equal(*Type::result(Type::u8(), nullptr), *Type::result(nullptr, Type::u8())));
}

}  // namespace
}  // namespace cmhost::abi
