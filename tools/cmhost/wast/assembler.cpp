#include "assembler.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cmhost/error.hpp"

namespace cmhost::tools::wast {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kCacheMagic = "cmhost-wast-cache 1\n";

[[noreturn]] void fail(const std::string& message) { throw Error(ErrorKind::Usage, message); }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// FNV-1a from two starting points: 128 bits of key. Entries also keep their
// text and are compared in full, so a collision costs a miss, never a wrong
// binary.
std::string content_key(const std::string& salt, const std::string& text) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      a = (a ^ c) * 0x100000001b3ull;
      b = (b ^ c) * 0x100000001b3ull;
      b ^= b >> 29;
    }
  };
  mix(salt);
  mix(std::string_view("\0", 1));
  mix(text);
  return fmt::format("{:016x}{:016x}", a, b);
}

std::vector<uint8_t> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const int v = value(c);
    if (v < 0) fail("the assembler sent malformed base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  return out;
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::string("cannot write to the assembler: ") + std::strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

Assembler::Assembler(AssemblerConfig config) : config_(std::move(config)) {
  // The package's version plus the helper's text: entries made by another
  // jco (or another helper) are never reused.
  std::string version = "unknown";
  try {
    const auto package = nlohmann::json::parse(
        read_file(fs::path(config_.node_modules) / "@bytecodealliance" / "jco-transpile" / "package.json"));
    version = package.at("version").get<std::string>();
  } catch (const std::exception&) {
    // Without a readable package the helper will fail to start and say why.
  }
  cache_salt_ = "jco-transpile " + version + "\n" + read_file(config_.helper_script);
}

Assembler::~Assembler() {
  if (to_helper_ >= 0) ::close(to_helper_);  // end of input: the helper exits
  if (from_helper_ >= 0) ::close(from_helper_);
  if (helper_pid_ > 0) {
    int status = 0;
    ::waitpid(helper_pid_, &status, 0);
  }
}

void Assembler::start_helper() {
  if (!fs::exists(config_.helper_script)) fail("the assembler script " + config_.helper_script + " is missing");
  if (!fs::exists(fs::path(config_.node_modules) / "@bytecodealliance" / "jco-transpile"))
    fail("jco is not installed in " + config_.node_modules + " (run scripts/setup, or pass --jco-dir)");
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)
    fail(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    const char* argv[] = {config_.node.c_str(), config_.helper_script.c_str(), config_.node_modules.c_str(),
                          nullptr};
    ::execvp(argv[0], const_cast<char* const*>(argv));
    std::fprintf(stderr, "cmhost: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  helper_pid_ = pid;
  to_helper_ = in_pipe[1];
  from_helper_ = out_pipe[0];
  const auto hello = nlohmann::json::parse(read_line(), nullptr, false);
  if (hello.is_object() && hello.contains("fatal")) fail(hello["fatal"].get<std::string>());
  if (!hello.is_object() || !hello.value("ready", false)) fail("the assembler did not start");
}

std::string Assembler::read_line() {
  for (;;) {
    const auto newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return line;
    }
    char buffer[65536];
    const ssize_t n = ::read(from_helper_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(fmt::format("the assembler ({} {}) stopped answering", config_.node, config_.helper_script));
    pending_.append(buffer, static_cast<size_t>(n));
  }
}

std::string Assembler::cache_path(const std::string& text) const {
  return (fs::path(*config_.cache_dir) / (content_key(cache_salt_, text) + ".entry")).string();
}

// An entry: the magic line, the text's size and the text, then `W` and the
// binary or `E` and jco's message.
std::optional<Assembled> Assembler::cache_load(const std::string& text) const {
  if (!config_.cache_dir) return std::nullopt;
  const std::string entry = read_file(cache_path(text));
  if (!entry.starts_with(kCacheMagic)) return std::nullopt;
  size_t pos = kCacheMagic.size();
  const size_t newline = entry.find('\n', pos);
  if (newline == std::string::npos) return std::nullopt;
  const std::string size_text = entry.substr(pos, newline - pos);
  if (size_text != std::to_string(text.size())) return std::nullopt;
  pos = newline + 1;
  if (entry.size() < pos + text.size() + 1 || entry.compare(pos, text.size(), text) != 0) return std::nullopt;
  pos += text.size();
  Assembled result;
  const char tag = entry[pos++];
  if (tag == 'W') {
    result.ok = true;
    result.wasm.assign(entry.begin() + static_cast<std::ptrdiff_t>(pos), entry.end());
  } else if (tag == 'E') {
    result.error = entry.substr(pos);
  } else {
    return std::nullopt;
  }
  return result;
}

void Assembler::cache_store(const std::string& text, const Assembled& result) const {
  if (!config_.cache_dir) return;
  std::error_code ec;
  fs::create_directories(*config_.cache_dir, ec);
  const std::string path = cache_path(text);
  // Written aside and renamed: concurrent runs never read half an entry.
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) return;  // an unwritable cache only costs speed
    out << kCacheMagic << text.size() << '\n' << text << (result.ok ? 'W' : 'E');
    if (result.ok)
      out.write(reinterpret_cast<const char*>(result.wasm.data()), static_cast<std::streamsize>(result.wasm.size()));
    else
      out << result.error;
    if (!out) return;
  }
  fs::rename(temporary, path, ec);
  if (ec) fs::remove(temporary, ec);
}

std::vector<Assembled> Assembler::assemble(const std::vector<std::string>& texts) {
  std::vector<Assembled> results(texts.size());
  std::vector<size_t> missing;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (auto cached = cache_load(texts[i])) {
      results[i] = std::move(*cached);
      ++cache_hits_;
    } else {
      missing.push_back(i);
    }
  }
  if (missing.empty()) return results;
  if (helper_pid_ < 0) start_helper();
  nlohmann::json request;
  request["texts"] = nlohmann::json::array();
  for (size_t i : missing) request["texts"].push_back(texts[i]);
  write_all(to_helper_, request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  const auto response = nlohmann::json::parse(read_line(), nullptr, false);
  if (!response.is_object() || !response.contains("results") || response["results"].size() != missing.size())
    fail("the assembler sent an unexpected answer");
  for (size_t k = 0; k < missing.size(); ++k) {
    const auto& r = response["results"][k];
    Assembled& out = results[missing[k]];
    if (r.contains("wasm")) {
      out.ok = true;
      out.wasm = base64_decode(r["wasm"].get<std::string>());
    } else {
      out.error = r.value("error", std::string("unknown error"));
    }
    cache_store(texts[missing[k]], out);
    ++assembled_;
  }
  return results;
}

}  // namespace cmhost::tools::wast
