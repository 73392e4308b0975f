// Ahead-of-time artifacts as an embedder meets them: written by
// Component::write_artifact (`cmhost compile`), loaded by
// from_bytes_with_artifact, kept in the cache on first use; refused, saying
// what differs, when stamped for other bytes, compilers or flags, or when
// someone else could have written them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_fixture(const char* name) {
  std::ifstream in(std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class AotArtifacts : public ::testing::Test {
 protected:
  AotArtifacts() : dir_(fs::temp_directory_path() / ("cmhost-aot-test-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~AotArtifacts() override { fs::remove_all(dir_); }

  static engine::EngineConfig aot(engine::EngineConfig config = {}) {
    config.backend = engine::Backend::AheadOfTime;
    return config;
  }
  static uint32_t add(Store& store, const Component& component) {
    const Instance instance = Linker().instantiate(store, component);
    return instance.typed_func<uint32_t(uint32_t, uint32_t)>("add").call(store, 2, 40);
  }

  fs::path dir_;
  std::vector<uint8_t> basics_ = read_fixture("basics");
};

TEST_F(AotArtifacts, AWrittenArtifactLoadsAndRuns) {
  Engine engine(aot());
  const std::string path = (dir_ / "basics.cmhost-aot").string();
  Component::write_artifact(engine, basics_, path);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  const Component component = Component::from_bytes_with_artifact(engine, basics_, path);
  Store store(engine);
  EXPECT_EQ(add(store, component), 42u);
}

TEST_F(AotArtifacts, StampsThatDifferAreRefusedSayingWhat) {
  Engine engine(aot());
  const std::string path = (dir_ / "basics.cmhost-aot").string();
  Component::write_artifact(engine, basics_, path);
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(engine, read_fixture("values"), path); },
               "was built from another component");
  Engine metered(aot({.metering = true}));
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(metered, basics_, path); },
               "was built with other flags");
  Engine clang(aot({.compiler = "clang"}));
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(clang, basics_, path); },
               "was built with another C compiler");
}

TEST_F(AotArtifacts, FilesOthersCouldHaveWrittenAreRefused) {
  Engine engine(aot());
  const std::string path = (dir_ / "basics.cmhost-aot").string();
  Component::write_artifact(engine, basics_, path);
  ::chmod(path.c_str(), 0664);
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(engine, basics_, path); },
               "is writable by others");
  const std::string not_one = (dir_ / "basics.wasm").string();
  std::ofstream(not_one, std::ios::binary).write(reinterpret_cast<const char*>(basics_.data()),
                                                 static_cast<std::streamsize>(basics_.size()));
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(engine, basics_, not_one); },
               "is not a cmhost artifact");
}

TEST_F(AotArtifacts, TheCacheCompilesOnFirstUseOnly) {
  int compiles = 0;
  const fs::path cache = dir_ / "new" / "cache";
  Engine engine(aot({.cache_dir = cache.string(), .on_compile = [&](const std::string&) { ++compiles; }}));
  Store store(engine);
  EXPECT_EQ(add(store, Component::from_bytes(engine, basics_)), 42u);
  EXPECT_EQ(add(store, Component::from_bytes(engine, basics_)), 42u);
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(fs::status(cache).permissions() & fs::perms::all, fs::perms::owner_all);
  size_t artifacts = 0;
  for (const auto& entry : fs::directory_iterator(cache)) artifacts += entry.path().extension() == ".cmhost-aot";
  EXPECT_EQ(artifacts, 1u);  // and no build directory left behind
  EXPECT_EQ(std::distance(fs::directory_iterator(cache), fs::directory_iterator()), 1);
}

TEST_F(AotArtifacts, ADamagedCachedArtifactIsBuiltAnew) {
  std::vector<std::string> said;
  const fs::path cache = dir_ / "cache";
  Engine engine(aot({.cache_dir = cache.string(), .on_compile = [&](const std::string& s) { said.push_back(s); }}));
  (void)Component::from_bytes(engine, basics_);
  ASSERT_EQ(said.size(), 1u);
  for (const auto& entry : fs::directory_iterator(cache)) {
    // A new file under the name (the loaded one stays mapped as it was).
    const fs::path path = entry.path();
    fs::remove(path);
    std::ofstream(path) << "damaged";
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  }
  Store store(engine);
  EXPECT_EQ(add(store, Component::from_bytes(engine, basics_)), 42u);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[1].rfind("recompiling 1 core module to native code (", 0), 0u) << said[1];
  EXPECT_NE(said[1].find("is not a cmhost artifact"), std::string::npos) << said[1];
}

TEST_F(AotArtifacts, ACacheOthersCanWriteIsRefused) {
  const fs::path cache = dir_ / "open";
  fs::create_directories(cache);
  ::chmod(cache.c_str(), 0777);
  Engine engine(aot({.cache_dir = cache.string()}));
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes(engine, basics_); }, "is writable by others");
}

TEST_F(AotArtifacts, TheInterpreterWritesNone) {
  Engine engine;
  expect_error(ErrorKind::Usage, [&] { Component::write_artifact(engine, basics_, (dir_ / "x").string()); },
               "writes no artifacts");
}

}  // namespace
}  // namespace cmhost
