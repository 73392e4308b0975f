// The host side of tests/components/host-resources.wat (a host resource
// `file` with a size), written once for any bindings of its world: the
// one header's and the split headers under another namespace.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost::testing_support {

template <class File>
class SizedFile final : public File {
 public:
  SizedFile(uint32_t size, int& live) : size_(size), live_(live) { ++live_; }
  ~SizedFile() override { --live_; }
  uint32_t size(Caller&) override { return size_; }

 private:
  uint32_t size_;
  int& live_;
};

template <class File, class Host>
class FileHost final : public Host {
 public:
  int live = 0;
  std::unique_ptr<File> file_new(Caller&, uint32_t size) override {
    return std::make_unique<SizedFile<File>>(size, live);
  }
};

// The guest makes a file through the constructor, asks its size through the
// method (a borrow: the host's object) and drops it; then the host makes one
// and hands it over, and the guest drops it.
template <class World, class File, class Host, class Resources>
void expect_host_files_run(Resources (*add_to_linker)(Linker&, std::shared_ptr<Host>)) {
  Engine engine{test_engine_config()};
  Store store{engine};
  Linker linker;
  auto host = std::make_shared<FileHost<File, Host>>();
  const Resources resources = add_to_linker(linker, host);
  const auto world = World::instantiate(
      store, Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-resources.wasm"), linker);
  EXPECT_EQ(world.run(store), 7u);
  EXPECT_EQ(host->live, 0);
  const auto own = resources.file.make_own(store, std::make_unique<SizedFile<File>>(9, host->live));
  EXPECT_EQ(host->live, 1);
  EXPECT_EQ(world.take(store, own), 9u);
  EXPECT_EQ(host->live, 0);
}

}  // namespace cmhost::testing_support
