// cmhost::wasi (include/cmhost/wasi.hpp) on a WASI command component made
// from wasi-libc C with jco's preview1 command adapter (tests/wasi/command.c):
// arguments, environment, stdin from bytes, stdout and stderr into buffers,
// exit statuses, a fixed wall clock, and preopened directories.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/wasi.hpp"

namespace {

struct Ran {
  int status;
  std::string out, err;
};

Ran run_command(std::vector<std::string> args, cmhost::wasi::WasiConfig config = {}) {
  cmhost::Engine engine{cmhost::testing_support::test_engine_config()};
  const auto component =
      cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/wasi-command.wasm");
  cmhost::Store store(engine);
  config.args = {"command"};
  config.args.insert(config.args.end(), args.begin(), args.end());
  config.stdout_buffer = std::make_shared<std::string>();
  config.stderr_buffer = std::make_shared<std::string>();
  cmhost::Linker linker;
  cmhost::wasi::add_to_linker(linker, config);
  const auto instance = linker.instantiate(store, component);
  const int status = cmhost::wasi::run(store, instance);
  return {status, *config.stdout_buffer, *config.stderr_buffer};
}

TEST(Wasi, ArgumentsAndEnvironment) {
  const Ran args = run_command({"args", "x", "y z"});
  EXPECT_EQ(args.status, 0);
  EXPECT_EQ(args.out, "command\nargs\nx\ny z\n");
  cmhost::wasi::WasiConfig config;
  config.env = {{"NAME", "value"}, {"OTHER", ""}};
  EXPECT_EQ(run_command({"env", "NAME"}, config).out, "value\n");
  EXPECT_EQ(run_command({"env", "OTHER"}, config).out, "\n");
  EXPECT_EQ(run_command({"env", "MISSING"}, config).out, "(unset)\n");
}

TEST(Wasi, StdinStdoutAndStderr) {
  cmhost::wasi::WasiConfig config;
  std::string big(100000, 'x');  // more than one read and one write of the adapter
  big += "end";
  config.stdin_bytes = big;
  EXPECT_EQ(run_command({"cat"}, config).out, big);
  config.stdin_bytes = "";
  EXPECT_EQ(run_command({"cat"}, config).out, "");
  const Ran err = run_command({"stderr", "to stderr"});
  EXPECT_EQ(err.out, "");
  EXPECT_EQ(err.err, "to stderr\n");
}

TEST(Wasi, StdioFromAndToFiles) {
  char dir_template[] = "/tmp/cmhost-wasi-stdio-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  {
    std::FILE* in = std::fopen((dir + "/in").c_str(), "w");
    std::fputs("from a file", in);
    std::fclose(in);
  }
  cmhost::wasi::WasiConfig config;
  config.stdin_file = dir + "/in";
  config.stdout_file = dir + "/out";
  config.stderr_file = dir + "/err";
  cmhost::Engine engine{cmhost::testing_support::test_engine_config()};
  const auto component =
      cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/wasi-command.wasm");
  const auto read = [](const std::string& path) {
    std::string text;
    if (std::FILE* f = std::fopen(path.c_str(), "r")) {
      char buffer[256];
      size_t n;
      while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
      std::fclose(f);
    }
    return text;
  };
  const auto run_with = [&](std::vector<std::string> args) {
    cmhost::Store store(engine);
    config.args = {"command"};
    config.args.insert(config.args.end(), args.begin(), args.end());
    cmhost::Linker linker;
    cmhost::wasi::add_to_linker(linker, config);
    return cmhost::wasi::run(store, linker.instantiate(store, component));
  };
  EXPECT_EQ(run_with({"cat"}), 0);
  EXPECT_EQ(read(dir + "/out"), "from a file");
  EXPECT_EQ(run_with({"stderr", "to stderr"}), 0);
  EXPECT_EQ(read(dir + "/out"), "");  // truncated when opened again
  EXPECT_EQ(read(dir + "/err"), "to stderr\n");
  config.stdout_file = dir + "/missing/out";
  cmhost::Linker linker;
  EXPECT_ERROR(cmhost::wasi::add_to_linker(linker, config), cmhost::ErrorKind::Usage);
  for (const char* f : {"/in", "/out", "/err"}) std::remove((dir + f).c_str());
  ::rmdir(dir.c_str());
}

TEST(Wasi, ExitStatuses) {
  EXPECT_EQ(run_command({"exit", "0"}).status, 0);
  EXPECT_EQ(run_command({"exit", "7"}).status, 1);  // preview1's adapter reports any failure as err
  const Ran usage = run_command({});
  EXPECT_EQ(usage.status, 1);
  EXPECT_NE(usage.err.find("usage: command"), std::string::npos);
}

TEST(Wasi, ClocksRandomAndSleep) {
  EXPECT_EQ(run_command({"clocks"}).out, "ok\n");
  cmhost::wasi::WasiConfig fixed;
  fixed.wall_clock_ns = uint64_t{1000} * 1000000000;  // 1970: the guest sees it is not past 2020
  EXPECT_EQ(run_command({"clocks"}, fixed).out, "wrong\n");
  EXPECT_EQ(run_command({"random"}).out, "ok\n");
  EXPECT_EQ(run_command({"sleep", "15"}).out, "slept\n");
}

TEST(Wasi, PreopenedDirectories) {
  char dir_template[] = "/tmp/cmhost-wasi-test-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  cmhost::wasi::WasiConfig config;
  config.preopens.push_back({dir, "/data", false});
  EXPECT_EQ(run_command({"write", "/data/f.txt", "contents"}, config).status, 0);
  EXPECT_EQ(run_command({"read", "/data/f.txt"}, config).out, "contents");
  config.preopens[0].read_only = true;
  const Ran refused = run_command({"write", "/data/g.txt", "x"}, config);
  EXPECT_EQ(refused.status, 1);
  EXPECT_EQ(refused.out, "error: Read-only file system\n");
  EXPECT_EQ(run_command({"ls", "/data"}, config).out, "f.txt\n");
  EXPECT_EQ(std::remove((dir + "/f.txt").c_str()), 0);
  EXPECT_EQ(::rmdir(dir.c_str()), 0);
  config.preopens[0].host_path = dir + "/gone";
  EXPECT_ERROR(run_command({"ls", "/data"}, config), cmhost::ErrorKind::Usage);
}

TEST(Wasi, ACommandNeedsTheRunExport) {
  cmhost::Engine engine{cmhost::testing_support::test_engine_config()};
  cmhost::Store store(engine);
  const auto basics = cmhost::Linker().instantiate(
      store, cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/basics.wasm"));
  EXPECT_ERROR(cmhost::wasi::run(store, basics), cmhost::ErrorKind::Usage);
}

}  // namespace
