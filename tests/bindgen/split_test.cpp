// Bindings split into a header per interface (`cmhost bindgen --split`)
// under a namespace of their own (`--interface-namespace split`), included
// here beside the one-header bindings of the same worlds: two sets of
// bindings of one WIT live in one program, and the split host-resources
// world runs its component as the one-header one does.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

// First, so it must compile on its own: an interface's header includes the
// headers of the interfaces whose types it uses.
#include "packages-split/example-util-text.hpp"

#include "host-resources-split/world.hpp"
#include "host-resources.hpp"
#include "host_files.hpp"
#include "packages-split/world.hpp"
#include "packages.hpp"

namespace {

namespace files = split::cmhost_::test::files;

TEST(BindgenSplit, SplitHeadersRunTheirWorld) {
  // The split bindings' types are not the one-header ones'.
  static_assert(!std::is_same_v<files::File, cmhost_::test::files::File>);
  cmhost::testing_support::expect_host_files_run<split::host_resources::World, files::File>(&files::add_to_linker);
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
