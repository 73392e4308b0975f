// A served component too big to wait for optimized code (here: any, with
// tiered_code_bytes 0) starts on baseline code, and the server moves to
// the optimized code once its background build is done, without a request
// failing: a 0.2 proxy's new instances, and a 0.3 service's next instance.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "cmhost/http.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost {
namespace {

namespace fs = std::filesystem;

// A GET of `/` on 127.0.0.1:port; the whole response, empty when none came.
std::string get(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return response;
}

struct Guest {
  const char* file;
  const char* body;
};
void PrintTo(const Guest& guest, std::ostream* out) { *out << guest.file; }

class ServeTiers : public ::testing::TestWithParam<Guest> {
 protected:
  ServeTiers() : dir_(fs::temp_directory_path() / ("cmhost-serve-tiers-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ServeTiers() override { fs::remove_all(dir_); }

  bool warned(const std::string& text) {
    std::lock_guard lock(mutex_);
    return std::any_of(warnings_.begin(), warnings_.end(),
                       [&](const std::string& line) { return line.find(text) != std::string::npos; });
  }

  fs::path dir_;
  std::mutex mutex_;
  std::vector<std::string> warnings_, compiled_;
};

TEST_P(ServeTiers, TheServerMovesToTheOptimizedCodeOnceItIsBuilt) {
  Engine engine({.backend = engine::Backend::AheadOfTime,
                 .cache_dir = (dir_ / "cache").string(),
                 .tiered_code_bytes = 0,
                 .aot_builder = CMHOST_TEST_AOT_BUILDER,
                 .on_compile = [this](const std::string& line) { compiled_.push_back(line); }});
  const Component component = Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/" + GetParam().file);
  ASSERT_EQ(compiled_.size(), 2u);
  EXPECT_NE(compiled_[0].find("to baseline native code"), std::string::npos) << compiled_[0];
  EXPECT_NE(compiled_[1].find("in the background"), std::string::npos) << compiled_[1];
  Linker linker;
  wasi::add_to_linker(linker, wasi::WasiConfig{});
  const http::HttpConfig http_config;
  http::add_to_linker(linker, http_config);
  http::ServeConfig config;
  config.host = "127.0.0.1";
  config.port = 0;
  config.watch_signals = true;  // the test ends it with SIGTERM
  config.warn = [this](const std::string& line) {
    std::lock_guard lock(mutex_);
    warnings_.push_back(line);
  };
  Store store(engine);
  http::Server server(engine, store, linker, component, http_config, config);
  const uint16_t port = server.port();
  std::vector<std::string> responses;
  std::thread client([&] {
    // Requests until the server said it moved (the build takes the C
    // compiler seconds), then two more on the optimized code.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!warned("the optimized code is ready") && std::chrono::steady_clock::now() < until) {
      responses.push_back(get(port));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    for (int i = 0; i < 2; ++i) responses.push_back(get(port));
    ::kill(::getpid(), SIGTERM);
  });
  server.run();
  client.join();
  EXPECT_TRUE(warned("the optimized code is ready")) << "still on baseline code after 120 s";
  ASSERT_GE(responses.size(), 3u);
  for (const std::string& response : responses) {
    EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << response;
    EXPECT_NE(response.find(GetParam().body), std::string::npos) << response;
  }
}

INSTANTIATE_TEST_SUITE_P(Guests, ServeTiers,
                         ::testing::Values(Guest{"http-proxy.wasm", "hello from a C proxy"},
                                           Guest{"http-service.wasm", "hello from a C service"}),
                         [](const auto& info) { return std::string(info.param.file[5] == 'p' ? "Proxy" : "Service"); });

}  // namespace
}  // namespace cmhost
