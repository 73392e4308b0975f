// The ahead-of-time backend's first step: core modules translated to C by
// wabt's wasm2c writer, which the system C compiler accepts; modules the
// translation cannot handle are refused naming the feature.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../../src/engine/wasm2c/translate.hpp"
#include "../support/expect_error.hpp"

namespace cmhost::engine::wasm2c {
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
  EXPECT_NE(c.header.find("Z_adderZ_add"), std::string::npos) << c.header;
  EXPECT_NE(c.header.find("Z_adder_instantiate"), std::string::npos) << c.header;
  EXPECT_NE(c.source.find("#include \"adder.h\""), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / ("cmhost-wasm2c-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "adder.h") << c.header;
  std::ofstream(dir / "adder.c") << c.source;
  const std::string command = "cc -std=c11 -O1 -c -I" + dir.string() + " " + (dir / "adder.c").string() + " -o " +
                              (dir / "adder.o").string() + " 2>" + (dir / "cc.log").string();
  const int status = std::system(command.c_str());
  std::ifstream log(dir / "cc.log");
  const std::string diagnostics((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << command << "\n" << diagnostics;
  EXPECT_TRUE(std::filesystem::exists(dir / "adder.o"));
  std::filesystem::remove_all(dir);
}

TEST(Wasm2c, FeaturesItCannotTranslateAreNamed) {
  const std::vector<uint8_t> simd = simd_module();
  expect_error(ErrorKind::Validate, [&] { translate(simd.data(), simd.size(), "m", "m.h"); }, "uses SIMD");
  expect_error(ErrorKind::Validate, [&] { translate(kMemory64.data(), kMemory64.size(), "m", "m.h"); },
               "uses memory64");
  // (module (import "m" "f" (func)) (import "m" "f" (global i32))): valid, and wasm2c would abort on it.
  const std::vector<uint8_t> twice = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60,
                                      0x00, 0x00, 0x02, 0x0e, 0x02, 0x01, 'm',  0x01, 'f',  0x00, 0x00, 0x01,
                                      'm',  0x01, 'f',  0x03, 0x7f, 0x00};
  expect_error(ErrorKind::Validate, [&] { translate(twice.data(), twice.size(), "m", "m.h"); }, "as two kinds");
  const std::vector<uint8_t> garbage = {0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00};
  expect_error(ErrorKind::Validate, [&] { translate(garbage.data(), garbage.size(), "m", "m.h"); },
               "invalid core module");
}

}  // namespace
}  // namespace cmhost::engine::wasm2c
