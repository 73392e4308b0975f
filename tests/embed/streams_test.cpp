// The host's ends of streams and futures (cmhost/streams.hpp) against the
// guest of tests/components/host-streams.wat: every rendezvous case of
// CanonicalABI.md with the host as one side (reader first, writer first,
// partial copies, zero-length copies on either side, cancel with progress,
// drop while idle and during a copy, futures written once), typed and
// dynamic, and the errors: a trap in the peer, two copies on one end, a
// deadlock, element types that do not match.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/streams.hpp"

namespace cmhost {
namespace {

using abi::Type;

// The guest's `op` variant, owning and viewed.
struct Num : abi::typed::Case<uint32_t> {
  using Case::Case;
};
struct Text : abi::typed::Case<std::string> {
  using Case::Case;
};
struct TextView : abi::typed::Case<std::string_view> {
  using Case::Case;
};
struct None : abi::typed::Case<void> {};
using Op = std::variant<Num, Text, None>;
using OpView = std::variant<Num, TextView, None>;

class HostStreams : public ::testing::Test {
 protected:
  HostStreams()
      : component(Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-streams.wasm")),
        instance(Linker().instantiate(store, component)) {}

  Val call1(const char* name, std::vector<Val> args) {
    auto r = instance.func(name).call(store, args);
    EXPECT_EQ(r.size(), 1u) << name;
    return r.at(0);
  }
  void call0(const char* name) { EXPECT_TRUE(instance.func(name).call(store, {}).empty()) << name; }
  uint32_t call_u32(const char* name, std::vector<Val> args) { return call1(name, std::move(args)).as_u32(); }
  PendingCall start(const char* name, std::vector<Val> args) { return instance.func(name).call_async(store, args); }

  // Reads `reader` to its end, `max` at a time.
  template <class T>
  std::vector<T> read_all(StreamReader<T>& reader, size_t max) {
    std::vector<T> all;
    for (;;) {
      std::vector<T> batch = reader.read(store, max);
      if (batch.empty() && reader.ended()) return all;
      all.insert(all.end(), batch.begin(), batch.end());
    }
  }

  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Component component;
  Instance instance;
};

std::vector<uint32_t> iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

// ---- the host reads ----

TEST_F(HostStreams, WriterFirstPartialReadsComeFromOneParkedWrite) {
  StreamReader<uint32_t> reader(store, call1("produce", {Val::u32(10), Val::u32(10)}));
  EXPECT_EQ(reader.read(store, 3), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(reader.read(store, 3), (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(reader.read(store, 100), (std::vector<uint32_t>{6, 7, 8, 9}));
  EXPECT_FALSE(reader.ended());
  EXPECT_TRUE(reader.read(store, 100).empty());
  EXPECT_TRUE(reader.ended()) << "the writer dropped its end";
  EXPECT_EQ(reader.transferred(), 10u);
  // The guest's one write saw all ten go in one event.
  EXPECT_EQ(call_u32("writes-seen", {}), 1u);
  EXPECT_ERROR_SAYING(reader.read(store, 1), ErrorKind::Usage, "the other end is gone");
}

TEST_F(HostStreams, AStreamInsideAValue) {
  const Val some = call1("produce-in-option", {Val::u32(3)});
  ASSERT_NE(some.payload(), nullptr);
  StreamReader<uint32_t> reader(store, *some.payload());
  EXPECT_EQ(read_all(reader, 10), (std::vector<uint32_t>{0, 1, 2}));
}

TEST_F(HostStreams, ChunkedWritesReachTheHostInOrder) {
  StreamReader<uint32_t> reader(store, call1("produce", {Val::u32(1000), Val::u32(64)}));
  EXPECT_EQ(read_all(reader, 100), iota(1000));
  EXPECT_EQ(call_u32("writes-seen", {}), 16u) << "1000 elements in writes of 64 (the last of 40)";
}

TEST_F(HostStreams, ReaderFirstWaitsForTheGuestsWrite) {
  StreamReader<uint32_t> reader(store, call1("hold", {}));
  std::vector<uint32_t> got;
  CopyOutcome outcome{CopyStatus::Cancelled, 99};
  reader.start_read(store, 10, [&](std::vector<uint32_t> values, CopyOutcome o) {
    got = std::move(values);
    outcome = o;
  });
  store.run_until_idle();
  EXPECT_TRUE(reader.busy()) << "nothing written yet";
  PendingCall write = start("write-held", {Val::u32(3)});
  EXPECT_EQ(write.wait(store).at(0), Val::u32(0x30)) << "the guest's write completed with all 3";
  EXPECT_EQ(got, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(outcome.status, CopyStatus::Completed);
  EXPECT_EQ(outcome.count, 3u);
  call0("drop-held-writer");
}

TEST_F(HostStreams, ZeroLengthReadsOnEitherSide) {
  // The host's zero-length read completes once a write is there, taking nothing.
  StreamReader<uint32_t> reader(store, call1("produce", {Val::u32(5), Val::u32(5)}));
  EXPECT_TRUE(reader.read(store, 0).empty());
  EXPECT_FALSE(reader.ended());
  EXPECT_EQ(reader.read(store, 10), iota(5));
  // The guest's zero-length write completes when the host reads; 42 follows.
  StreamReader<uint32_t> probe(store, call1("probe-write", {}));
  EXPECT_EQ(read_all(probe, 10), (std::vector<uint32_t>{42}));
}

TEST_F(HostStreams, StringsAndDynamicValues) {
  StreamReader<std::string> typed(store, call1("produce-strings", {Val::u32(4)}));
  EXPECT_EQ(read_all(typed, 2), (std::vector<std::string>{"a", "ab", "abc", "abcd"}));
  StreamReader<Val> dynamic(store, call1("produce-strings", {Val::u32(3)}));
  EXPECT_EQ(read_all(dynamic, 8), (std::vector<Val>{Val::string("a"), Val::string("ab"), Val::string("abc")}));
}

TEST_F(HostStreams, AVariantReadOwnedAndVisitedInPlace) {
  StreamReader<Op> owned(store, call1("produce-ops", {Val::u32(7), Val::u32(4)}));
  const std::vector<Op> ops = read_all(owned, 3);
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(std::get<Num>(ops[3]).value, 3u);
  EXPECT_EQ(std::get<Text>(ops[4]).value, "abcde");
  EXPECT_TRUE(std::holds_alternative<None>(ops[5]));

  StreamReader<Op> visited(store, call1("produce-ops", {Val::u32(300), Val::u32(64)}));
  uint64_t nums = 0, text_bytes = 0, nones = 0;
  for (;;) {
    const uint64_t n = visited.read_visit<OpView>(store, [&](auto, const auto& c) {
      using C = std::decay_t<decltype(c)>;
      if constexpr (std::is_same_v<C, Num>) nums += c.value;
      else if constexpr (std::is_same_v<C, TextView>) text_bytes += c.value.size();
      else ++nones;
    });
    if (n == 0 && visited.ended()) break;
  }
  uint64_t want_nums = 0, want_bytes = 0;
  for (uint32_t i = 0; i < 300; ++i) {
    if (i % 3 == 0) want_nums += i;
    if (i % 3 == 1) want_bytes += i % 26 + 1;
  }
  EXPECT_EQ(nums, want_nums);
  EXPECT_EQ(text_bytes, want_bytes);
  EXPECT_EQ(nones, 100u);
}

TEST_F(HostStreams, BytesReadInPlace) {
  StreamReader<uint8_t> reader(store, call1("produce-bytes", {Val::u32(1000), Val::u32(300)}));
  uint64_t sum = 0, seen = 0;
  for (;;) {
    // Takes at most 128 of what each write offers: the rest stays for the next read.
    const uint64_t took = reader.read_direct(store, [&](std::span<const uint8_t> bytes) {
      const size_t n = std::min<size_t>(bytes.size(), 128);
      for (size_t i = 0; i < n; ++i) sum += bytes[i];
      return n;
    });
    seen += took;
    if (took == 0 && reader.ended()) break;
  }
  uint64_t want = 0;
  for (uint32_t i = 0; i < 1000; ++i) want += i & 0xff;
  EXPECT_EQ(seen, 1000u);
  EXPECT_EQ(sum, want);
}

// ---- the host writes ----

TEST_F(HostStreams, HostWritesIntoTheGuestsReads) {
  StreamWriter<uint32_t> writer(store, Type::u32());
  PendingCall consume = start("consume", {writer.readable(), Val::u32(3)});
  const std::vector<uint32_t> values = iota(11);
  const CopyOutcome wrote = writer.write(store, values);
  EXPECT_EQ(wrote.status, CopyStatus::Completed);
  EXPECT_EQ(wrote.count, 11u) << "over four reads of three";
  writer.close();
  EXPECT_EQ(consume.wait(store).at(0), Val::u32(55));
}

TEST_F(HostStreams, SeveralAsyncCallsInFlightInOneStore) {
  StreamWriter<uint32_t> first(store, Type::u32());
  StreamWriter<uint32_t> second(store, Type::u32());
  PendingCall one = start("consume", {first.readable(), Val::u32(2)});
  PendingCall two = start("consume", {second.readable(), Val::u32(5)});
  // Writes alternate between the two readers, each blocked in its own task.
  CopyOutcome a, b;
  first.start_write(store, {1, 2, 3, 4, 5}, [&](CopyOutcome o) { a = o; });
  second.start_write(store, {10, 20, 30}, [&](CopyOutcome o) { b = o; });
  store.run_until([&] { return !first.busy() && !second.busy(); });
  EXPECT_EQ(a.count, 5u);
  EXPECT_EQ(b.count, 3u);
  first.close();
  EXPECT_FALSE(two.done());
  second.close();
  store.run_until([&] { return one.done() && two.done(); });
  EXPECT_EQ(one.results().at(0), Val::u32(15));
  EXPECT_EQ(two.results().at(0), Val::u32(60));
}

TEST_F(HostStreams, ZeroLengthWritesOnEitherSide) {
  StreamWriter<uint32_t> writer(store, Type::u32());
  PendingCall some = start("consume-some", {writer.readable(), Val::u32(2)});
  const CopyOutcome nothing = writer.write(store, {});
  EXPECT_EQ(nothing.status, CopyStatus::Completed);
  EXPECT_EQ(nothing.count, 0u);
  EXPECT_FALSE(some.done()) << "a zero-length write leaves the guest's read waiting";
  const std::vector<uint32_t> two{5, 6};
  EXPECT_EQ(writer.write(store, two).count, 2u);
  EXPECT_EQ(some.wait(store).at(0), Val::u32(0x20));
  call0("drop-held-reader");

  // The guest's zero-length read completes when the host writes; 7 follows.
  StreamWriter<uint32_t> second(store, Type::u32());
  PendingCall probe = start("probe-read", {second.readable()});
  const std::vector<uint32_t> seven{7};
  EXPECT_EQ(second.write(store, seven).count, 1u);
  EXPECT_EQ(probe.wait(store).at(0), Val::u32(7));
}

TEST_F(HostStreams, StringsLoweredThroughTheReadersRealloc) {
  StreamWriter<std::string> typed(store, Type::string());
  PendingCall consume = start("consume-strings", {typed.readable()});
  const std::vector<std::string> words{"alpha", "abc", "a"};
  EXPECT_EQ(typed.write(store, words).count, 3u);
  typed.close();
  EXPECT_EQ(consume.wait(store).at(0), Val::u32(3009));

  StreamWriter<Val> dynamic(store, Type::string());
  PendingCall again = start("consume-strings", {dynamic.readable()});
  const std::vector<Val> vals{Val::string("ab"), Val::string("abcd")};
  EXPECT_EQ(dynamic.write(store, vals).count, 2u);
  dynamic.close();
  EXPECT_EQ(again.wait(store).at(0), Val::u32(2006));
}

TEST_F(HostStreams, BytesWrittenDirect) {
  StreamWriter<uint8_t> writer(store, Type::u8());
  PendingCall consume = start("consume-bytes", {writer.readable(), Val::u32(100)});
  std::vector<uint8_t> bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  EXPECT_EQ(writer.write_direct(store, bytes).count, 1000u);
  writer.close();
  uint32_t want = 0;
  for (uint8_t b : bytes) want += b;
  EXPECT_EQ(consume.wait(store).at(0), Val::u32(want));
}

// ---- cancel and drop ----

TEST_F(HostStreams, CancellingABlockedReadReportsNoProgress) {
  StreamReader<uint32_t> reader(store, call1("hold", {}));
  bool called = false;
  reader.start_read(store, 4, [&](std::vector<uint32_t>, CopyOutcome) { called = true; });
  store.run_until_idle();
  const CopyOutcome cancelled = reader.cancel();
  EXPECT_EQ(cancelled.status, CopyStatus::Cancelled);
  EXPECT_EQ(cancelled.count, 0u);
  EXPECT_TRUE(called) << "the started read ends with its outcome";
  EXPECT_FALSE(reader.busy());
  EXPECT_ERROR_SAYING(reader.cancel(), ErrorKind::Usage, "no copy in flight");
  call0("drop-held-writer");
  EXPECT_TRUE(reader.read(store, 1).empty());
  EXPECT_TRUE(reader.ended());
}

TEST_F(HostStreams, CancellingAWriteReportsWhatTheGuestTook) {
  StreamWriter<uint32_t> writer(store, Type::u32());
  PendingCall some = start("consume-some", {writer.readable(), Val::u32(2)});
  CopyOutcome outcome;
  writer.start_write(store, {1, 2, 3, 4, 5}, [&](CopyOutcome o) { outcome = o; });
  EXPECT_EQ(some.wait(store).at(0), Val::u32(0x20));
  EXPECT_TRUE(writer.busy()) << "three values wait for the next read";
  const CopyOutcome cancelled = writer.cancel();
  EXPECT_EQ(cancelled.status, CopyStatus::Cancelled);
  EXPECT_EQ(cancelled.count, 2u);
  EXPECT_EQ(outcome.count, 2u);
  call0("drop-held-reader");
}

TEST_F(HostStreams, DroppingAnIdleEndTellsTheGuest) {
  StreamReader<uint32_t> reader(store, call1("hold", {}));
  reader.close();
  EXPECT_TRUE(reader.ended());
  EXPECT_EQ(call_u32("write-held", {Val::u32(2)}), 1u) << "DROPPED, nothing written";
  call0("drop-held-writer");

  StreamWriter<uint32_t> writer(store, Type::u32());
  PendingCall consume = start("consume", {writer.readable(), Val::u32(4)});
  writer.close();
  EXPECT_EQ(consume.wait(store).at(0), Val::u32(0));
}

TEST_F(HostStreams, TheGuestDroppingItsEndMidCopy) {
  // A write in flight: the guest takes two, then drops its end.
  StreamWriter<uint32_t> writer(store, Type::u32());
  PendingCall some = start("consume-some", {writer.readable(), Val::u32(2)});
  CopyOutcome outcome{CopyStatus::Cancelled, 0};
  writer.start_write(store, {1, 2, 3, 4, 5}, [&](CopyOutcome o) { outcome = o; });
  some.wait(store);
  call0("drop-held-reader");
  store.run_until_idle();
  EXPECT_EQ(outcome.status, CopyStatus::Dropped);
  EXPECT_EQ(outcome.count, 2u);
  EXPECT_TRUE(writer.ended());

  // A read in flight: the guest drops its writable end.
  StreamReader<uint32_t> reader(store, call1("hold", {}));
  CopyOutcome read_outcome;
  reader.start_read(store, 4, [&](std::vector<uint32_t>, CopyOutcome o) { read_outcome = o; });
  call0("drop-held-writer");
  store.run_until_idle();
  EXPECT_EQ(read_outcome.status, CopyStatus::Dropped);
  EXPECT_TRUE(reader.ended());
}

// The dynamic ends share the typed ends' host end: the same rules, seen
// through Vals.
TEST_F(HostStreams, DynamicEndsFollowTheSameRules) {
  // Partial reads of one parked write, a zero-length read, the end.
  StreamReader<Val> reader(store, call1("produce", {Val::u32(5), Val::u32(5)}));
  EXPECT_TRUE(reader.read(store, 0).empty());
  EXPECT_EQ(reader.read(store, 2), (std::vector<Val>{Val::u32(0), Val::u32(1)}));
  const Val rest = reader.read_list(store, 10);
  EXPECT_EQ(rest.list_size(), 3u);
  EXPECT_EQ(rest.list_element(2), Val::u32(4));
  EXPECT_EQ(reader.read_list(store, 10).list_size(), 0u);
  EXPECT_TRUE(reader.ended());

  // A write cancelled with progress, then the reader gone mid-copy.
  StreamWriter<Val> writer(store, Type::u32());
  PendingCall some = start("consume-some", {writer.readable(), Val::u32(2)});
  CopyOutcome outcome;
  writer.start_write(store, {Val::u32(7), Val::u32(8), Val::u32(9)}, [&](CopyOutcome o) { outcome = o; });
  EXPECT_EQ(some.wait(store).at(0), Val::u32(0x20));
  EXPECT_EQ(writer.cancel().count, 2u);
  call0("drop-held-reader");
  EXPECT_EQ(writer.write(store, std::vector<Val>{Val::u32(1)}).status, CopyStatus::Dropped);
  EXPECT_TRUE(writer.ended());

  // A value of the wrong type is refused before anything is written.
  StreamWriter<Val> strings(store, Type::u32());
  PendingCall consume = start("consume", {strings.readable(), Val::u32(4)});
  EXPECT_ERROR(strings.write(store, std::vector<Val>{Val::string("no")}), ErrorKind::InvalidValue);
  strings.close();
  EXPECT_EQ(consume.wait(store).at(0), Val::u32(0));
}

// ---- futures ----

TEST_F(HostStreams, FuturesReadAndWrittenOnce) {
  FutureReader<uint32_t> three(store, call1("future-of", {Val::u32(5)}));
  EXPECT_EQ(three.read(store), std::optional<uint32_t>(15));
  EXPECT_TRUE(three.ended());
  EXPECT_ERROR_SAYING(three.read(store), ErrorKind::Usage, "value has moved");

  FutureReader<Val> dynamic(store, call1("future-of", {Val::u32(2)}));
  EXPECT_EQ(dynamic.read(store), std::optional<Val>(Val::u32(6)));

  FutureWriter<uint32_t> writer(store, Type::u32());
  PendingCall awaiting = start("await-future", {writer.readable()});
  EXPECT_TRUE(writer.write(store, 9));
  EXPECT_EQ(awaiting.wait(store).at(0), Val::u32(10));
  writer.close();
}

TEST_F(HostStreams, AFutureReadStartedFinishesFromTheLoop) {
  FutureReader<uint32_t> reader(store, call1("future-of", {Val::u32(4)}));
  std::optional<std::optional<uint32_t>> got;
  reader.start_read(store, [&](std::optional<uint32_t> value) { got = value; });
  store.run_until([&] { return got.has_value(); });
  EXPECT_EQ(*got, std::optional<uint32_t>(12));
  EXPECT_TRUE(reader.ended());
}

TEST_F(HostStreams, ACallSaysWhenItIsDone) {
  FutureWriter<uint32_t> writer(store, Type::u32());
  PendingCall awaiting = start("await-future", {writer.readable()});
  int told = 0;
  awaiting.on_done(store, [&] { ++told; });
  store.run_until_idle();
  EXPECT_EQ(told, 0) << "the call still waits for its future";
  writer.start_write(store, 4, [](CopyOutcome) {});
  store.run_until([&] { return told > 0; });
  EXPECT_EQ(told, 1);
  EXPECT_EQ(awaiting.results().at(0), Val::u32(5));
  // A call done already is told on the loop's next step.
  int later = 0;
  awaiting.on_done(store, [&] { ++later; });
  EXPECT_EQ(later, 0);
  store.run_until([&] { return later > 0; });
  EXPECT_EQ(later, 1);
  Store other(engine);
  EXPECT_ERROR_SAYING(awaiting.on_done(other, [] {}), ErrorKind::Usage, "another store");
}

TEST_F(HostStreams, AReaderGoesBackToAHandleTheHostHolds) {
  StreamReader<uint32_t> reader(store, call1("produce", {Val::u32(6), Val::u32(2)}));
  EXPECT_EQ(reader.read(store, 2), (std::vector<uint32_t>{0, 1}));
  const abi::typed::Stream<uint32_t> handle = reader.into_handle(store);
  EXPECT_TRUE(reader.ended());
  EXPECT_ERROR_SAYING(reader.read(store, 1), ErrorKind::Usage, "closed");
  EXPECT_ERROR_SAYING(reader.into_handle(store), ErrorKind::Usage, "closed");
  // The stream goes on where it was, for whoever takes the handle.
  StreamReader<uint32_t> again(store, handle);
  EXPECT_EQ(read_all(again, 16), (std::vector<uint32_t>{2, 3, 4, 5}));

  FutureReader<uint32_t> future(store, call1("future-of", {Val::u32(1)}));
  FutureReader<uint32_t> future_again(store, future.into_handle(store));
  EXPECT_EQ(future_again.read(store), std::optional<uint32_t>(3));
  EXPECT_ERROR_SAYING(future_again.into_handle(store), ErrorKind::Usage, "value has moved");
}

TEST_F(HostStreams, FutureCopiesCancel) {
  // Both ends held by the host: neither copy can meet a guest's.
  FutureWriter<uint32_t> writer(store, Type::u32());
  FutureReader<uint32_t> reader(store, writer.readable());
  CopyOutcome read{CopyStatus::Completed, 9}, wrote{CopyStatus::Completed, 9};
  reader.start_in_place(store, 1, [](abi::AbiContext&, uint64_t, uint64_t) -> uint64_t { return 1; },
                        [&](CopyOutcome o) { read = o; });
  writer.start_in_place(store, 1, [](abi::AbiContext&, uint64_t, uint64_t) -> uint64_t { return 1; },
                        [&](CopyOutcome o) { wrote = o; });
  store.run_until_idle();
  EXPECT_TRUE(reader.busy());
  EXPECT_TRUE(writer.busy());
  EXPECT_EQ(reader.cancel().status, CopyStatus::Cancelled);
  EXPECT_EQ(writer.cancel().status, CopyStatus::Cancelled);
  EXPECT_EQ(read.status, CopyStatus::Cancelled);
  EXPECT_EQ(read.count, 0u);
  EXPECT_EQ(wrote.status, CopyStatus::Cancelled);
  EXPECT_FALSE(reader.ended()) << "a cancelled future copy may be tried again";
}

TEST_F(HostStreams, AFutureWriterClosesOnlyOnceWritten) {
  FutureWriter<uint32_t> writer(store, Type::u32());
  EXPECT_ERROR_SAYING(writer.close(), ErrorKind::Usage, "once its value is written");
  // Written, the end may close.
  PendingCall awaiting = start("await-future", {writer.readable()});
  EXPECT_TRUE(writer.write(store, 1));
  writer.close();
  EXPECT_EQ(awaiting.wait(store).at(0), Val::u32(2));
}

// ---- errors ----

TEST_F(HostStreams, ATrapInTheWriterSaysHowMuchMoved) {
  StreamReader<uint32_t> reader(store, call1("produce-then-trap", {Val::u32(4)}));
  EXPECT_EQ(reader.read(store, 10), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_ERROR_SAYING(reader.read(store, 10), ErrorKind::Trap, "moved 4 element(s) through this end");
}

TEST_F(HostStreams, OneCopyInFlightPerEnd) {
  StreamReader<uint32_t> reader(store, call1("hold", {}));
  reader.start_read(store, 1, [](std::vector<uint32_t>, CopyOutcome) {});
  EXPECT_ERROR_SAYING(reader.read(store, 1), ErrorKind::Usage, "another copy is in flight");
  EXPECT_ERROR_SAYING(reader.close(), ErrorKind::Usage, "cancel it before closing");
  reader.cancel();
  call0("drop-held-writer");
}

TEST_F(HostStreams, WaitingForAWriteNoGuestCanMakeIsADeadlock) {
  StreamReader<uint32_t> reader(store, call1("hold", {}));
  EXPECT_ERROR_SAYING(reader.read(store, 1), ErrorKind::Trap, "deadlock");
  EXPECT_FALSE(reader.busy()) << "the failed read is over";
  call0("drop-held-writer");
  EXPECT_TRUE(reader.read(store, 1).empty());
}

TEST_F(HostStreams, ElementTypesMustMatch) {
  // A refused reader leaves the end where it was.
  const Val numbers = call1("produce", {Val::u32(2), Val::u32(2)});
  EXPECT_ERROR_SAYING(StreamReader<std::string>(store, numbers), ErrorKind::InvalidValue, "elements are u32");
  StreamReader<uint32_t> reader(store, numbers);
  EXPECT_EQ(reader.read(store, 5), (std::vector<uint32_t>{0, 1}));
  // The store remembers the match of u32 with uint32_t, not with every type.
  const Val more = call1("produce", {Val::u32(2), Val::u32(2)});
  EXPECT_ERROR_SAYING(StreamReader<std::string>(store, more), ErrorKind::InvalidValue, "elements are u32");
  EXPECT_ERROR_SAYING(StreamReader<int32_t>(store, more), ErrorKind::InvalidValue, "elements are u32");
  EXPECT_EQ(StreamReader<uint32_t>(store, more).read(store, 5), (std::vector<uint32_t>{0, 1}));
  EXPECT_ERROR_SAYING(StreamWriter<std::string>(store, Type::u32()), ErrorKind::InvalidValue, "elements are u32");
  EXPECT_ERROR_SAYING(StreamReader<uint32_t>(store, Val::u32(1)), ErrorKind::InvalidValue, "not a u32");
  EXPECT_ERROR(FutureReader<uint32_t>(store, call1("produce", {Val::u32(1), Val::u32(1)})), ErrorKind::InvalidValue);
  // A host-made stream handed to a parameter of another element type.
  StreamWriter<std::string> strings(store, Type::string());
  EXPECT_ERROR_SAYING(instance.func("consume").call(store, std::vector<Val>{strings.readable(), Val::u32(1)}),
               ErrorKind::InvalidValue, "elements are of another type");
}

TEST_F(HostStreams, EndsOutlivingTheirStore) {
  auto other = std::make_unique<Store>(engine);
  Instance i = Linker().instantiate(*other, component);
  const std::vector<Val> args{Val::u32(3), Val::u32(3)};
  StreamReader<uint32_t> reader(*other, i.func("produce").call(*other, args).at(0));
  StreamWriter<uint32_t> writer(*other, Type::u32());
  EXPECT_ERROR_SAYING(reader.read(store, 1), ErrorKind::Usage, "another store");
  // A started read whose callback holds its own reader: the store going
  // lets go of both (the sanitizer build checks nothing leaks).
  auto held = std::make_shared<StreamReader<uint32_t>>(*other, i.func("hold").call(*other, {}).at(0));
  held->start_read(*other, 1, [held](std::vector<uint32_t>, CopyOutcome) {});
  other.reset();
  EXPECT_ERROR_SAYING(reader.read(store, 1), ErrorKind::Usage, "store is gone");
  EXPECT_FALSE(held->busy());
  EXPECT_NO_THROW(writer.close());
}

// ---- copies that wait on a descriptor too (start_when_ready) ----

// A pipe whose ends close with the test.
struct Pipe {
  Pipe() { EXPECT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0); }
  ~Pipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  int fds[2] = {-1, -1};
};

// A step reading u32s from the pipe into the guest's read, counting its calls.
ChannelEnd::ReadyStep read_u32s(const Pipe& pipe, int& steps) {
  return [fd = pipe.fds[0], &steps](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> std::optional<uint64_t> {
    ++steps;
    const ssize_t got = ::read(fd, cx.base() + ptr, n * 4);
    if (got < 0 && errno == EAGAIN) return 0;
    return got < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(got) / 4);
  };
}

TEST_F(HostStreams, AWriteWaitsForItsDescriptorThenFillsTheGuestsRead) {
  Pipe pipe;
  StreamWriter<uint32_t> writer(store, Type::u32());
  PendingCall some = start("consume-some", {writer.readable(), Val::u32(2)});
  int steps = 0;
  CopyOutcome outcome{CopyStatus::Cancelled, 0};
  writer.start_when_ready(
      store, pipe.fds[0], POLLIN, 2, read_u32s(pipe, steps),
      [&](CopyOutcome o) { outcome = o; });
  store.run_until_idle();
  EXPECT_EQ(steps, 1) << "one look, which would have blocked; then the reactor waits";
  EXPECT_FALSE(some.done());
  const uint32_t values[2] = {5, 6};
  ASSERT_EQ(::write(pipe.fds[1], values, sizeof values), static_cast<ssize_t>(sizeof values));
  EXPECT_EQ(some.wait(store).at(0), Val::u32(0x20)) << "COMPLETED with two";
  EXPECT_EQ(outcome.status, CopyStatus::Completed);
  EXPECT_EQ(outcome.count, 2u);
  EXPECT_EQ(steps, 2);
  call0("drop-held-reader");
}

// A zero-length read asks whether anything is there: a copy waiting on a
// descriptor answers once the descriptor has it (a socket's readiness),
// and the read after it meets the host's step inside the guest's call.
TEST_F(HostStreams, AZeroLengthReadWaitsForTheDescriptor) {
  Pipe pipe;
  StreamWriter<uint32_t> writer(store, Type::u32());
  int steps = 0;
  CopyOutcome outcome{CopyStatus::Cancelled, 0};
  writer.start_when_ready(
      store, pipe.fds[0], POLLIN, 1, read_u32s(pipe, steps),
      [&](CopyOutcome o) { outcome = o; });
  // probe-read: a zero-length read, then one element.
  PendingCall probe = start("probe-read", {writer.readable()});
  store.run_until_idle();
  EXPECT_FALSE(probe.done()) << "nothing to read yet";
  EXPECT_EQ(steps, 0) << "the probe does not step";
  const uint32_t seven = 7;
  ASSERT_EQ(::write(pipe.fds[1], &seven, 4), 4);
  EXPECT_EQ(probe.wait(store).at(0), Val::u32(7));
  EXPECT_EQ(steps, 1) << "the read after the probe found the element at once";
  EXPECT_EQ(outcome.count, 1u);
}

TEST_F(HostStreams, TheGuestDroppingItsEndEndsACopyWaitingOnItsDescriptor) {
  Pipe pipe;  // never written: the descriptor never becomes ready
  StreamWriter<uint32_t> writer(store, Type::u32());
  // The guest reads one element and keeps its end.
  PendingCall some = start("consume-some", {writer.readable(), Val::u32(1)});
  const std::vector<uint32_t> one{1};
  EXPECT_EQ(writer.write(store, one).count, 1u);
  EXPECT_EQ(some.wait(store).at(0), Val::u32(0x10));
  CopyOutcome outcome{CopyStatus::Cancelled, 0};
  writer.start_when_ready(
      store, pipe.fds[0], POLLIN, 4, [](abi::AbiContext&, uint64_t, uint64_t) -> std::optional<uint64_t> { return 0; },
      [&](CopyOutcome o) { outcome = o; });
  store.run_until_idle();
  EXPECT_TRUE(writer.busy());
  call0("drop-held-reader");
  store.run_until_idle();
  EXPECT_EQ(outcome.status, CopyStatus::Dropped) << "at once, without the descriptor";
  EXPECT_FALSE(writer.busy());
}

TEST_F(HostStreams, AReadTakesWhatItsDescriptorTakesAndWaitsForTheRest) {
  Pipe pipe;
  const int capacity = ::fcntl(pipe.fds[1], F_SETPIPE_SZ, 4096);
  ASSERT_GT(capacity, 0);
  // The guest writes more bytes than the pipe holds, in one write; the host
  // moves them into the pipe as it drains, never spinning while it is full.
  const uint32_t total = static_cast<uint32_t>(capacity) + 1000;
  StreamReader<uint8_t> reader(store, call1("produce-bytes", {Val::u32(total), Val::u32(total)}));
  uint64_t moved = 0, would_block = 0;
  bool ended = false;
  std::function<void()> next = [&] {
    reader.start_when_ready(
        store, pipe.fds[1], POLLOUT, UINT64_MAX,
        [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> std::optional<uint64_t> {
          const ssize_t wrote = ::write(pipe.fds[1], cx.base() + ptr, n);
          if (wrote < 0 && errno == EAGAIN) {
            ++would_block;
            return 0;
          }
          return wrote < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(wrote));
        },
        [&](CopyOutcome o) {
          moved += o.count;
          if (o.status == CopyStatus::Dropped)
            ended = true;
          else
            next();
        });
  };
  next();
  std::vector<uint8_t> drained;
  uint8_t buffer[4096];
  while (moved < total) {
    store.run_until_idle();
    ssize_t got;
    while ((got = ::read(pipe.fds[0], buffer, sizeof buffer)) > 0) drained.insert(drained.end(), buffer, buffer + got);
  }
  EXPECT_EQ(drained.size(), total);
  for (size_t i = 0; i < drained.size(); ++i)
    if (drained[i] != static_cast<uint8_t>(i)) FAIL() << "byte " << i << " is " << int(drained[i]);
  EXPECT_GT(would_block, 0u) << "the pipe filled at least once";
  EXPECT_LT(would_block, 10u) << "and the copy waited in the reactor rather than retrying";
  store.run_until_idle();
  EXPECT_TRUE(ended);
}

}  // namespace
}  // namespace cmhost
