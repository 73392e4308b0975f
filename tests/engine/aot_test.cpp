// Ahead-of-time artifacts as an embedder meets them: written by
// Component::write_artifact (`cmhost compile`), loaded by
// from_bytes_with_artifact, kept in the cache on first use; refused, saying
// what differs, when stamped for other bytes, another build of cmhost's
// code generation, compilers or flags, or when someone else could have
// written them; a stale one in the cache is built anew.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
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

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A new file (a new inode: a loaded artifact stays mapped as it was) that
// only its owner may read and write.
void write_private(const fs::path& path, const std::vector<uint8_t>& bytes) {
  fs::remove(path);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
}

// Where an artifact's stamp starts: it is the text before the 16-byte
// trailer, whose first 8 bytes give its length (little endian).
size_t stamp_offset(const std::vector<uint8_t>& artifact) {
  uint64_t length = 0;
  for (size_t i = 0; i < 8; ++i) length |= uint64_t{artifact.at(artifact.size() - 16 + i)} << (8 * i);
  return artifact.size() - 16 - static_cast<size_t>(length);
}

std::string stamp_text(const std::vector<uint8_t>& artifact) {
  return {artifact.begin() + static_cast<std::ptrdiff_t>(stamp_offset(artifact)), artifact.end() - 16};
}

// The artifact's bytes as another build of cmhost would have stamped them:
// the code-generation hash replaced by one of the same length. False when
// the stamp has none.
bool restamp_codegen(std::vector<uint8_t>& artifact) {
  const std::string field = "\ncodegen ";
  const std::string text = stamp_text(artifact);
  const size_t at = text.find(field);
  const size_t end = at == std::string::npos ? at : text.find('\n', at + field.size());
  if (end == std::string::npos) return false;
  const auto hash = artifact.begin() + static_cast<std::ptrdiff_t>(stamp_offset(artifact) + at + field.size());
  std::fill(hash, hash + static_cast<std::ptrdiff_t>(end - at - field.size()), uint8_t{'0'});
  return true;
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

  // An engine caching in `cache` that keeps what it says it compiles in said_.
  Engine cached_in(const fs::path& cache) {
    return Engine(aot({.cache_dir = cache.string(),
                       .on_compile = [this](const std::string& line) { said_.push_back(line); }}));
  }

  fs::path dir_;
  std::vector<uint8_t> basics_ = read_fixture("basics");
  std::vector<std::string> said_;
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
               "was built without metering, which fuel and deadlines need");
  const std::string metered_path = (dir_ / "metered.cmhost-aot").string();
  Component::write_artifact(metered, basics_, metered_path);
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(engine, basics_, metered_path); },
               "was built with metering, which this engine does not do");
  Engine clang(aot({.compiler = "clang"}));
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(clang, basics_, path); },
               "was built with another C compiler");
}

TEST_F(AotArtifacts, AnArtifactOfAnotherBuildIsRefusedAsStale) {
  Engine engine(aot());
  const fs::path path = dir_ / "basics.cmhost-aot";
  Component::write_artifact(engine, basics_, path.string());
  std::vector<uint8_t> bytes = read_bytes(path);
  ASSERT_TRUE(restamp_codegen(bytes)) << "the stamp names no code-generation hash";
  const fs::path stale = dir_ / "stale.cmhost-aot";
  write_private(stale, bytes);
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(engine, basics_, stale.string()); },
               "was built by another build of cmhost, whose translator, glue or runtime support differ (stale");
}

TEST_F(AotArtifacts, AStaleCachedArtifactIsNotLoadedButBuiltAnew) {
  const fs::path cache = dir_ / "cache";
  Engine engine = cached_in(cache);
  (void)Component::from_bytes(engine, basics_);
  ASSERT_EQ(said_.size(), 1u);
  // The cache also holds the directory builds work in; directory order varies.
  fs::path cached;
  for (const auto& entry : fs::directory_iterator(cache))
    if (entry.path().extension() == ".cmhost-aot") cached = entry.path();
  ASSERT_FALSE(cached.empty());
  const std::vector<uint8_t> fresh = read_bytes(cached);
  std::vector<uint8_t> stale = fresh;
  ASSERT_TRUE(restamp_codegen(stale));
  write_private(cached, stale);
  Store store(engine);
  EXPECT_EQ(add(store, Component::from_bytes(engine, basics_)), 42u);
  ASSERT_EQ(said_.size(), 2u);
  EXPECT_EQ(said_[1].rfind("recompiling 1 core module to native code (" + cached.string() + ")", 0), 0u) << said_[1];
  EXPECT_NE(said_[1].find("was built by another build of cmhost"), std::string::npos) << said_[1];
  // What replaced it is stamped as this build stamps.
  EXPECT_EQ(stamp_text(read_bytes(cached)), stamp_text(fresh));
}

TEST_F(AotArtifacts, FilesOfAnotherUserAreRefused) {
  Engine engine(aot());
  const std::string path = (dir_ / "basics.cmhost-aot").string();
  Component::write_artifact(engine, basics_, path);
  const uid_t nobody = 65534;
  if (::geteuid() == nobody || ::chown(path.c_str(), nobody, static_cast<gid_t>(-1)) != 0)
    GTEST_SKIP() << "cannot give a file to another user here";
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(engine, basics_, path); },
               "belongs to another user");
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
  EXPECT_EQ(artifacts, 1u);
  // Besides it, only where builds work, and nothing left there.
  EXPECT_EQ(std::distance(fs::directory_iterator(cache), fs::directory_iterator()), 2);
  EXPECT_TRUE(fs::is_empty(cache / "building"));
}

TEST_F(AotArtifacts, ADamagedCachedArtifactIsBuiltAnew) {
  const fs::path cache = dir_ / "cache";
  Engine engine = cached_in(cache);
  (void)Component::from_bytes(engine, basics_);
  ASSERT_EQ(said_.size(), 1u);
  for (const auto& entry : fs::directory_iterator(cache)) {
    if (entry.path().extension() != ".cmhost-aot") continue;
    // A new file under the name (the loaded one stays mapped as it was).
    const fs::path path = entry.path();
    fs::remove(path);
    std::ofstream(path) << "damaged";
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  }
  Store store(engine);
  EXPECT_EQ(add(store, Component::from_bytes(engine, basics_)), 42u);
  ASSERT_EQ(said_.size(), 2u);
  EXPECT_EQ(said_[1].rfind("recompiling 1 core module to native code (", 0), 0u) << said_[1];
  EXPECT_NE(said_[1].find("is not a cmhost artifact"), std::string::npos) << said_[1];
}

TEST_F(AotArtifacts, ACacheOthersCanWriteIsRefused) {
  const fs::path cache = dir_ / "open";
  fs::create_directories(cache);
  ::chmod(cache.c_str(), 0777);
  Engine engine(aot({.cache_dir = cache.string()}));
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes(engine, basics_); }, "is writable by others");
}

using AotTier = engine::EngineConfig::AotTier;

// The baseline tier: TinyCC's code for the same component, the same
// results, in an artifact stamped as baseline code.
TEST_F(AotArtifacts, TheBaselineTierRunsTheSame) {
  Engine baseline(aot({.aot_tier = AotTier::Baseline}));
  const std::string path = (dir_ / "basics-baseline.cmhost-aot").string();
  Component::write_artifact(baseline, basics_, path);
  EXPECT_NE(stamp_text(read_bytes(path)).find(" tier=baseline"), std::string::npos);
  Store store(baseline);
  EXPECT_EQ(add(store, Component::from_bytes_with_artifact(baseline, basics_, path)), 42u);
  // A tiered engine (the default) runs either tier's artifact; an optimized one refuses it.
  Engine tiered(aot());
  Store tiered_store(tiered);
  EXPECT_EQ(add(tiered_store, Component::from_bytes_with_artifact(tiered, basics_, path)), 42u);
  Engine optimized(aot({.aot_tier = AotTier::Optimized}));
  expect_error(ErrorKind::Usage, [&] { Component::from_bytes_with_artifact(optimized, basics_, path); },
               "was built with another C compiler");
}

// A component with more code than tiered_code_bytes (here: any) runs
// baseline code at once; its optimized code is built in the background,
// and the loads after that run it.
TEST_F(AotArtifacts, ABigComponentRunsBaselineCodeUntilItsOptimizedCodeIsBuilt) {
  const fs::path cache = dir_ / "cache";
  const auto tiered = [&] {
    return Engine(aot({.cache_dir = cache.string(),
                       .tiered_code_bytes = 0,
                       .aot_builder = CMHOST_TEST_AOT_BUILDER,
                       .on_compile = [this](const std::string& line) { said_.push_back(line); }}));
  };
  Engine first = tiered();
  Store store(first);
  EXPECT_EQ(add(store, Component::from_bytes(first, basics_)), 42u);
  ASSERT_EQ(said_.size(), 2u);
  EXPECT_EQ(said_[0].rfind("compiling 1 core module to baseline native code (", 0), 0u) << said_[0];
  EXPECT_EQ(said_[1].rfind("building optimized native code in the background (", 0), 0u) << said_[1];
  // The background build ends with the optimized artifact beside the
  // baseline one, and nothing else left.
  const auto artifacts = [&] {
    size_t count = 0;
    for (const auto& entry : fs::directory_iterator(cache)) count += entry.path().extension() == ".cmhost-aot";
    return count;
  };
  for (int waited = 0; artifacts() < 2 && waited < 1200; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(artifacts(), 2u) << "no optimized artifact after 120 s";
  for (int waited = 0; std::distance(fs::directory_iterator(cache), fs::directory_iterator()) > 3 && waited < 100; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(std::distance(fs::directory_iterator(cache), fs::directory_iterator()), 3) << "a lock file stayed";
  said_.clear();
  Engine second = tiered();
  Store second_store(second);
  EXPECT_EQ(add(second_store, Component::from_bytes(second, basics_)), 42u);
  EXPECT_TRUE(said_.empty()) << "the optimized artifact comes from the cache: " << said_.front();
}

// Without its background builder a tiered engine does not leave a big
// component on baseline code for good: it waits for optimized code.
TEST_F(AotArtifacts, WithoutTheBuilderABigComponentGetsOptimizedCodeAtOnce) {
  Engine engine(aot({.cache_dir = (dir_ / "cache").string(),
                     .tiered_code_bytes = 0,
                     .aot_builder = (dir_ / "no-such-builder").string(),
                     .on_compile = [this](const std::string& line) { said_.push_back(line); }}));
  Store store(engine);
  EXPECT_EQ(add(store, Component::from_bytes(engine, basics_)), 42u);
  ASSERT_EQ(said_.size(), 1u);
  EXPECT_EQ(said_[0].rfind("compiling 1 core module to native code (", 0), 0u) << said_[0];
}

TEST_F(AotArtifacts, TheInterpreterWritesNone) {
  Engine engine;
  expect_error(ErrorKind::Usage, [&] { Component::write_artifact(engine, basics_, (dir_ / "x").string()); },
               "writes no artifacts");
}

}  // namespace
}  // namespace cmhost
