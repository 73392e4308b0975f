// Bindings split into a header per interface (`cmhost bindgen --split`)
// under a namespace of their own (`--interface-namespace split`), included
// here beside the one-header bindings of the same worlds: two sets of
// bindings of one WIT live in one program, and the split host-resources
// world runs its component as the one-header one does.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

#include "../support/test_engine.hpp"
#include "host-resources-split/world.hpp"
#include "host-resources.hpp"
#include "packages-split/world.hpp"
#include "packages.hpp"

namespace {

namespace files = split::cmhost_::test::files;

class SizedFile final : public files::File {
 public:
  SizedFile(uint32_t size, int& live) : size_(size), live_(live) { ++live_; }
  ~SizedFile() override { --live_; }
  uint32_t size(cmhost::Caller&) override { return size_; }

 private:
  uint32_t size_;
  int& live_;
};

class FileHost final : public files::Host {
 public:
  int live = 0;
  std::unique_ptr<files::File> file_new(cmhost::Caller&, uint32_t size) override {
    return std::make_unique<SizedFile>(size, live);
  }
};

TEST(BindgenSplit, SplitHeadersRunTheirWorld) {
  // The split bindings' types are not the one-header ones'.
  static_assert(!std::is_same_v<split::cmhost_::test::files::File, cmhost_::test::files::File>);
  cmhost::Engine engine{cmhost::testing_support::test_engine_config()};
  cmhost::Store store{engine};
  cmhost::Linker linker;
  auto host = std::make_shared<FileHost>();
  const files::Resources resources = files::add_to_linker(linker, host);
  const auto world = split::host_resources::World::instantiate(
      store, cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-resources.wasm"),
      linker);
  EXPECT_EQ(world.run(store), 7u);
  EXPECT_EQ(host->live, 0);
  const auto own = resources.file.make_own(store, std::make_unique<SizedFile>(9, host->live));
  EXPECT_EQ(host->live, 1);
  EXPECT_EQ(world.take(store, own), 9u);
  EXPECT_EQ(host->live, 0);
}

// A type one interface uses from another (the header includes the other's):
// the split packages world's classes, implemented, must compile and link.
namespace wall = split::example::clock::v0_2_0::wall;

class ClockNow final : public wall::Host {
 public:
  wall::Datetime now(cmhost::Caller&) override { return {1, 2}; }
};

class TextHost final : public split::example::util::text::Host, public split::packages::Host {
 public:
  std::string stamp(cmhost::Caller&, wall::Datetime at, std::string message) override {
    return std::to_string(at.seconds) + " " + message;
  }
  void log(cmhost::Caller&, std::string) override {}
};

class OtherClock final : public example::clock::v0_2_0::wall::Host {
 public:
  example::clock::v0_2_0::wall::Datetime now(cmhost::Caller&) override { return {}; }
};

TEST(BindgenSplit, InterfacesUsingEachOthersTypesLink) {
  cmhost::Linker linker;
  wall::add_to_linker(linker, std::make_shared<ClockNow>());
  const auto text_host = std::make_shared<TextHost>();
  split::example::util::text::add_to_linker(linker, text_host);
  split::packages::add_to_linker(linker, std::static_pointer_cast<split::packages::Host>(text_host));
  // The one-header bindings of the same interface, in the same program.
  cmhost::Linker other;
  EXPECT_NO_THROW(example::clock::v0_2_0::wall::add_to_linker(other, std::make_shared<OtherClock>()));
}

}  // namespace
