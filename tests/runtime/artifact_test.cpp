// Core modules from an artifact (engine::Artifact), as an ahead-of-time
// backend will hand them over: the runtime takes them in the plan's module
// order instead of compiling the component's bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "binary/binary.hpp"
#include "cmhost/cmhost.hpp"
#include "runtime/runtime.hpp"
#include "validate/validate.hpp"

namespace cmhost::runtime {
namespace {

std::vector<uint8_t> read_fixture(const char* name) {
  std::ifstream in(std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ListArtifact final : public engine::Artifact {
 public:
  explicit ListArtifact(std::vector<std::shared_ptr<engine::Module>> modules) : modules_(std::move(modules)) {}
  size_t module_count() const override { return modules_.size(); }
  std::shared_ptr<engine::Module> module(size_t index) const override { return modules_.at(index); }

 private:
  std::vector<std::shared_ptr<engine::Module>> modules_;
};

TEST(Artifacts, ModulesComeFromTheArtifactInPlanOrder) {
  const auto engine = engine::make_engine(testing_support::test_engine_config());
  const std::vector<uint8_t> bytes = read_fixture("basics");
  const auto plan = [&] { return validate::validate_component(binary::decode_component(bytes), bytes); };
  const CompiledComponent compiled = compile(*engine, plan(), bytes);
  ASSERT_FALSE(compiled.modules.empty());
  const CompiledComponent from_artifact = compile(ListArtifact(compiled.modules), plan());
  ASSERT_EQ(from_artifact.modules.size(), compiled.modules.size());
  for (size_t i = 0; i < compiled.modules.size(); ++i) EXPECT_EQ(from_artifact.modules[i], compiled.modules[i]);
  // And it runs.
  Store store(*engine);
  const auto instance = store.instantiate(from_artifact, {});
  const Item* add = instance->exports().find("add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->func->call(store, std::vector<abi::Val>{abi::Val::u32(2), abi::Val::u32(40)}).at(0), abi::Val::u32(42));
  // An artifact of another component is refused.
  auto fewer = compiled.modules;
  fewer.pop_back();
  expect_error(ErrorKind::Usage, [&] { compile(ListArtifact(fewer), plan()); }, "core modules, the component");
}

TEST(Artifacts, TheInterpreterHasNone) {
  Engine engine;
  expect_error(ErrorKind::Usage,
               [&] { Component::from_bytes_with_artifact(engine, read_fixture("basics"), "basics.so"); },
               "loads no artifacts");
}

}  // namespace
}  // namespace cmhost::runtime
