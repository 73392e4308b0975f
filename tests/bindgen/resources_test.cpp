// Resources through generated headers: host-resources.hpp, generated from
// the component tests/components/host-resources.wat (its world: a host
// resource `file` with a constructor and a method, root exports `run` and
// `take`), runs; resources.hpp and packages.hpp, generated from WIT, are
// compiled here with -Werror and their classes implemented, so a change in
// what bindgen writes that no longer compiles fails the build.
#include <gtest/gtest.h>

#include <string>

#include "../support/test_engine.hpp"
#include "host_files.hpp"
#include "host-resources.hpp"
#include "packages.hpp"
#include "resources.hpp"

namespace {

namespace files = cmhost_::test::files;

TEST(BindgenResources, HostObjectsBehindGuestHandles) {
  cmhost::testing_support::expect_host_files_run<component::World, files::File>(&files::add_to_linker);
}

// The WIT worlds' classes, implemented: they must compile.
namespace canvas = cmhost_::resources::canvas;

class Surface final : public canvas::Surface {
 public:
  void fill(cmhost::Caller&, uint32_t color) override { color_ = color; }
  uint32_t pixel(cmhost::Caller&, uint32_t, uint32_t) override { return color_; }
  std::tuple<uint32_t, uint32_t> size(cmhost::Caller&) override { return {1, 1}; }
  void copy_from(cmhost::Caller& caller, canvas::Surface& other) override { color_ = other.pixel(caller, 0, 0); }

 private:
  uint32_t color_ = 0;
};

class CanvasHostBase : public canvas::Host {
 public:
  std::unique_ptr<canvas::Surface> surface_new(cmhost::Caller&, uint32_t, uint32_t) override { return std::make_unique<Surface>(); }
  std::unique_ptr<canvas::Surface> surface_blank(cmhost::Caller&) override { return std::make_unique<Surface>(); }
  std::unique_ptr<canvas::Surface> merge(cmhost::Caller& caller, canvas::Surface& a, canvas::Surface&) override {
    auto merged = std::make_unique<Surface>();
    merged->copy_from(caller, a);
    return merged;
  }
  uint32_t flatten(cmhost::Caller&, std::vector<canvas::Layer> layers) override { return static_cast<uint32_t>(layers.size()); }
};
class CanvasHost final : public CanvasHostBase {};

// Two versions of one interface whose functions share a name: each has
// its own Host, in a namespace of its version.
class ClockNow final : public example::clock::v0_2_0::wall::Host {
 public:
  example::clock::v0_2_0::wall::Datetime now(cmhost::Caller&) override { return {1, 2}; }
};
class ClockTicks final : public example::clock::v0_1_0::wall::Host {
 public:
  uint64_t now(cmhost::Caller&) override { return 12; }
};

class AppHost final : public example::util::text::Host, public cmhost_::app::app::Host {
 public:
  std::string stamp(cmhost::Caller&, example::clock::v0_2_0::wall::Datetime at, std::string message) override {
    return std::to_string(at.seconds) + " " + message;
  }
  void log(cmhost::Caller&, std::string) override {}
};

// A resource used from another interface arrives as the object and is
// returned as one, as the interface's own would be.
class Painter final : public cmhost_::resources::painter::Host {
 public:
  std::unique_ptr<cmhost_::resources::painter::Surface> paint(cmhost::Caller& caller,
                                                              cmhost_::resources::painter::Surface& target,
                                                              uint32_t color) override {
    target.fill(caller, color);
    return std::make_unique<Surface>();
  }
};

class CanvasAndPainter final : public CanvasHostBase, public cmhost_::resources::painter::Host {
 public:
  std::unique_ptr<cmhost_::resources::painter::Surface> paint(cmhost::Caller&, canvas::Surface&, uint32_t) override {
    return std::make_unique<Surface>();
  }
};

TEST(BindgenResources, GeneratedWorldsCompileAndLink) {
  cmhost::Linker linker;
  const canvas::Resources resources = canvas::add_to_linker(linker, std::make_shared<CanvasHost>());
  (void)resources;
  cmhost_::resources::painter::add_to_linker(linker, std::make_shared<Painter>());
  // painter before canvas: the resource it uses is not defined yet.
  cmhost::Linker out_of_order;
  EXPECT_THROW(cmhost_::resources::painter::add_to_linker(out_of_order, std::make_shared<Painter>()), cmhost::Error);
  // The world's add_to_linker defines both interfaces again: on a linker of
  // its own, as a linker defines each name once.
  cmhost::Linker world;
  cmhost_::resources::resources::add_to_linker(world, std::make_shared<CanvasAndPainter>());
  example::clock::v0_2_0::wall::add_to_linker(linker, std::make_shared<ClockNow>());
  example::clock::v0_1_0::wall::add_to_linker(linker, std::make_shared<ClockTicks>());
  const auto app_host = std::make_shared<AppHost>();
  example::util::text::add_to_linker(linker, app_host);
  cmhost_::app::app::add_to_linker(linker, std::static_pointer_cast<cmhost_::app::app::Host>(app_host));
  // The guest side's classes: an instance of another world does not fit them.
  cmhost::Engine engine{cmhost::testing_support::test_engine_config()};
  cmhost::Store store{engine};
  const auto basics = cmhost::Linker().instantiate(
      store, cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/basics.wasm"));
  EXPECT_THROW(cmhost_::resources::counters::Guest{basics}, cmhost::Error);
  EXPECT_THROW(cmhost_::app::app::App{basics}, cmhost::Error);
}

}  // namespace
