// Typed lifts (abi/typed.hpp): C++ types loaded straight from guest memory.
// Each value is stored by the Val path (ValueAbi, checked by the reference
// vectors), then loaded as C++ and compared; layouts must equal abi::Type's.
#include <gtest/gtest.h>

#include "../support/expect_error.hpp"
#include "cmhost/abi.hpp"
#include "cmhost/abi/typed.hpp"
#include "cmhost/abi/typed_signature.hpp"

namespace test_types {

namespace typed = cmhost::abi::typed;

// One record in each family of C++ types: owning (std::string,
// std::vector), std::pmr (loaded into an arena), frame containers, and
// views read in place.
struct Owning {
  using Str = std::string;
  template <class T>
  using List = std::vector<T>;
};
struct Pmr {
  using Str = std::pmr::string;
  template <class T>
  using List = std::pmr::vector<T>;
};
struct Frame {
  using Str = typed::FrameString;
  template <class T>
  using List = typed::FrameVector<T>;
};
struct Viewing {
  using Str = std::string_view;
  template <class T>
  using List = typed::ListView<T>;
};

template <class F>
struct BasicEntry {
  typename F::Str name;
  std::optional<uint16_t> port;
  typename F::template List<typename F::Str> tags;
  double weight;
};
using Entry = BasicEntry<Owning>;
using ArenaEntry = BasicEntry<Pmr>;
using FrameEntry = BasicEntry<Frame>;
using EntryView = BasicEntry<Viewing>;

struct ArenaLabel {
  uint32_t id;
  std::pmr::string text;
};

// Records with a member their Record<> does not list.
struct CachedId {
  uint32_t id;
  uint32_t cached_hash;
};
struct HiddenNote {
  uint32_t id;
  std::pmr::string text;
  std::string note;
};

}  // namespace test_types

namespace cmhost::abi::typed {
template <class F>
struct Record<test_types::BasicEntry<F>> {
  using E = test_types::BasicEntry<F>;
  static constexpr auto fields = std::make_tuple(field("name", &E::name), field("port", &E::port),
                                                 field("tags", &E::tags), field("weight", &E::weight));
};
template <>
struct Record<test_types::ArenaLabel> {
  using E = test_types::ArenaLabel;
  static constexpr auto fields = std::make_tuple(field("id", &E::id), field("text", &E::text));
};
template <>
struct Record<test_types::CachedId> {
  static constexpr auto fields = std::make_tuple(field("id", &test_types::CachedId::id));
};
template <>
struct Record<test_types::HiddenNote> {
  using E = test_types::HiddenNote;
  static constexpr auto fields = std::make_tuple(field("id", &E::id), field("text", &E::text));
};
}  // namespace cmhost::abi::typed

namespace cmhost::abi {
namespace {

using test_types::Entry;
using test_types::EntryView;
using Shape = std::variant<uint32_t, int64_t, float, double, std::string, std::monostate>;

TypeRef entry_type() {
  return Type::record({{"name", Type::string()}, {"port", Type::option(Type::u16())},
                       {"tags", Type::list(Type::string())}, {"weight", Type::f64()}});
}
TypeRef shape_type() {
  return Type::variant({{"i", Type::u32()}, {"l", Type::s64()}, {"f", Type::f32()},
                        {"d", Type::f64()}, {"s", Type::string()}, {"nothing", nullptr}});
}

Val entry_val(const std::string& name, std::optional<uint16_t> port, std::vector<std::string> tags, double w) {
  std::vector<Val> t;
  for (auto& s : tags) t.push_back(Val::string(s));
  return Val::record({Val::string(name), port ? Val::some(Val::u16(*port)) : Val::none(), Val::list(t), Val::f64(w)});
}

// Stores `v` of type `t` in a fresh memory and returns its address.
struct Stored {
  Stored(const TypeRef& t, const Val& v, CanonOptions o = {}) : mem(1 << 16, 8), opts(o) {
    AbiContext cx(&mem, opts);
    const Layout& l = t->layout(opts.addr);
    ptr = mem.realloc(0, 0, l.align, l.size);
    ValueAbi(t, opts.addr).store(cx, v, ptr);
  }
  AbiContext cx() { return AbiContext(&mem, opts); }
  HostMemory mem;
  CanonOptions opts;
  uint64_t ptr;
};

TEST(Typed, LayoutsEqualTheAbiStages) {
  EXPECT_EQ((typed::Lift<Entry, AddrWidth::I32>::size), entry_type()->layout(AddrWidth::I32).size);
  EXPECT_EQ((typed::Lift<Entry, AddrWidth::I32>::align), entry_type()->layout(AddrWidth::I32).align);
  EXPECT_EQ((typed::Lift<Entry, AddrWidth::I64>::size), entry_type()->layout(AddrWidth::I64).size);
  EXPECT_EQ((typed::Lift<Shape, AddrWidth::I32>::size), shape_type()->layout(AddrWidth::I32).size);
  EXPECT_EQ((typed::Lift<Shape, AddrWidth::I32>::align), shape_type()->layout(AddrWidth::I32).align);
  using Tup = std::tuple<uint8_t, std::string, uint64_t>;
  EXPECT_EQ((typed::Lift<Tup, AddrWidth::I32>::size),
            Type::tuple({Type::u8(), Type::string(), Type::u64()})->layout(AddrWidth::I32).size);
}

TEST(Typed, MatchesComparesShapes) {
  EXPECT_TRUE(typed::matches<Entry>(*entry_type()));
  EXPECT_TRUE(typed::matches<EntryView>(*entry_type()));
  EXPECT_TRUE(typed::matches<Shape>(*shape_type()));
  EXPECT_TRUE(typed::matches<std::vector<Entry>>(*Type::list(entry_type())));
  EXPECT_FALSE(typed::matches<Entry>(*shape_type()));
  EXPECT_FALSE(typed::matches<std::vector<uint16_t>>(*Type::list(Type::u32())));
  EXPECT_FALSE((typed::matches<std::variant<uint32_t, std::string>>(*shape_type())));
}

TEST(Typed, RecordsWithStringsOptionsAndLists) {
  const Val v = entry_val("h\xC3\xA9llo", 8080, {"a", "", "\xE2\x98\x83"}, 2.5);
  Stored s(entry_type(), v);
  AbiContext cx = s.cx();
  typed::Reader r(cx);
  const Entry e = typed::load<Entry>(r, s.ptr);
  EXPECT_EQ(e.name, "h\xC3\xA9llo");
  EXPECT_EQ(e.port, std::optional<uint16_t>(8080));
  EXPECT_EQ(e.tags, (std::vector<std::string>{"a", "", "\xE2\x98\x83"}));
  EXPECT_EQ(e.weight, 2.5);
  const EntryView view = typed::load<EntryView>(r, s.ptr);
  EXPECT_EQ(view.name, "h\xC3\xA9llo");
  ASSERT_EQ(view.tags.size(), 3u);
  EXPECT_EQ(view.tags[2], "\xE2\x98\x83");
  std::string joined;
  for (std::string_view t : view.tags) joined += std::string(t) + "|";
  EXPECT_EQ(joined, "a||\xE2\x98\x83|");
}

TEST(Typed, EveryVariantCase) {
  const std::vector<Val> cases = {Val::variant(0, Val::u32(5)), Val::variant(1, Val::s64(-5)),
                                  Val::variant(2, Val::f32(0.5f)), Val::variant(3, Val::f64(0.25)),
                                  Val::variant(4, Val::string("s")), Val::variant(5)};
  Stored s(Type::list(shape_type()), Val::list(cases));
  AbiContext cx = s.cx();
  typed::Reader r(cx);
  const auto shapes = typed::load<std::vector<Shape>>(r, s.ptr);
  ASSERT_EQ(shapes.size(), 6u);
  EXPECT_EQ(std::get<0>(shapes[0]), 5u);
  EXPECT_EQ(std::get<1>(shapes[1]), -5);
  EXPECT_EQ(std::get<2>(shapes[2]), 0.5f);
  EXPECT_EQ(std::get<3>(shapes[3]), 0.25);
  EXPECT_EQ(std::get<4>(shapes[4]), "s");
  EXPECT_EQ(shapes[5].index(), 5u);
}

TEST(Typed, VisitVariantCallsTheCaseWithoutBuildingIt) {
  Stored s(Type::list(shape_type()), Val::list({Val::variant(4, Val::string("x")), Val::variant(0, Val::u32(9)),
                                                Val::variant(5)}));
  AbiContext cx = s.cx();
  typed::Reader r(cx);
  using ShapeView = std::variant<uint32_t, int64_t, float, double, std::string_view, std::monostate>;
  const auto list = typed::load<typed::ListView<ShapeView>>(r, s.ptr);
  std::string log;
  for (uint64_t i = 0; i < list.size(); ++i)
    typed::visit_variant<ShapeView>(r, list.address(i), [&]<size_t I>(std::in_place_index_t<I>, const auto& payload) {
      log += std::to_string(I);
      if constexpr (I == 4) log += std::string(payload);
      if constexpr (I == 0) log += std::to_string(payload);
      log += ";";
    });
  EXPECT_EQ(log, "4x;09;5;");
}

// Counts what a memory resource hands out, to prove where values live.
class CountingResource final : public std::pmr::memory_resource {
 public:
  size_t allocations = 0;
  std::vector<std::pair<const std::byte*, size_t>> blocks;  // every block handed out

 private:
  void* do_allocate(size_t n, size_t align) override {
    ++allocations;
    void* p = std::pmr::new_delete_resource()->allocate(n, align);
    blocks.emplace_back(static_cast<const std::byte*>(p), n);
    return p;
  }
  void do_deallocate(void* p, size_t n, size_t align) override {
    std::pmr::new_delete_resource()->deallocate(p, n, align);
  }
  bool do_is_equal(const memory_resource& o) const noexcept override { return this == &o; }
};

TEST(Typed, PmrContainersComeFromTheReadersResource) {
  const std::string long_name(40, 'n');  // past any inline string buffer
  const Val v = Val::list({entry_val(long_name, 7, {std::string(30, 't'), "u"}, 1.5), entry_val("b", std::nullopt, {}, 0)});
  Stored s(Type::list(entry_type()), v);
  AbiContext cx = s.cx();
  CountingResource arena;
  typed::Reader r(cx, &arena);
  const auto entries = typed::load<std::pmr::vector<test_types::ArenaEntry>>(r, s.ptr);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(std::string_view(entries[0].name), long_name);
  EXPECT_EQ(entries[0].port, std::optional<uint16_t>(7));
  ASSERT_EQ(entries[0].tags.size(), 2u);
  EXPECT_EQ(std::string_view(entries[0].tags[0]), std::string(30, 't'));
  EXPECT_EQ(entries[0].tags[1], "u");
  EXPECT_EQ(entries[1].name, "b");
  EXPECT_FALSE(entries[1].port);
  EXPECT_TRUE(entries[1].tags.empty());
  // Every container, however deep, took the reader's resource.
  EXPECT_EQ(entries.get_allocator().resource(), &arena);
  EXPECT_EQ(entries[0].name.get_allocator().resource(), &arena);
  EXPECT_EQ(entries[0].tags.get_allocator().resource(), &arena);
  EXPECT_EQ(entries[0].tags[0].get_allocator().resource(), &arena);
  // The outer list, the long name, the tag list and the long tag.
  EXPECT_EQ(arena.allocations, 4u);
}

TEST(Typed, PmrVariantsOfRecordsAreBuiltInTheirSlots) {
  using Op = std::variant<test_types::ArenaLabel, uint32_t, std::pmr::string, std::monostate>;
  const TypeRef label = Type::record({{"id", Type::u32()}, {"text", Type::string()}});
  const TypeRef op = Type::variant({{"label", label}, {"n", Type::u32()}, {"s", Type::string()}, {"none", nullptr}});
  const std::string text(20, 'x');
  Stored s(Type::list(op), Val::list({Val::variant(0, Val::record({Val::u32(3), Val::string(text)})),
                                      Val::variant(1, Val::u32(9)), Val::variant(2, Val::string(text + "y")),
                                      Val::variant(3)}));
  AbiContext cx = s.cx();
  std::pmr::monotonic_buffer_resource arena;
  typed::Reader r(cx, &arena);
  const auto ops = typed::load<std::pmr::vector<Op>>(r, s.ptr);
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(std::get<0>(ops[0]).id, 3u);
  EXPECT_EQ(std::string_view(std::get<0>(ops[0]).text), text);
  EXPECT_EQ(std::get<0>(ops[0]).text.get_allocator().resource(), &arena);
  EXPECT_EQ(std::get<1>(ops[1]), 9u);
  EXPECT_EQ(std::string_view(std::get<2>(ops[2])), text + "y");
  EXPECT_EQ(std::get<2>(ops[2]).get_allocator().resource(), &arena);
  EXPECT_EQ(ops[3].index(), 3u);
}

static_assert(typed::arena_releasable_v<std::pmr::vector<test_types::ArenaEntry>>);
static_assert(typed::arena_releasable_v<std::pmr::vector<std::variant<test_types::ArenaLabel, std::monostate>>>);
static_assert(typed::arena_releasable_v<std::optional<std::tuple<uint32_t, std::pmr::string>>>);
static_assert(typed::arena_releasable_v<test_types::CachedId>);  // its unlisted member is trivial
static_assert(typed::arena_releasable_v<uint64_t>);
// Anything owning heap memory must have its destructor run...
static_assert(!typed::arena_releasable_v<std::string>);
static_assert(!typed::arena_releasable_v<std::pmr::vector<std::string>>);
static_assert(!typed::arena_releasable_v<std::pmr::vector<std::vector<uint8_t>>>);
static_assert(!typed::arena_releasable_v<Entry>);
static_assert(!typed::arena_releasable_v<std::variant<uint32_t, std::string>>);
static_assert(!typed::arena_releasable_v<test_types::HiddenNote>);  // a member Record<> does not list
// ...and views point into guest memory and the reader, which go first.
static_assert(!typed::arena_releasable_v<std::string_view>);
static_assert(!typed::arena_releasable_v<typed::ListView<uint32_t>>);
static_assert(!typed::arena_releasable_v<EntryView>);

// Makes any allocation from the default memory resource throw: every
// container of a value loaded into an arena must use the arena.
class NoDefaultResource {
 public:
  NoDefaultResource() : previous_(std::pmr::set_default_resource(std::pmr::null_memory_resource())) {}
  ~NoDefaultResource() { std::pmr::set_default_resource(previous_); }

 private:
  std::pmr::memory_resource* previous_;
};

bool in_blocks(const CountingResource& r, const void* p, size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  return std::any_of(r.blocks.begin(), r.blocks.end(),
                     [&](const auto& block) { return b >= block.first && b + n <= block.first + block.second; });
}

// Entry i of a batch big enough for several of an arena's blocks: a name
// too long for inline storage, port i, two tags, weight i * weight_step.
std::string entry_name(int i) { return std::string(40 + i % 60, 'a' + i % 26); }
std::vector<Val> many_entries(int count, double weight_step) {
  std::vector<Val> many;
  for (int i = 0; i < count; ++i)
    many.push_back(entry_val(entry_name(i), uint16_t(i), {std::string(50, 't'), "u"}, i * weight_step));
  return many;
}

TEST(Typed, ResultsLoadedIntoAnArenaAreFreedWithIt) {
  // Several of the arena's blocks, all from `upstream`: LeakSanitizer
  // checks that releasing the arena frees them without the value's
  // destructors.
  const std::vector<Val> many = many_entries(150, 0.5);
  Stored s(Type::list(entry_type()), Val::list(many));
  AbiContext cx = s.cx();
  const uint64_t core[] = {s.ptr};
  CountingResource upstream;
  std::pmr::monotonic_buffer_resource arena(1024, &upstream);
  const NoDefaultResource no_default;
  auto& entries =
      typed::load_result_into<std::pmr::vector<test_types::ArenaEntry>>(arena, typed::CallResult{cx, core, true});
  ASSERT_EQ(entries.size(), 150u);
  for (int i = 0; i < 150; ++i) {
    EXPECT_EQ(std::string_view(entries[i].name), entry_name(i));
    EXPECT_EQ(entries[i].port, std::optional<uint16_t>(i));
    EXPECT_EQ(entries[i].weight, i * 0.5);
  }
  EXPECT_EQ(std::string_view(entries[149].tags[0]), std::string(50, 't'));
  EXPECT_EQ(entries[149].tags[0].get_allocator().resource(), &arena);
  // The vector object itself lives in the arena too.
  EXPECT_TRUE(in_blocks(upstream, &entries, sizeof entries));
  EXPECT_GT(upstream.allocations, 1u);
}

TEST(Typed, VariantsAndOptionsLoadedIntoAnArenaUseIt) {
  using Op = std::variant<test_types::ArenaLabel, uint32_t, std::pmr::string, std::monostate>;
  using Result = std::tuple<std::pmr::vector<Op>, std::optional<std::pmr::string>>;
  const TypeRef label = Type::record({{"id", Type::u32()}, {"text", Type::string()}});
  const TypeRef op = Type::variant({{"label", label}, {"n", Type::u32()}, {"s", Type::string()}, {"none", nullptr}});
  const std::string text(40, 'x');
  Stored s(Type::tuple({Type::list(op), Type::option(Type::string())}),
           Val::tuple({Val::list({Val::variant(0, Val::record({Val::u32(3), Val::string(text)})),
                                  Val::variant(2, Val::string(text + "y")), Val::variant(3)}),
                       Val::some(Val::string(text + "z"))}));
  AbiContext cx = s.cx();
  const uint64_t core[] = {s.ptr};
  std::pmr::monotonic_buffer_resource arena;
  const NoDefaultResource no_default;
  auto& [ops, note] = typed::load_result_into<Result>(arena, typed::CallResult{cx, core, true});
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(std::string_view(std::get<0>(ops[0]).text), text);
  EXPECT_EQ(std::get<0>(ops[0]).text.get_allocator().resource(), &arena);
  EXPECT_EQ(std::string_view(std::get<2>(ops[1])), text + "y");
  EXPECT_EQ(ops[2].index(), 3u);
  ASSERT_TRUE(note);
  EXPECT_EQ(std::string_view(*note), text + "z");
  EXPECT_EQ(note->get_allocator().resource(), &arena);
}

// Frame containers cost no more room than std ones: no allocator inside.
static_assert(sizeof(typed::FrameString) == sizeof(std::string));
static_assert(sizeof(typed::FrameVector<uint32_t>) == sizeof(std::vector<uint32_t>));
static_assert(typed::arena_releasable_v<typed::FrameVector<test_types::FrameEntry>>);
static_assert(typed::arena_releasable_v<std::variant<typed::FrameString, std::monostate>>);

TEST(Typed, FrameContainersAllocateFromTheCurrentFrameArena) {
  const std::string long_text(100, 'f');
  CountingResource outer_upstream, inner_upstream;
  std::pmr::monotonic_buffer_resource outer(&outer_upstream), inner(&inner_upstream);
  EXPECT_EQ(typed::current_frame_arena(), nullptr);
  EXPECT_THROW(typed::FrameString(long_text.data(), long_text.size()), typed::NoFrameArena);
  {
    const typed::FrameScope outer_scope(outer);
    typed::FrameString a(long_text.data(), long_text.size());
    EXPECT_TRUE(in_blocks(outer_upstream, a.data(), a.size()));
    {
      const typed::FrameScope inner_scope(inner);
      EXPECT_EQ(typed::current_frame_arena(), &inner);
      typed::FrameVector<uint32_t> v(1000, 7u);
      EXPECT_TRUE(in_blocks(inner_upstream, v.data(), v.size() * sizeof(uint32_t)));
    }
    EXPECT_EQ(typed::current_frame_arena(), &outer);  // the outer scope is current again
    typed::FrameString copy = a;
    EXPECT_TRUE(in_blocks(outer_upstream, copy.data(), copy.size()));
    EXPECT_EQ(std::string_view(copy), long_text);
  }
  EXPECT_EQ(typed::current_frame_arena(), nullptr);
}

// An arena that counts the requests reaching it.
class CountingArena : public std::pmr::monotonic_buffer_resource {
 public:
  using monotonic_buffer_resource::monotonic_buffer_resource;
  size_t requests = 0;

 protected:
  void* do_allocate(size_t n, size_t align) override {
    ++requests;
    return monotonic_buffer_resource::do_allocate(n, align);
  }
};

TEST(Typed, FrameScopesAskTheirArenaForEachAllocation) {
  CountingArena arena;
  const typed::FrameScope scope(arena);
  std::vector<typed::FrameString> texts;
  texts.reserve(10);
  for (int i = 0; i < 10; ++i) texts.emplace_back(std::string(40, char('a' + i)));
  EXPECT_EQ(arena.requests, 10u);  // nothing taken ahead: the arena may be released in the scope
  arena.release();
  typed::FrameString after(std::string(40, 'z'));
  EXPECT_EQ(std::string_view(after), std::string(40, 'z'));
  EXPECT_EQ(arena.requests, 11u);
}

TEST(Typed, WindowedFrameScopesHandOutTheirArenaInBlocks) {
  CountingResource upstream;
  CountingArena arena(&upstream);
  const typed::FrameScope scope(arena, typed::FrameScope::windowed);
  std::vector<typed::FrameString> texts;
  for (int i = 0; i < 1000; ++i) texts.emplace_back(std::string(20 + i % 40, char('a' + i % 26)));
  // The window takes blocks of up to 8 KiB: far fewer requests than strings.
  EXPECT_LT(arena.requests, 20u);
  for (int i = 0; i < 1000; ++i) {  // none overlaps another
    ASSERT_EQ(std::string_view(texts[i]), std::string(20 + i % 40, char('a' + i % 26))) << i;
    EXPECT_TRUE(in_blocks(upstream, texts[i].data(), texts[i].size()));
  }
  // Large and over-aligned requests go straight to the arena, aligned.
  const size_t before = arena.requests;
  typed::FrameVector<char> large(100000, 'x');
  struct alignas(64) Line {
    char bytes[64];
  };
  typed::FrameVector<Line> lines(3);
  EXPECT_EQ(arena.requests, before + 2);
  EXPECT_TRUE(in_blocks(upstream, large.data(), large.size()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(lines.data()) % 64, 0u);
  typed::FrameVector<double> numbers(3, 1.5);  // back in the window: no request
  EXPECT_EQ(arena.requests, before + 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(numbers.data()) % alignof(double), 0u);
  EXPECT_TRUE(in_blocks(upstream, numbers.data(), 3 * sizeof(double)));
  // A scope inside takes its own window; the outer one goes on with its own.
  CountingResource inner_upstream;
  {
    std::pmr::monotonic_buffer_resource inner(&inner_upstream);
    const typed::FrameScope inner_scope(inner, typed::FrameScope::windowed);
    typed::FrameString t(std::string(30, 'i'));
    EXPECT_TRUE(in_blocks(inner_upstream, t.data(), t.size()));
  }
  typed::FrameString after(std::string(30, 'o'));
  EXPECT_TRUE(in_blocks(upstream, after.data(), after.size()));
  EXPECT_LE(arena.requests, before + 3);  // a new block at most, if the window was full
}

// How many 40-character frame strings a 12 KiB arena with no upstream
// holds: windows of 64 B to 4 KiB take 8 128 bytes, and the next (8 KiB)
// does not fit in what is left.
size_t strings_that_fit(bool windowed) {
  alignas(std::max_align_t) std::byte buffer[12288];
  std::pmr::monotonic_buffer_resource arena(buffer, sizeof buffer, std::pmr::null_memory_resource());
  std::optional<typed::FrameScope> scope;
  if (windowed)
    scope.emplace(arena, typed::FrameScope::windowed);
  else
    scope.emplace(arena);
  std::vector<typed::FrameString> texts;
  texts.reserve(400);
  try {
    for (;;) texts.emplace_back(std::string(40, 'b'));
  } catch (const std::bad_alloc&) {
  }
  return texts.size();
}

TEST(Typed, WindowedFrameScopesGiveWayNearABoundedArenasEnd) {
  const size_t plain = strings_that_fit(false), windowed = strings_that_fit(true);
  EXPECT_GT(plain, 290u);
  // Only the windows' unused tails are lost: less than a string each.
  EXPECT_GE(windowed + 8, plain);
}

TEST(Typed, FrameResultsLoadedIntoAnArenaUseIt) {
  std::vector<Val> many = many_entries(100, 0.25);
  many.push_back(entry_val("caf\xC3\xA9", std::nullopt, {}, 0));  // not ASCII: the general path
  Stored s(Type::list(entry_type()), Val::list(many));
  AbiContext cx = s.cx();
  const uint64_t core[] = {s.ptr};
  CountingResource upstream;
  std::pmr::monotonic_buffer_resource arena(1024, &upstream);
  const NoDefaultResource no_default;
  auto& entries =
      typed::load_result_into<typed::FrameVector<test_types::FrameEntry>>(arena, typed::CallResult{cx, core, true});
  EXPECT_EQ(typed::current_frame_arena(), nullptr);  // the load's scope is closed
  ASSERT_EQ(entries.size(), 101u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(std::string_view(entries[i].name), entry_name(i));
    EXPECT_TRUE(in_blocks(upstream, entries[i].name.data(), entries[i].name.size()));
    EXPECT_EQ(entries[i].port, std::optional<uint16_t>(i));
    ASSERT_EQ(entries[i].tags.size(), 2u);
    EXPECT_EQ(std::string_view(entries[i].tags[0]), std::string(50, 't'));
    EXPECT_EQ(entries[i].tags[1], "u");
    EXPECT_EQ(entries[i].weight, i * 0.25);
  }
  EXPECT_EQ(entries[100].name, "caf\xC3\xA9");
  EXPECT_FALSE(entries[100].port);
  EXPECT_TRUE(in_blocks(upstream, entries.data(), entries.size() * sizeof entries[0]));
  EXPECT_TRUE(in_blocks(upstream, &entries, sizeof entries));
}

TEST(Typed, Latin1AndUtf16StringsAreTranscoded) {
  for (StringEncoding e : {StringEncoding::Utf16, StringEncoding::Latin1Utf16}) {
    CanonOptions o;
    o.encoding = e;
    Stored s(Type::list(Type::string()), Val::list({Val::string("caf\xC3\xA9"), Val::string("\xF0\x9F\x98\x80")}), o);
    AbiContext cx = s.cx();
    typed::Reader r(cx);
    EXPECT_EQ(typed::load<std::vector<std::string>>(r, s.ptr),
              (std::vector<std::string>{"caf\xC3\xA9", "\xF0\x9F\x98\x80"}));
    std::pmr::monotonic_buffer_resource arena;
    typed::Reader in_arena(cx, &arena);
    const auto pmr = typed::load<std::pmr::vector<std::pmr::string>>(in_arena, s.ptr);
    ASSERT_EQ(pmr.size(), 2u);
    EXPECT_EQ(pmr[0], "caf\xC3\xA9");
    EXPECT_EQ(pmr[1], "\xF0\x9F\x98\x80");
    EXPECT_EQ(pmr[1].get_allocator().resource(), &arena);
    EXPECT_ERROR(typed::load<std::vector<std::string_view>>(r, s.ptr), ErrorKind::Usage) << "views need UTF-8";
  }
}

TEST(Typed, SixtyFourBitMemories) {
  CanonOptions o;
  o.addr = AddrWidth::I64;
  const Val v = entry_val("wide", std::nullopt, {"x"}, -1);
  Stored s(entry_type(), v, o);
  AbiContext cx = s.cx();
  typed::Reader r(cx);
  const Entry e = typed::load<Entry, AddrWidth::I64>(r, s.ptr);
  EXPECT_EQ(e.name, "wide");
  EXPECT_FALSE(e.port);
  EXPECT_EQ(e.tags, std::vector<std::string>{"x"});
}

std::string trap_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no trap";
  return "";
}

TEST(Typed, TrapsLikeLifting) {
  HostMemory mem(256, 8);
  AbiContext cx(&mem, CanonOptions{});
  typed::Reader r(cx);
  auto bytes = mem.bytes();
  bytes[16] = 9;  // option discriminant 9
  EXPECT_NE(trap_of([&] { typed::load<std::optional<uint8_t>>(r, 16); }).find("invalid discriminant"), std::string::npos);
  const uint32_t surrogate = 0xD800;
  std::memcpy(bytes.data() + 32, &surrogate, 4);
  EXPECT_NE(trap_of([&] { typed::load<char32_t>(r, 32); }).find("surrogate"), std::string::npos);
  const uint32_t bad_string[2] = {100, 1};
  std::memcpy(bytes.data() + 40, bad_string, 8);
  bytes[100] = 0xFF;
  EXPECT_NE(trap_of([&] { typed::load<std::string>(r, 40); }).find("UTF-8"), std::string::npos);
  const uint32_t far_list[2] = {200, 1000};
  std::memcpy(bytes.data() + 48, far_list, 8);
  EXPECT_NE(trap_of([&] { typed::load<std::vector<uint32_t>>(r, 48); }).find("out of bounds"), std::string::npos);
  EXPECT_NE(trap_of([&] { typed::load<uint32_t>(r, 2); }).find("not aligned"), std::string::npos);
}

// A bool is any byte, true unless zero (CanonicalABI.md's
// convert_int_to_bool): a list<bool> whose bytes are not all 0 or 1 reads as
// the dynamic lift reads it, in every container family.
TEST(Typed, BoolListsReadEveryNonZeroByteAsTrue) {
  HostMemory mem(256, 8);
  AbiContext cx(&mem, CanonOptions{});
  auto bytes = mem.bytes();
  const uint8_t stored[] = {0, 1, 2, 0x80, 0xFF, 0};
  std::memcpy(bytes.data() + 100, stored, sizeof stored);
  const uint32_t list[2] = {100, sizeof stored};
  std::memcpy(bytes.data() + 16, list, 8);
  const std::vector<bool> expected{false, true, true, true, true, false};
  std::vector<Val> as_vals;
  for (bool b : expected) as_vals.push_back(Val::bool_(b));
  ASSERT_EQ(ValueAbi(Type::list(Type::bool_()), AddrWidth::I32).load(cx, 16), Val::list(as_vals));

  std::pmr::monotonic_buffer_resource arena;
  const typed::Reader r(cx, &arena);
  EXPECT_EQ(typed::load<std::vector<bool>>(r, 16), expected);
  const std::pmr::vector<bool> pmr = typed::load<std::pmr::vector<bool>>(r, 16);
  EXPECT_EQ(std::vector<bool>(pmr.begin(), pmr.end()), expected);
  {
    const typed::FrameScope frame(arena);
    const typed::FrameVector<bool> in_frame = typed::load<typed::FrameVector<bool>>(r, 16);
    EXPECT_EQ(std::vector<bool>(in_frame.begin(), in_frame.end()), expected);
  }
  const typed::ListView<bool> view = typed::load<typed::ListView<bool>>(r, 16);
  ASSERT_EQ(view.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(view[i], expected[i]) << i;
  EXPECT_TRUE(typed::load<bool>(r, 103));  // 0x80 alone
  // Inside a tuple (a u32 at 12, the list's pointer pair at 16).
  EXPECT_EQ((typed::load<std::tuple<uint32_t, std::vector<bool>>>(r, 12)),
            (std::tuple<uint32_t, std::vector<bool>>{0, expected}));
}

TEST(Typed, ATrapLeavesTheTargetWhole) {
  // A string or list whose load traps must not leave the value it was
  // loading into destroyed: its owner destroys it again later.
  HostMemory mem(256, 8);
  AbiContext cx(&mem, CanonOptions{});
  auto bytes = mem.bytes();
  const uint32_t bad_utf8[2] = {100, 1};
  std::memcpy(bytes.data() + 40, bad_utf8, 8);
  bytes[100] = 0xFF;
  const uint32_t far_list[2] = {200, 1000};
  std::memcpy(bytes.data() + 48, far_list, 8);
  const std::string kept(100, 'k');  // owns memory: a second destroy would free it twice
  std::pmr::monotonic_buffer_resource arena;
  typed::Reader r(cx, &arena);
  // The targets' memory is freed one block at a time, so AddressSanitizer
  // sees a destroyed target being read.
  std::pmr::memory_resource* heap = std::pmr::new_delete_resource();
  std::pmr::string pmr(kept, heap);
  EXPECT_ERROR(r.string_into(100, 1, pmr), ErrorKind::Trap);
  EXPECT_EQ(std::string_view(pmr), kept);
  {
    const typed::FrameScope frame(arena);
    typed::FrameString frame_string(kept.data(), kept.size());
    EXPECT_ERROR(r.string_into(100, 1, frame_string), ErrorKind::Trap);
    EXPECT_EQ(std::string_view(frame_string), kept);
  }
  test_types::ArenaLabel label{7, std::pmr::string(kept, heap)};
  EXPECT_ERROR((typed::detail::load_into<test_types::ArenaLabel, AddrWidth::I32>(r, 40 - 4, label)), ErrorKind::Trap);
  EXPECT_EQ(std::string_view(label.text), kept);
  std::pmr::vector<uint32_t> list({1, 2, 3}, heap);
  EXPECT_ERROR((typed::detail::load_into<std::pmr::vector<uint32_t>, AddrWidth::I32>(r, 48, list)), ErrorKind::Trap);
  EXPECT_EQ(list.size(), 3u);
}

static_assert(typed::FrameAllocator<int>() == typed::FrameAllocator<char>());  // rebinds compare equal

// The one signature check: where a C++ signature first differs, and the
// handle tags it binds, filled into the HandleTypes it is given and nowhere else.
struct FileTag;
struct DirTag;
TEST(TypedSignature, SaysWhereItDiffersAndFillsTheBindingsItFound) {
  using Part = typed::SignatureFit::Part;
  const auto file = std::make_shared<ResourceType>(ResourceType{"file"});
  const auto dir = std::make_shared<ResourceType>(ResourceType{"dir"});
  const std::vector<TypeRef> params = {Type::own(file), Type::borrow(dir), Type::u32()};
  const TypeRef result = Type::string();

  typed::HandleTypes found;
  auto fit = typed::fit_signature<std::string, typed::Own<FileTag>, typed::Borrow<DirTag>, uint32_t>(
      params, result.get(), &found);
  EXPECT_TRUE(fit.fits());
  ASSERT_NE(found.find(typed::detail::tag_id<FileTag>(), TypeKind::Own), nullptr);
  EXPECT_EQ(found.find(typed::detail::tag_id<FileTag>(), TypeKind::Own)->resource(), params[0]->resource());
  EXPECT_EQ(found.find(typed::detail::tag_id<DirTag>(), TypeKind::Borrow)->resource(), params[1]->resource());

  // Without a HandleTypes, shapes only: nothing is bound anywhere.
  EXPECT_TRUE((typed::fit_signature<std::string, typed::Own<FileTag>, typed::Borrow<DirTag>, uint32_t>(
                   params, result.get(), nullptr)
                   .fits()));

  // One tag cannot stand for two resource types.
  typed::HandleTypes twice;
  fit = typed::fit_signature<std::string, typed::Own<FileTag>, typed::Borrow<FileTag>, uint32_t>(params, result.get(),
                                                                                                  &twice);
  EXPECT_EQ(fit.part, Part::Param);
  EXPECT_EQ(fit.param, 1u);

  fit = typed::fit_signature<void, typed::Own<FileTag>>(params, nullptr, nullptr);
  EXPECT_EQ(fit.part, Part::ParamCount);
  EXPECT_EQ(fit.param, 1u);  // the signature's count
  fit = typed::fit_signature<void, typed::Own<FileTag>, typed::Borrow<DirTag>, uint64_t>(params, nullptr, nullptr);
  EXPECT_EQ(fit.part, Part::Param);
  EXPECT_EQ(fit.param, 2u);
  fit = typed::fit_signature<void, typed::Own<FileTag>, typed::Borrow<DirTag>, uint32_t>(params, result.get(), nullptr);
  EXPECT_EQ(fit.part, Part::ResultUnexpected);
  fit = typed::fit_signature<std::string, typed::Own<FileTag>, typed::Borrow<DirTag>, uint32_t>(params, nullptr,
                                                                                                 nullptr);
  EXPECT_EQ(fit.part, Part::ResultMissing);
  fit = typed::fit_signature<uint32_t, typed::Own<FileTag>, typed::Borrow<DirTag>, uint32_t>(params, result.get(),
                                                                                              nullptr);
  EXPECT_EQ(fit.part, Part::Result);

  // A value: a span is a list, and a Val stands for any type.
  EXPECT_TRUE(typed::fits<std::span<const uint32_t>>(*Type::list(Type::u32())));
  EXPECT_TRUE(typed::fits<Val>(*Type::own(file)));
  EXPECT_FALSE(typed::fits<std::string>(*Type::u32()));
}

}  // namespace
}  // namespace cmhost::abi
