// Streams, futures and async functions through generated headers:
// host-async.hpp, generated from the component tests/components/host-async.wat
// (async imports slow-double and count-bytes, async exports calling them),
// runs with its Host implemented in C++ types; channels.hpp, generated from
// tests/bindgen/channels, is compiled here with -Werror, its classes
// implemented, and the component types it declares for the host's writers
// checked.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "../support/test_engine.hpp"
#include "channels.hpp"
#include "host-async.hpp"

namespace {

using cmhost::abi::typed::Result;

// slow-double completes when the test says; count-bytes reads the guest's
// stream from the event loop until the guest drops it.
class AsyncHost final : public host_async::Host {
 public:
  void slow_double(cmhost::Caller&, uint32_t x, cmhost::TypedCompletion<uint32_t> completion) override {
    if (at_once) return completion.complete(2 * x);
    pending.emplace_back(x, std::move(completion));
  }
  void count_bytes(cmhost::Caller& caller, cmhost::StreamReader<uint8_t> s,
                   cmhost::TypedCompletion<uint32_t> completion) override {
    auto counter = std::make_shared<Counter>(caller.store(), std::move(s), std::move(completion));
    counter->next(counter);
  }
  std::deque<std::pair<uint32_t, cmhost::TypedCompletion<uint32_t>>> pending;
  bool at_once = false;

 private:
  struct Counter {
    Counter(cmhost::Store& store, cmhost::StreamReader<uint8_t> reader, cmhost::TypedCompletion<uint32_t> done)
        : store(store), reader(std::move(reader)), done(std::move(done)) {}
    void next(std::shared_ptr<Counter> self) {
      reader.start_read(store, 1024, [self](std::vector<uint8_t> bytes, cmhost::CopyOutcome outcome) {
        self->total += static_cast<uint32_t>(bytes.size());
        if (outcome.status == cmhost::CopyStatus::Dropped) return self->done.complete(self->total);
        self->next(self);
      });
    }
    cmhost::Store& store;
    cmhost::StreamReader<uint8_t> reader;
    cmhost::TypedCompletion<uint32_t> done;
    uint32_t total = 0;
  };
};

TEST(BindgenChannels, AsyncImportsAndExportsInCppTypes) {
  cmhost::Engine engine(cmhost::testing_support::test_engine_config());
  cmhost::Store store(engine);
  const auto component =
      cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-async.wasm");
  cmhost::Linker linker;
  auto host = std::make_shared<AsyncHost>();
  host_async::add_to_linker(linker, host);
  const auto world = host_async::World::instantiate(store, component, linker);

  cmhost::TypedPendingCall<uint32_t> pair = world.stackful_pair_async(store, 3, 5);
  store.run_until_idle();
  ASSERT_EQ(host->pending.size(), 2u) << "both calls started before either completed";
  EXPECT_FALSE(pair.done());
  host->pending[1].second.complete(10);
  store.run_until_idle();
  host->pending[0].second.complete(6);
  EXPECT_EQ(pair.wait(store), 2'006'010u) << "b returned first";

  EXPECT_EQ(world.send_bytes(store, 1000, 64), 1000u);
  host->pending.clear();
  cmhost::TypedPendingCall<uint32_t> callback = world.callback_pair_async(store, 1, 2);
  store.run_until_idle();
  ASSERT_EQ(host->pending.size(), 2u);
  for (auto& [x, done] : host->pending) done.complete(2 * x);
  EXPECT_EQ(callback.wait(store), 1'002'004u);
  host->at_once = true;  // a synchronous lower waits for the completion
  EXPECT_EQ(world.sync_double(store, 4), 8u);
}

TEST(BindgenChannels, AnAsyncExportIsNotATypedFunc) {
  cmhost::Engine engine(cmhost::testing_support::test_engine_config());
  cmhost::Store store(engine);
  const auto component =
      cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-async.wasm");
  cmhost::Linker linker;
  host_async::add_to_linker(linker, std::make_shared<AsyncHost>());
  const cmhost::Instance instance = linker.instantiate(store, component);
  EXPECT_THROW(instance.typed_func<uint32_t(uint32_t, uint32_t)>("send-bytes"), cmhost::Error);
  EXPECT_THROW(instance.typed_async_func<uint32_t(uint32_t)>("sync-double"), cmhost::Error);
  EXPECT_THROW(instance.typed_async_func<uint32_t(uint32_t)>("send-bytes"), cmhost::Error);
}

namespace files = cmhost_::channels::files;

// The interface's types are what the WIT says, for the host's writers.
TEST(BindgenChannels, DeclaredTypesKnowTheirComponentTypes) {
  using cmhost::abi::typed::wit_type;
  EXPECT_EQ(wit_type<files::Entry>()->to_wit(), "record { name: string, size: u64 }");
  EXPECT_EQ(wit_type<files::Error>()->to_wit(), "variant { missing, denied(string) }");
  EXPECT_EQ(wit_type<files::Mode>()->to_wit(), "enum { read, write }");
  EXPECT_EQ(wit_type<files::Perms>()->to_wit(), "flags { exec, hidden }");
  EXPECT_EQ((wit_type<Result<void, files::Error>>()->to_wit()), "result<_, variant { missing, denied(string) }>");

  cmhost::Engine engine(cmhost::testing_support::test_engine_config());
  cmhost::Store store(engine);
  cmhost::StreamWriter<files::Entry> entries(store);
  EXPECT_EQ(entries.element_type()->to_wit(), "record { name: string, size: u64 }");
  cmhost::FutureWriter<Result<void, files::Error>> done(store);
  EXPECT_EQ(done.element_type()->kind(), cmhost::abi::TypeKind::Result);
}

// The generated classes, implemented: they must compile.
class File final : public files::File {
 public:
  std::tuple<cmhost::abi::typed::Stream<uint8_t>, cmhost::abi::typed::Future<Result<void, files::Error>>> read(
      cmhost::Caller& caller, uint64_t) override {
    cmhost::StreamWriter<uint8_t> bytes(caller.store());
    cmhost::FutureWriter<Result<void, files::Error>> done(caller.store());
    return {bytes.readable_handle(), done.readable_handle()};
  }
  cmhost::abi::typed::Future<Result<void, files::Error>> write(cmhost::Caller& caller,
                                                               cmhost::StreamReader<uint8_t>) override {
    cmhost::FutureWriter<Result<void, files::Error>> done(caller.store());
    return done.readable_handle();
  }
  void size(cmhost::Caller&, cmhost::TypedCompletion<Result<uint64_t, files::Error>> completion) override {
    completion.complete(Result<uint64_t, files::Error>::ok(0));
  }
};

class FilesHost final : public files::Host {
 public:
  void open(cmhost::Caller&, std::string, files::Mode,
            cmhost::TypedCompletion<Result<cmhost::abi::typed::Own<files::File>, files::Error>> completion) override {
    completion.complete(Result<cmhost::abi::typed::Own<files::File>, files::Error>::err(files::error::Missing{}));
  }
  cmhost::abi::typed::Stream<files::Entry> entries(cmhost::Caller& caller) override {
    return cmhost::StreamWriter<files::Entry>(caller.store()).readable_handle();
  }
  cmhost::abi::typed::Future<uint32_t> watch(cmhost::Caller& caller, cmhost::FutureReader<files::Perms>,
                                             cmhost::abi::typed::Stream<void>) override {
    return cmhost::FutureWriter<uint32_t>(caller.store()).readable_handle();
  }
  std::string describe(cmhost::Caller&, cmhost::abi::typed::ErrorContext) override { return "?"; }
  Result<cmhost::abi::typed::Stream<cmhost::abi::typed::Own<files::File>>, files::Error> files_of(
      cmhost::Caller&) override {
    return Result<cmhost::abi::typed::Stream<cmhost::abi::typed::Own<files::File>>, files::Error>::err(
        files::error::Denied{"no"});
  }
};

TEST(BindgenChannels, GeneratedClassesAddToALinker) {
  cmhost::Linker linker;
  const files::Resources resources = files::add_to_linker(linker, std::make_shared<FilesHost>());
  EXPECT_EQ(resources.file.type()->name, "file");
}

}  // namespace
