// The ahead-of-time backend's translation: core modules translated to C by
// wabt's wasm2c writer plus cmhost's glue, which the system C compiler
// accepts; their shape recorded under their own names; modules the
// translation cannot handle refused naming the feature; artifacts stamped
// with this build's code generation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "../../src/engine/aot/artifact.hpp"
#include "../../src/engine/aot/build_request.hpp"
#include "../../src/engine/aot/rt.h"
#include "../../src/engine/aot/tiers.hpp"
#include "../../src/engine/aot/translate.hpp"
#include "../support/test_engine.hpp"
#include "../support/expect_error.hpp"

namespace cmhost::engine::aot {
namespace {

// (module
//   (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
//   (memory (export "mem") 1))
const std::vector<uint8_t> kAdd = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,                    // header
    0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f,              // type: (i32 i32) -> i32
    0x03, 0x02, 0x01, 0x00,                                            // func 0: type 0
    0x05, 0x03, 0x01, 0x00, 0x01,                                      // memory: 1 page
    0x07, 0x0d, 0x02, 0x03, 'a', 'd', 'd', 0x00, 0x00,                 // export "add" func 0
    0x03, 'm', 'e', 'm', 0x02, 0x00,                                   // export "mem" memory 0
    0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b,  // code: local.get 0 1, i32.add
};

// (module (func (result v128) (v128.const i32x4 0 0 0 0)))
std::vector<uint8_t> simd_module() {
  std::vector<uint8_t> m = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00,
                            0x01, 0x7b, 0x03, 0x02, 0x01, 0x00, 0x0a, 0x16, 0x01, 0x14, 0x00, 0xfd, 0x0c};
  m.insert(m.end(), 16, 0x00);
  m.push_back(0x0b);
  return m;
}

// (module (memory i64 1))
const std::vector<uint8_t> kMemory64 = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x04, 0x01};

TEST(Wasm2c, TranslatesAModuleTheCCompilerAccepts) {
  const CModule c = translate(kAdd.data(), kAdd.size(), "adder", "adder.h");
  EXPECT_NE(c.header.find("Z_adderZ_e0"), std::string::npos) << c.header;
  EXPECT_NE(c.source.find("cmhost_module_adder"), std::string::npos);
  ASSERT_EQ(c.shape.exports.size(), 2u);
  EXPECT_EQ(c.shape.exports[0].name, "add");
  EXPECT_EQ(c.shape.exports[0].type.kind, 'f');
  EXPECT_EQ(c.shape.exports[1].name, "mem");
  EXPECT_EQ(c.shape.exports[1].type.kind, 'm');
  ASSERT_EQ(c.shape.types.size(), 1u);
  EXPECT_EQ(c.shape.types[0].params, "ii");
  EXPECT_EQ(c.shape.types[0].results, "i");
  EXPECT_NE(c.header.find("Z_adder_instantiate"), std::string::npos) << c.header;
  EXPECT_NE(c.source.find("#include \"adder.h\""), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / ("cmhost-wasm2c-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "adder.h") << c.header;
  std::ofstream(dir / "adder.c") << c.source;
  const std::string command = "cc -std=gnu11 -O1 -c -I" + dir.string() + " -I" CMHOST_SOURCE_DIR "/src/engine/aot " + (dir / "adder.c").string() + " -o " +
                              (dir / "adder.o").string() + " 2>" + (dir / "cc.log").string();
  const int status = std::system(command.c_str());
  std::ifstream log(dir / "cc.log");
  const std::string diagnostics((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << command << "\n" << diagnostics;
  EXPECT_TRUE(std::filesystem::exists(dir / "adder.o"));
  std::filesystem::remove_all(dir);
}

TEST(Wasm2c, ImportsAreRenamedSoOneNameCanBeTwoKinds) {
  // (module (import "m" "f" (func)) (import "m" "f" (global i32))): valid,
  // and wasm2c aborts on it under these names.
  const std::vector<uint8_t> twice = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60,
                                      0x00, 0x00, 0x02, 0x0e, 0x02, 0x01, 'm',  0x01, 'f',  0x00, 0x00, 0x01,
                                      'm',  0x01, 'f',  0x03, 0x7f, 0x00};
  const CModule c = translate(twice.data(), twice.size(), "m", "m.h");
  ASSERT_EQ(c.shape.imports.size(), 2u);
  EXPECT_EQ(c.shape.imports[0].type.kind, 'f');
  EXPECT_EQ(c.shape.imports[1].type.kind, 'g');
  EXPECT_EQ(c.shape.imports[1].name, "f");
  EXPECT_NE(c.header.find("Z_miZ_i1"), std::string::npos) << c.header;
}

TEST(Wasm2c, ShapesSurviveTheirText) {
  ModuleShape shape;
  shape.types = {{"iI", "fF"}, {"", ""}};
  shape.imports = {{"", "odd \n name", {'f', 1}}, {"env", "mem", {'m', 0, 1, 2, true}}};
  ShapeExtern table{'t', 0, 3, std::nullopt, false, 'r'};
  ShapeExtern global{'g', 0, 0, std::nullopt, false, 'I', true};
  shape.exports = {{"t", table}, {"g", global}};
  shape.definitions = {table};
  const ModuleShape back = ModuleShape::parse(shape.serialize());
  EXPECT_EQ(back.serialize(), shape.serialize());
  EXPECT_EQ(back.imports[0].name, "odd \n name");
  EXPECT_EQ(back.imports[1].type.max, 2u);
  EXPECT_TRUE(back.imports[1].type.shared);
  EXPECT_FALSE(back.exports[0].type.max.has_value());
  EXPECT_TRUE(back.exports[1].type.mutable_global);
  expect_error(ErrorKind::Usage, [] { ModuleShape::parse("i h61 h61 f 9\n"); }, "type index out of range");
  expect_error(ErrorKind::Usage, [] { ModuleShape::parse("q\n"); }, "malformed");
}

TEST(Wasm2c, FeaturesItCannotTranslateAreNamed) {
  const std::vector<uint8_t> simd = simd_module();
  expect_error(ErrorKind::Validate, [&] { translate(simd.data(), simd.size(), "m", "m.h"); }, "uses SIMD");
  expect_error(ErrorKind::Validate, [&] { translate(kMemory64.data(), kMemory64.size(), "m", "m.h"); },
               "uses memory64");
  const std::vector<uint8_t> garbage = {0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00};
  expect_error(ErrorKind::Decode, [&] { translate(garbage.data(), garbage.size(), "m", "m.h"); },
               "malformed core module");
}

std::vector<uint8_t> read_module(const char* name) {
  std::ifstream in(std::string(CMHOST_TEST_MODULES) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A module whose functions are shared out over several translation units
// (a low threshold stands in for a big module) computes what the
// interpreter computes: direct calls across units, call_indirect through
// the shared function types, memory, a global, memory.init.
// init_memories as wasm2c 1.0.32 writes it, for use_memory_images.
std::string with_init_memories(const std::string& body) {
  return "static void other(void) {\n}\n\nstatic void init_memories(Z_m_instance_t* instance) {\n" + body +
         "}\n\nstatic void init_tables(Z_m_instance_t* instance) {\n}\n";
}

TEST(Wasm2cImages, ConstantSegmentsWithinTheInitialSizeBecomeAnImage) {
  std::string source = with_init_memories(
      "  wasm_rt_allocate_memory(&instance->w2c_mem, 2, 65536);\n"
      "  LOAD_DATA((*instance->Z_envZ_mem), 16u, data_segment_data_w2c_d0, 8);\n"
      "  LOAD_DATA(instance->w2c_mem, 16u, data_segment_data_w2c_d1, 5);\n"
      "  LOAD_DATA(instance->w2c_mem, 131070u, data_segment_data_w2c_d2, 2);\n");
  use_memory_images(source);
  EXPECT_EQ(source,
            "static void other(void) {\n}\n\n"
            "static void load_image_w2c_mem(wasm_rt_memory_t* memory) {\n"
            "  LOAD_DATA((*memory), 16u, data_segment_data_w2c_d1, 5);\n"
            "  LOAD_DATA((*memory), 131070u, data_segment_data_w2c_d2, 2);\n"
            "}\nstatic cmhost_rt_image image_w2c_mem;\n"
            "static void init_memories(Z_m_instance_t* instance) {\n"
            "  cmhost_rt_allocate_imaged_memory(&instance->w2c_mem, 2, 65536, &image_w2c_mem, load_image_w2c_mem);\n"
            "  LOAD_DATA((*instance->Z_envZ_mem), 16u, data_segment_data_w2c_d0, 8);\n"
            "}\n\nstatic void init_tables(Z_m_instance_t* instance) {\n}\n");
}

TEST(Wasm2cImages, SegmentsAtAGlobalOrPastTheInitialSizeStayCopies) {
  for (const std::string body :
       {"  wasm_rt_allocate_memory(&instance->w2c_mem, 1, 2);\n"
        "  LOAD_DATA(instance->w2c_mem, (*instance->Z_envZ_g), data_segment_data_w2c_d0, 3);\n",
        "  wasm_rt_allocate_memory(&instance->w2c_mem, 1, 2);\n"
        "  LOAD_DATA(instance->w2c_mem, 65534u, data_segment_data_w2c_d0, 3);\n",
        "  wasm_rt_allocate_memory(&instance->w2c_mem, 1, 2);\n"
        "  something_else();\n"}) {
    const std::string original = with_init_memories(body);
    std::string source = original;
    use_memory_images(source);
    EXPECT_EQ(source, original);
  }
}

TEST(Wasm2cSplit, ASplitModuleRunsAsTheWholeOneDoes) {
  const std::vector<uint8_t> bytes = read_module("split.wasm");
  ASSERT_FALSE(bytes.empty());
  constexpr size_t kSmall = 4096;
  const CModule c = translate(bytes.data(), bytes.size(), "m0", "m0.h", false, 3, kSmall);
  EXPECT_EQ(c.more_sources.size(), 2u);
  EXPECT_NE(c.source.find("data_segment_data_"), std::string::npos);

  BuildSettings settings;
  settings.split_bytes = kSmall;
  const auto dir = std::filesystem::temp_directory_path() / ("cmhost-split-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "split.cmhost-aot").string();
  build_artifact(bytes, {bytes}, settings, path);
  const LoadedArtifact artifact = load_artifact_file(path, expected_stamp(bytes, settings, 1));
  ASSERT_EQ(artifact.table->module_count, 1u);
  const cmhost_aot_module& module = *artifact.table->modules[0];
  const ModuleShape shape = ModuleShape::parse(module.shape);
  module.init_module();
  void* instance = std::calloc(1, module.instance_size);
  ASSERT_EQ(cmhost_rt_instantiate(module.instantiate, instance), 0);
  size_t run = 0;
  while (run < shape.exports.size() && shape.exports[run].name != "run") ++run;
  ASSERT_LT(run, shape.exports.size());
  const cmhost_aot_invoker invoke = module.signatures[shape.exports[run].type.type_index].invoke;

  auto interpreter = make_engine();
  auto store = interpreter->new_store();
  auto reference = store->instantiate(*interpreter->compile(bytes), {});
  for (uint64_t x : {0u, 10u, 12345u}) {
    uint64_t expected = 0, got = 0;
    store->call(*reference->get_export("run"), std::vector<uint64_t>{x}, std::span<uint64_t>(&expected, 1));
    ASSERT_EQ(cmhost_rt_invoke(invoke, module.export_ptr(instance, static_cast<uint32_t>(run)), instance, &x, &got), 0);
    EXPECT_EQ(got, expected) << "run(" << x << ")";
  }
  module.free_instance(instance);
  std::free(instance);
  std::filesystem::remove_all(dir);
}

// The stamp names the code generation of this build (a SHA-256 over its
// translator, glue and runtime support), and so does the cache key: an
// artifact another build left in the cache is never the one looked up.
TEST(Wasm2cStamp, TheCodeGenerationHashIsInTheStampAndTheCacheKey) {
  const BuildSettings settings;
  const Stamp stamp = expected_stamp(kAdd, settings, 1);
  EXPECT_EQ(stamp.codegen.size(), 64u);
  EXPECT_EQ(stamp.codegen.find_first_not_of("0123456789abcdef"), std::string::npos) << stamp.codegen;
  EXPECT_NE(stamp.text().find("\ncodegen " + stamp.codegen + "\n"), std::string::npos) << stamp.text();
  Stamp other_build = stamp;
  other_build.codegen = std::string(64, '0');
  EXPECT_NE(cache_path("/cache", other_build), cache_path("/cache", stamp));
  EXPECT_EQ(cache_path("/cache", expected_stamp(kAdd, settings, 1)), cache_path("/cache", stamp));
}

// What a tiered engine hands its background builder reads back whole, and
// a message another build of cmhost wrote, or one cut short, is refused.
TEST(BackgroundBuilds, ARequestReadsBackAsItWasWritten) {
  BuildSettings settings;
  settings.compiler = "/usr/bin/gcc";
  settings.metered = true;
  settings.split_bytes = 12345;
  settings.cache_dir = "/tmp/a cache";
  const std::vector<uint8_t> first{0, 'a', 'b', '\n', 0xff}, second{'\n', '\n'};
  const std::string message = encode_build_request("/tmp/a cache/x.cmhost-aot", "abc123", settings, {first, second});
  const BuildRequest request = decode_build_request(message);
  EXPECT_EQ(request.path, "/tmp/a cache/x.cmhost-aot");
  EXPECT_EQ(request.component_sha256, "abc123");
  EXPECT_EQ(request.settings.compiler, "/usr/bin/gcc");
  EXPECT_EQ(request.settings.baseline_compiler, "tcc");
  EXPECT_FALSE(request.settings.baseline);
  EXPECT_TRUE(request.settings.metered);
  EXPECT_EQ(request.settings.split_bytes, 12345u);
  EXPECT_EQ(request.settings.cache_dir, "/tmp/a cache");
  ASSERT_EQ(request.modules.size(), 2u);
  EXPECT_EQ(request.modules[0], first);
  EXPECT_EQ(request.modules[1], second);

  const auto refused = [](const std::string& bad, const std::string& why) {
    expect_error(ErrorKind::Usage, [&] { decode_build_request(bad); }, why);
  };
  refused(message.substr(0, message.size() - 1), "runs past its end");
  refused(message + "x", "bytes after its modules");
  refused(message.substr(0, message.find("\n\n")), "ends before its modules");
  refused("hello\n\n", "not a build request");
  const size_t version = message.find("\ncmhost ") + 1;
  std::string foreign = message;
  foreign.replace(version, message.find('\n', version) - version, "cmhost 0.0.0 0000");
  refused(foreign, "another build of cmhost");
  expect_error(ErrorKind::Usage, [&] { encode_build_request("/tmp/a\nb", "abc", settings, {first}); }, "line break");
}

TEST(BackgroundBuilds, TheBuilderIsTheOneConfiguredOrNone) {
  EXPECT_EQ(find_builder(CMHOST_TEST_AOT_BUILDER), CMHOST_TEST_AOT_BUILDER);
  EXPECT_EQ(find_builder("/nonexistent/cmhost-aot-build"), "");
  EXPECT_EQ(find_builder(CMHOST_SOURCE_DIR "/README.md"), "") << "not executable";
}

}  // namespace
}  // namespace cmhost::engine::aot
