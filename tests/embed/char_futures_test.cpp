// future<char> against tests/components/char-futures.wat: chars from a
// guest to the host and from the host to a guest, typed (char32_t) and
// dynamic (Val), and from one component's memory into another's. A char is
// a u32 that must be a Unicode scalar value (CanonicalABI.md's
// convert_i32_to_char): one that is not traps wherever it is lifted, and the
// host cannot write one. stream<char> is no valid type (the Component Model
// rejects it for now), so the host cannot make one either.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/streams.hpp"

namespace cmhost {
namespace {

using abi::Type;

class CharFutures : public ::testing::Test {
 protected:
  // The readable end of a future the guest writes `code` to, as it is.
  Val future_of(uint32_t code) { return instance.func("char-future").call(store, std::vector<Val>{Val::u32(code)}).at(0); }
  // What the guest read from a future the host writes.
  PendingCall read_char(const Val& future) { return instance.func("read-char").call_async(store, std::vector<Val>{future}); }
  // The char of a future made by one component, as the other read it.
  Val relay(uint32_t code) { return instance.func("relay-char").call(store, std::vector<Val>{Val::u32(code)}).at(0); }

  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Instance instance = Linker().instantiate(
      store, Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/char-futures.wasm"));
};

TEST_F(CharFutures, TheHostReadsAGuestsChar) {
  FutureReader<char32_t> snowman(store, future_of(0x2603));
  EXPECT_EQ(snowman.read(store), std::optional<char32_t>(U'\u2603'));
  FutureReader<char32_t> last(store, future_of(0x10FFFF));
  EXPECT_EQ(last.read(store), std::optional<char32_t>(U'\U0010FFFF'));
  FutureReader<Val> dynamic(store, future_of(0x1F600));
  EXPECT_EQ(dynamic.read(store), std::optional<Val>(Val::char_(U'\U0001F600')));
}

TEST_F(CharFutures, TheHostWritesAGuestsChar) {
  FutureWriter<char32_t> typed(store, Type::char_());
  PendingCall typed_read = read_char(typed.readable());
  EXPECT_TRUE(typed.write(store, U'\uE000'));
  EXPECT_EQ(typed_read.wait(store).at(0), Val::u32(0xE000));
  FutureWriter<Val> dynamic(store, Type::char_());
  PendingCall dynamic_read = read_char(dynamic.readable());
  EXPECT_TRUE(dynamic.write(store, Val::char_(U'a')));
  EXPECT_EQ(dynamic_read.wait(store).at(0), Val::u32('a'));
}

TEST_F(CharFutures, CharsCrossFromOneComponentsMemoryIntoAnothers) {
  for (uint32_t code : {0u, 0x41u, 0xD7FFu, 0xE000u, 0x10FFFFu}) EXPECT_EQ(relay(code), Val::u32(code)) << code;
}

TEST_F(CharFutures, ASurrogateFromAGuestTrapsTheHostsTypedRead) {
  FutureReader<char32_t> reader(store, future_of(0xD800));
  EXPECT_ERROR_SAYING(reader.read(store), ErrorKind::Trap, "char code point 55296 is a surrogate");
}

TEST_F(CharFutures, ASurrogateFromAGuestTrapsTheHostsDynamicRead) {
  FutureReader<Val> reader(store, future_of(0xDFFF));
  EXPECT_ERROR_SAYING(reader.read(store), ErrorKind::Trap, "char code point 57343 is a surrogate");
}

TEST_F(CharFutures, ASurrogateTrapsTheCopyBetweenComponents) {
  EXPECT_ERROR_SAYING(relay(0xDBFF), ErrorKind::Trap, "char code point 56319 is a surrogate");
}

TEST_F(CharFutures, ACodePointAboveUnicodeTrapsTheCopyBetweenComponents) {
  EXPECT_ERROR_SAYING(relay(0x110000), ErrorKind::Trap, "char code point 1114112 is above 0x10FFFF");
}

TEST_F(CharFutures, TheHostCannotWriteASurrogate) {
  FutureWriter<char32_t> writer(store, Type::char_());
  PendingCall reading = read_char(writer.readable());
  EXPECT_ERROR_SAYING(writer.write(store, char32_t{0xD800}), ErrorKind::InvalidValue, "55296");
  // Nothing reached the guest: its read still waits for a char.
  EXPECT_TRUE(writer.write(store, U'z'));
  EXPECT_EQ(reading.wait(store).at(0), Val::u32('z'));
}

// The guest's read meets the host's write inside its call: the host's
// mistake is the loop's to report, and the guest goes on waiting.
TEST_F(CharFutures, ASurrogateTheHostStartedIsReportedByTheLoopNotTrappedInTheGuest) {
  FutureWriter<char32_t> writer(store, Type::char_());
  bool done = false;
  writer.start_write(store, char32_t{0xD800}, [&](CopyOutcome) { done = true; });
  PendingCall reading = read_char(writer.readable());
  EXPECT_ERROR_SAYING(store.run_until_idle(), ErrorKind::InvalidValue, "55296");
  EXPECT_FALSE(done) << "the copy was abandoned";
  EXPECT_FALSE(reading.done()) << "the guest did not trap: its read still waits";
  EXPECT_TRUE(writer.write(store, U'z'));
  EXPECT_EQ(reading.wait(store).at(0), Val::u32('z'));
}

TEST_F(CharFutures, StreamsOfCharAreNoValidType) {
  EXPECT_ERROR_SAYING(StreamWriter<char32_t>(store, Type::char_()), ErrorKind::InvalidValue,
                      "`stream<char>` is not valid");
  EXPECT_ERROR_SAYING(StreamWriter<Val>(store, Type::char_()), ErrorKind::InvalidValue, "`stream<char>` is not valid");
  EXPECT_ERROR_SAYING(Type::stream(Type::char_()), ErrorKind::Validate, "`stream<char>` is not valid");
}

}  // namespace
}  // namespace cmhost
