// cmhost::Engine is a handle: copies share one core engine, and stores and
// components keep it alive, so an embedder may drop its Engine first (as
// with wasmtime's). Under ASan a dangling engine would be a use after free.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

std::string basics_path() { return std::string(CMHOST_TEST_COMPONENTS) + "/basics.wasm"; }

TEST(EngineHandle, StoresAndComponentsOutliveTheEmbeddersEngine) {
  std::optional<Engine> engine(std::in_place, testing_support::test_engine_config());
  Store store(*engine);
  const Component component = Component::from_file(*engine, basics_path());
  engine.reset();
  // Instantiating, calling and a second store all run on the engine the
  // store and the component still hold.
  const Instance instance = Linker().instantiate(store, component);
  EXPECT_EQ(instance.typed_func<uint32_t(uint32_t, uint32_t)>("add").call(store, 2, 3), 5u);
}

TEST(EngineHandle, AComponentOutlivesItsEngineAndTheStoresMadeBeforeIt) {
  std::optional<Component> component;
  {
    Engine engine(testing_support::test_engine_config());
    component = Component::from_file(engine, basics_path());
    Store first(engine);
    EXPECT_EQ(Linker().instantiate(first, *component).typed_func<uint32_t(uint32_t, uint32_t)>("add").call(first, 1, 1),
              2u);
  }
  // Nothing but the component holds the engine now.
  EXPECT_EQ(component->type().exports.empty(), false);
}

TEST(EngineHandle, CopiesShareOneEngine) {
  const Engine engine(testing_support::test_engine_config());
  Engine copy = engine;
  EXPECT_EQ(&copy.core(), &Engine(engine).core());
  // A component made with one copy instantiates in a store of the other.
  const Component component = Component::from_file(copy, basics_path());
  Store store(engine);
  EXPECT_EQ(Linker().instantiate(store, component).typed_func<uint32_t(uint32_t, uint32_t)>("add").call(store, 4, 5),
            9u);
}

TEST(EngineHandle, AnEngineMovedFromSaysSo) {
  Engine engine(testing_support::test_engine_config());
  const Engine moved = std::move(engine);
  EXPECT_ERROR_SAYING(Store{engine}, ErrorKind::Usage, "this Engine was moved from");
  EXPECT_ERROR_SAYING((void)Component::from_file(engine, basics_path()), ErrorKind::Usage, "moved from");
  EXPECT_ERROR_SAYING(engine.increment_epoch(), ErrorKind::Usage, "moved from");
  // The Engine it was moved to works.
  Store store(moved);
  EXPECT_EQ(Linker()
                .instantiate(store, Component::from_file(moved, basics_path()))
                .typed_func<uint32_t(uint32_t, uint32_t)>("add")
                .call(store, 1, 2),
            3u);
}

}  // namespace
}  // namespace cmhost
