// Cross-component copies (ValueCopy, CallCopy) checked against the Val path,
// which the reference vectors verify: for every type, value, pair of string
// encodings and pair of address widths, copying must give what lifting on
// one side and lowering on the other gives. With a UTF-8 source the realloc
// sequence and the memory image must match byte for byte; for other sources
// the spec picks other store algorithms, whose realloc sequences are checked
// separately against definitions.py (store_string_into_range).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

using Flat = std::vector<uint64_t>;
using Allocs = std::vector<HostMemory::Allocation>;

struct Side {
  Side(StringEncoding e, AddrWidth w, size_t size = 1 << 16) : mem(size, 8) {
    opts.encoding = e;
    opts.addr = w;
  }
  AbiContext cx(HandleHooks* hooks = nullptr) { return AbiContext(&mem, opts, hooks); }
  CanonOptions opts;
  HostMemory mem;
};

struct Case {
  const char* name;
  TypeRef type;
  std::vector<Val> values;
};

ResourceTypeRef resource() {
  static auto r = std::make_shared<ResourceType>(ResourceType{"file"});
  return r;
}

std::vector<Case> corpus() {
  const std::vector<std::string> texts = {"", "plain ascii", "h\xC3\xA9llo", "snow \xE2\x98\x83 man",
                                          "grin \xF0\x9F\x98\x80!", "\xC3\xBF\xC3\xBF"};
  std::vector<Val> strings;
  for (const auto& s : texts) strings.push_back(Val::string(s));
  const auto rec = Type::record({{"name", Type::string()}, {"port", Type::option(Type::u16())},
                                 {"tags", Type::list(Type::string())}, {"weight", Type::f64()}});
  const auto rec_val = [](std::string name, std::optional<uint16_t> port, std::vector<std::string> tags, double w) {
    std::vector<Val> t;
    for (auto& s : tags) t.push_back(Val::string(s));
    return Val::record({Val::string(name), port ? Val::some(Val::u16(*port)) : Val::none(), Val::list(t), Val::f64(w)});
  };
  const auto shapes = Type::variant({{"i", Type::u32()}, {"l", Type::s64()}, {"f", Type::f32()},
                                     {"d", Type::f64()}, {"s", Type::string()}, {"nothing", nullptr}});
  std::vector<Case> cases = {
      {"bool", Type::bool_(), {Val::bool_(false), Val::bool_(true)}},
      {"s8", Type::s8(), {Val::s8(-128), Val::s8(127), Val::s8(-1)}},
      {"u8", Type::u8(), {Val::u8(0), Val::u8(255)}},
      {"s16", Type::s16(), {Val::s16(-32768), Val::s16(32767)}},
      {"u16", Type::u16(), {Val::u16(65535)}},
      {"s32", Type::s32(), {Val::s32(INT32_MIN), Val::s32(-1)}},
      {"u32", Type::u32(), {Val::u32(UINT32_MAX)}},
      {"s64", Type::s64(), {Val::s64(INT64_MIN), Val::s64(-1)}},
      {"u64", Type::u64(), {Val::u64(UINT64_MAX)}},
      {"f32", Type::f32(), {Val::f32(0.1f), Val::f32(-0.0f), Val::f32(std::numeric_limits<float>::infinity())}},
      {"f64", Type::f64(), {Val::f64(1e300), Val::f64(-0.0)}},
      {"char", Type::char_(), {Val::char_(U'a'), Val::char_(U'\U0001F600'), Val::char_(U'\xFF')}},
      {"string", Type::string(), strings},
      {"list<u8>", Type::list(Type::u8()), {Val::bytes(std::vector<uint8_t>{1, 2, 3}), Val::list({})}},
      {"list<f32>", Type::list(Type::f32()), {Val::list({Val::f32(1.5f), Val::f32(-2.0f)})}},
      {"list<string>", Type::list(Type::string()), {Val::list(strings)}},
      {"list<char>", Type::list(Type::char_()), {Val::list({Val::char_(U'x'), Val::char_(U'\u2603')})}},
      {"record", rec, {rec_val("srv", 8080, {"a", "b\xC3\xA9"}, 2.5), rec_val("", std::nullopt, {}, 0)}},
      {"list<record>", Type::list(rec), {Val::list({rec_val("x", 1, {"t"}, 1), rec_val("y\xE2\x98\x83", std::nullopt, {}, 2)})}},
      {"tuple", Type::tuple({Type::u8(), Type::string(), Type::u64()}),
       {Val::tuple({Val::u8(7), Val::string("seven"), Val::u64(7)})}},
      {"variant", shapes,
       {Val::variant(0, Val::u32(5)), Val::variant(1, Val::s64(-5)), Val::variant(2, Val::f32(0.5f)),
        Val::variant(3, Val::f64(0.25)), Val::variant(4, Val::string("payload \xE2\x98\x83")), Val::variant(5)}},
      {"list<variant>", Type::list(shapes), {Val::list({Val::variant(4, Val::string("s")), Val::variant(1, Val::s64(9))})}},
      {"enum", Type::enum_({"a", "b", "c"}), {Val::enum_(2)}},
      {"option<string>", Type::option(Type::string()), {Val::none(), Val::some(Val::string("\xC3\xA9"))}},
      {"result<string, u32>", Type::result(Type::string(), Type::u32()),
       {Val::ok(Val::string("fine")), Val::err(Val::u32(4))}},
      {"result", Type::result(nullptr, nullptr), {Val::ok(), Val::err()}},
      {"flags", Type::flags({"a", "b", "c"}), {Val::flags(0b101)}},
      {"flags17", Type::flags({"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11",
                               "f12", "f13", "f14", "f15", "f16"}),
       {Val::flags(0x1FFFF), Val::flags(0x10001)}},
      {"fixed list", Type::fixed_list(Type::u16(), 3), {Val::list({Val::u16(1), Val::u16(2), Val::u16(3)})}},
      {"fixed list of strings", Type::fixed_list(Type::string(), 2),
       {Val::list({Val::string("a"), Val::string("\xF0\x9F\x98\x80")})}},
      {"list<list<string>>", Type::list(Type::list(Type::string())),
       {Val::list({Val::list({Val::string("a")}), Val::list({}), Val::list(strings)})}},
  };
  return cases;
}

const StringEncoding kEncodings[] = {StringEncoding::Utf8, StringEncoding::Utf16, StringEncoding::Latin1Utf16};
const AddrWidth kWidths[] = {AddrWidth::I32, AddrWidth::I64};

// Lowers `v` into `from` (flat), then returns the flat values.
Flat lower_into(Side& from, const TypeRef& t, const Val& v) {
  ValueAbi abi(t, from.opts.addr);
  AbiContext cx = from.cx();
  Flat flat;
  abi.lower_flat(cx, v, flat);
  return flat;
}

Val lift_from(Side& side, const TypeRef& t, const Flat& flat) {
  ValueAbi abi(t, side.opts.addr);
  AbiContext cx = side.cx();
  return abi.lift_flat(cx, flat);
}

std::string label(const Case& c, const Side& from, const Side& to) {
  return std::string(c.name) + " from " + to_string(from.opts.encoding) +
         (from.opts.addr == AddrWidth::I32 ? "/32" : "/64") + " to " + to_string(to.opts.encoding) +
         (to.opts.addr == AddrWidth::I32 ? "/32" : "/64");
}

// Calls f for every case and value of the corpus, every pair of string
// encodings and every pair of address widths.
template <typename F>
void for_each_combination(F&& f) {
  for (const Case& c : corpus())
    for (StringEncoding fe : kEncodings)
      for (StringEncoding te : kEncodings)
        for (AddrWidth fw : kWidths)
          for (AddrWidth tw : kWidths)
            for (const Val& v : c.values) f(c, v, Side(fe, fw), Side(te, tw));
}

TEST(ValueCopy, FlatCopiesEqualLiftThenLowerForEveryTypeEncodingAndWidth) {
  size_t checked = 0;
  for_each_combination([&](const Case& c, const Val& v, Side from, Side to) {
    const AddrWidth fw = from.opts.addr, tw = to.opts.addr;
    if (c.type->layout(fw).flat_count > kMaxListedFlat) return;
    Side expected(to.opts.encoding, tw);
    const Flat in = lower_into(from, c.type, v);
    ValueCopy copy(c.type, fw, c.type, tw);
    Flat out(copy.flat_count());
    AbiContext fcx = from.cx(), tcx = to.cx();
    copy.copy_flat(fcx, in.data(), tcx, out.data());
    const std::string what = label(c, from, to);
    EXPECT_EQ(lift_from(to, c.type, out), v) << what;
    if (from.opts.encoding == StringEncoding::Utf8) {
      // Same source encoding as a host string: same algorithm.
      const Flat want = lower_into(expected, c.type, lift_from(from, c.type, in));
      EXPECT_EQ(out, want) << what;
      EXPECT_EQ(to.mem.allocations(), expected.mem.allocations()) << what;
      EXPECT_EQ(to.mem.data(), expected.mem.data()) << what;
    }
    ++checked;
  });
  EXPECT_GT(checked, 1000u);
}

TEST(ValueCopy, MemoryCopiesEqualLoadThenStore) {
  for_each_combination([&](const Case& c, const Val& v, Side from, Side to) {
    const AddrWidth fw = from.opts.addr, tw = to.opts.addr;
    const Layout& fl = c.type->layout(fw);
    const Layout& tl = c.type->layout(tw);
    const uint64_t fp = from.mem.realloc(0, 0, fl.align, fl.size);
    const uint64_t tp = to.mem.realloc(0, 0, tl.align, tl.size);
    ValueAbi from_abi(c.type, fw), to_abi(c.type, tw);
    AbiContext fcx = from.cx(), tcx = to.cx();
    from_abi.store(fcx, v, fp);
    ValueCopy(c.type, fw, c.type, tw).copy(fcx, fp, tcx, tp);
    EXPECT_EQ(to_abi.load(tcx, tp), v) << label(c, from, to);
  });
}

TEST(ValueCopy, NansAreCanonicalizedOnTheWay) {
  Side from(StringEncoding::Utf8, AddrWidth::I32), to(StringEncoding::Utf8, AddrWidth::I32);
  from.opts.canonicalize_nan = false;
  const auto t = Type::list(Type::f32());
  const uint32_t odd_nan = 0x7fa00001u;
  const Flat in = lower_into(from, t, Val::list({Val::from_bits(ValKind::F32, odd_nan), Val::f32(1)}));
  ValueCopy copy(t, AddrWidth::I32, t, AddrWidth::I32);
  Flat out(2);
  AbiContext fcx = from.cx(), tcx = to.cx();
  copy.copy_flat(fcx, in.data(), tcx, out.data());
  uint32_t first;
  std::memcpy(&first, to.mem.data().data() + out[0], 4);
  EXPECT_EQ(first, 0x7fc00000u);
}

TEST(ValueCopy, BoolsAndSmallIntegersAreNormalizedFromFlatValues) {
  Side from(StringEncoding::Utf8, AddrWidth::I32), to(StringEncoding::Utf8, AddrWidth::I32);
  AbiContext fcx = from.cx(), tcx = to.cx();
  auto one = [&](TypeRef t, uint64_t in) {
    ValueCopy copy(t, AddrWidth::I32, t, AddrWidth::I32);
    uint64_t out = 0;
    copy.copy_flat(fcx, &in, tcx, &out);
    return out;
  };
  EXPECT_EQ(one(Type::bool_(), 7), 1u);
  EXPECT_EQ(one(Type::u8(), 0x1ff), 0xffu);
  EXPECT_EQ(one(Type::s8(), 0x80), 0xffffff80u);
  EXPECT_EQ(one(Type::u16(), 0x12345), 0x2345u);
  EXPECT_EQ(one(Type::s16(), 0xffff), 0xffffffffu);
  EXPECT_EQ(one(Type::flags({"a", "b"}), 0xff), 3u);
}

// Copies one string between encodings and returns the destination's realloc calls.
Allocs string_allocations(StringEncoding from_enc, StringEncoding to_enc, const std::string& s,
                          std::string* round_trip = nullptr) {
  Side from(from_enc, AddrWidth::I32), to(to_enc, AddrWidth::I32);
  const Flat in = lower_into(from, Type::string(), Val::string(s));
  ValueCopy copy(Type::string(), AddrWidth::I32, Type::string(), AddrWidth::I32);
  Flat out(2);
  AbiContext fcx = from.cx(), tcx = to.cx();
  copy.copy_flat(fcx, in.data(), tcx, out.data());
  if (round_trip) *round_trip = std::string(lift_from(to, Type::string(), out).as_string());
  return to.mem.allocations();
}

// Expected sequences worked out from definitions.py with the test allocator
// (bump pointer from 8, in-place shrink); entries are
// {old_ptr, old_size, align, new_size, result}.
TEST(ValueCopy, Utf16ToUtf8StartsOptimisticThenGrowsToThreeTimesThenShrinks) {
  std::string back;
  // "héllo": 5 UTF-16 units; 'h' fits, 'é' forces the worst case 15, then 6.
  EXPECT_EQ(string_allocations(StringEncoding::Utf16, StringEncoding::Utf8, "h\xC3\xA9llo", &back),
            (Allocs{{0, 0, 1, 5, 8}, {8, 5, 1, 15, 13}, {13, 15, 1, 6, 13}}));
  EXPECT_EQ(back, "h\xC3\xA9llo");
  EXPECT_EQ(string_allocations(StringEncoding::Utf16, StringEncoding::Utf8, "ascii"), (Allocs{{0, 0, 1, 5, 8}}));
}

TEST(ValueCopy, Latin1ToUtf8GrowsToTwiceTheUnits) {
  // latin1+utf16 source holding Latin-1 "é!" (2 units): worst case 4, final 3.
  EXPECT_EQ(string_allocations(StringEncoding::Latin1Utf16, StringEncoding::Utf8, "\xC3\xA9!"),
            (Allocs{{0, 0, 1, 2, 8}, {8, 2, 1, 4, 10}, {10, 4, 1, 3, 10}}));
}

TEST(ValueCopy, Utf8ToUtf16AllocatesTwiceTheBytesThenShrinks) {
  // "é" is 2 UTF-8 bytes: worst case 4 bytes, final 2.
  EXPECT_EQ(string_allocations(StringEncoding::Utf8, StringEncoding::Utf16, "\xC3\xA9"),
            (Allocs{{0, 0, 2, 4, 8}, {8, 4, 2, 2, 8}}));
}

TEST(ValueCopy, SameEncodingCopiesOnce) {
  EXPECT_EQ(string_allocations(StringEncoding::Utf16, StringEncoding::Utf16, "snow\xE2\x98\x83"),
            (Allocs{{0, 0, 2, 10, 8}}));
  EXPECT_EQ(string_allocations(StringEncoding::Latin1Utf16, StringEncoding::Latin1Utf16, "caf\xC3\xA9"),
            (Allocs{{0, 0, 2, 4, 8}}));
  // Latin-1 widened into plain UTF-16: store_string_copy with two-byte units.
  EXPECT_EQ(string_allocations(StringEncoding::Latin1Utf16, StringEncoding::Utf16, "caf\xC3\xA9"),
            (Allocs{{0, 0, 2, 8, 8}}));
}

TEST(ValueCopy, Utf16ToLatin1OrUtf16NarrowsOptimistically) {
  std::string back;
  // Plain UTF-16 source "ab": Latin-1 fits, no shrink needed (2 of 2 units).
  EXPECT_EQ(string_allocations(StringEncoding::Utf16, StringEncoding::Latin1Utf16, "ab", &back),
            (Allocs{{0, 0, 2, 2, 8}}));
  EXPECT_EQ(back, "ab");
  // "a☃": 'a' as Latin-1, then ☃ widens to the worst case 4 bytes (2 units).
  EXPECT_EQ(string_allocations(StringEncoding::Utf16, StringEncoding::Latin1Utf16, "a\xE2\x98\x83", &back),
            (Allocs{{0, 0, 2, 2, 8}, {8, 2, 2, 4, 10}}));
  EXPECT_EQ(back, "a\xE2\x98\x83");
}

TEST(ValueCopy, ProbablyUtf16SourceIsCopiedThenNarrowedWhenItFitsLatin1) {
  std::string back;
  // A latin1+utf16 source tagged UTF-16 ("☃" forces it) stays UTF-16: one copy.
  EXPECT_EQ(string_allocations(StringEncoding::Latin1Utf16, StringEncoding::Latin1Utf16, "x\xE2\x98\x83", &back),
            (Allocs{{0, 0, 2, 4, 8}}));
  EXPECT_EQ(back, "x\xE2\x98\x83");
}

TEST(ValueCopy, TrapsLikeLifting) {
  Side from(StringEncoding::Utf8, AddrWidth::I32), to(StringEncoding::Utf8, AddrWidth::I32);
  AbiContext fcx = from.cx(), tcx = to.cx();
  auto trap_message = [&](TypeRef t, Flat in) -> std::string {
    ValueCopy copy(t, AddrWidth::I32, t, AddrWidth::I32);
    Flat out(copy.flat_count());
    try {
      copy.copy_flat(fcx, in.data(), tcx, out.data());
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no trap";
    return "";
  };
  from.mem.bytes()[100] = 0xC3;  // a lone UTF-8 lead byte
  EXPECT_NE(trap_message(Type::string(), {100, 1}).find("not valid UTF-8"), std::string::npos);
  EXPECT_NE(trap_message(Type::string(), {1 << 20, 4}).find("out of bounds"), std::string::npos);
  EXPECT_NE(trap_message(Type::char_(), {0xD800}).find("surrogate"), std::string::npos);
  EXPECT_NE(trap_message(Type::option(Type::u8()), {2, 0}).find("invalid discriminant"), std::string::npos);
  EXPECT_NE(trap_message(Type::list(Type::u32()), {2, 1}).find("not aligned"), std::string::npos);
  EXPECT_TRUE(to.mem.allocations().empty()) << "nothing is allocated before the source is checked";
}

// Records the handle hook calls: lifting adds 100, lowering doubles.
class RecordingHooks final : public HandleHooks {
 public:
  uint32_t lift_handle(const Type& type, uint32_t index) override {
    log.push_back("lift " + std::string(to_string(type.kind())) + " " + std::to_string(index));
    return index + 100;
  }
  uint32_t lower_handle(const Type& type, uint32_t index) override {
    log.push_back("lower " + std::string(to_string(type.kind())) + " " + std::to_string(index));
    return index * 2;
  }
  std::vector<std::string> log;
};

TEST(ValueCopy, HandlesMoveThroughBothSidesHooks) {
  Side from(StringEncoding::Utf8, AddrWidth::I32), to(StringEncoding::Utf8, AddrWidth::I32);
  RecordingHooks from_hooks, to_hooks;
  AbiContext fcx = from.cx(&from_hooks), tcx = to.cx(&to_hooks);
  const auto t = Type::tuple({Type::own(resource()), Type::borrow(resource())});
  ValueCopy copy(t, AddrWidth::I32, t, AddrWidth::I32);
  const Flat in = {3, 4};
  Flat out(2);
  copy.copy_flat(fcx, in.data(), tcx, out.data());
  EXPECT_EQ(out, (Flat{206, 208}));
  EXPECT_EQ(from_hooks.log, (std::vector<std::string>{"lift own 3", "lift borrow 4"}));
  EXPECT_EQ(to_hooks.log, (std::vector<std::string>{"lower own 103", "lower borrow 104"}));
}

TEST(ValueCopy, DifferentShapesAreRefused) {
  EXPECT_ERROR(ValueCopy(Type::u32(), AddrWidth::I32, Type::string(), AddrWidth::I32), ErrorKind::Usage);
  EXPECT_ERROR(ValueCopy(Type::option(Type::u8()), AddrWidth::I32, Type::enum_({"a", "b"}), AddrWidth::I32), ErrorKind::Usage);
}

TEST(CallCopy, FlatArgumentsAndResult) {
  CanonOptions caller_opts, callee_opts;
  callee_opts.encoding = StringEncoding::Utf16;
  FunctionAbi caller({Type::string(), Type::u32()}, {Type::string()}, caller_opts);
  FunctionAbi callee({Type::string(), Type::u32()}, {Type::string()}, callee_opts);
  CallCopy call(caller, callee);
  Side a(StringEncoding::Utf8, AddrWidth::I32), b(StringEncoding::Utf16, AddrWidth::I32);
  AbiContext acx = a.cx(), bcx = b.cx();
  Flat caller_args = lower_into(a, Type::string(), Val::string("h\xC3\xA9"));
  caller_args.push_back(7);
  caller_args.push_back(0x200);  // the caller's out pointer for the string result
  Flat callee_args;
  call.copy_args(acx, caller_args, bcx, callee_args);
  ASSERT_EQ(callee_args.size(), 3u);
  EXPECT_EQ(lift_from(b, Type::string(), {callee_args[0], callee_args[1]}).as_string(), "h\xC3\xA9");
  EXPECT_EQ(callee_args[2], 7u);
  // The callee returns a pointer to its (ptr, len) pair: results spill.
  const uint64_t ret = 0x100;
  std::memcpy(b.mem.bytes().data() + ret, "\x08\0\0\0\x02\0\0\0", 8);
  Flat caller_results;
  call.copy_results(bcx, Flat{ret}, acx, caller_args, caller_results);
  EXPECT_TRUE(caller_results.empty());
  ValueAbi str(Type::string(), AddrWidth::I32);
  EXPECT_EQ(str.load(acx, 0x200).as_string(), "h\xC3\xA9");
}

TEST(CallCopy, SpilledArgumentsAreAllocatedByTheCallee) {
  std::vector<TypeRef> params(17, Type::u32());
  FunctionAbi caller(params, {}, CanonOptions{}), callee(params, {}, CanonOptions{});
  CallCopy call(caller, callee);
  Side a(StringEncoding::Utf8, AddrWidth::I32), b(StringEncoding::Utf8, AddrWidth::I32);
  AbiContext acx = a.cx(), bcx = b.cx();
  for (uint32_t i = 0; i < 17; ++i) std::memcpy(a.mem.bytes().data() + 64 + 4 * i, &i, 4);
  Flat callee_args;
  call.copy_args(acx, Flat{64}, bcx, callee_args);
  ASSERT_EQ(callee_args.size(), 1u);
  EXPECT_EQ(b.mem.allocations(), (Allocs{{0, 0, 4, 68, 8}}));
  for (uint32_t i = 0; i < 17; ++i) {
    uint32_t v;
    std::memcpy(&v, b.mem.data().data() + callee_args[0] + 4 * i, 4);
    EXPECT_EQ(v, i);
  }
}

}  // namespace
}  // namespace cmhost::abi
