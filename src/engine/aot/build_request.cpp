#include "build_request.hpp"

#include <charconv>
#include <sstream>

#include "cmhost/error.hpp"

#include "aot_codegen.h"

namespace cmhost::engine::aot {

namespace {

constexpr const char* kFirstLine = "cmhost-aot-build-request 1";

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

std::string single_line(const std::string& name, const std::string& value) {
  if (value.find('\n') != std::string::npos) usage("a background build cannot take a " + name + " with a line break");
  return value;
}

size_t parse_size(const std::string& text, const std::string& what) {
  size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) usage("build request: bad " + what + " `" + text + "`");
  return value;
}

}  // namespace

std::string encode_build_request(const std::string& path, const std::string& component_sha256,
                                 const BuildSettings& settings, const std::vector<std::span<const uint8_t>>& modules) {
  std::ostringstream out;
  out << kFirstLine << '\n';
  out << "cmhost " << CMHOST_VERSION << ' ' << CMHOST_AOT_CODEGEN << '\n';
  out << "path " << single_line("path", path) << '\n';
  out << "component-sha256 " << single_line("hash", component_sha256) << '\n';
  out << "compiler " << single_line("compiler", settings.compiler) << '\n';
  out << "baseline-compiler " << single_line("compiler", settings.baseline_compiler) << '\n';
  out << "baseline " << (settings.baseline ? 1 : 0) << '\n';
  out << "metered " << (settings.metered ? 1 : 0) << '\n';
  out << "split-bytes " << settings.split_bytes << '\n';
  out << "cache-dir " << single_line("cache directory", settings.cache_dir) << '\n';
  for (const auto& module : modules) out << "module " << module.size() << '\n';
  out << '\n';
  for (const auto& module : modules) out.write(reinterpret_cast<const char*>(module.data()), static_cast<std::streamsize>(module.size()));
  return std::move(out).str();
}

BuildRequest decode_build_request(const std::string& message) {
  BuildRequest request;
  std::vector<size_t> sizes;
  size_t at = 0;
  bool first = true;
  for (;;) {
    const size_t end = message.find('\n', at);
    if (end == std::string::npos) usage("build request: it ends before its modules");
    const std::string line = message.substr(at, end - at);
    at = end + 1;
    if (line.empty()) break;
    if (first) {
      if (line != kFirstLine) usage("not a build request");
      first = false;
      continue;
    }
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "cmhost") {
      const std::string ours = std::string(CMHOST_VERSION) + ' ' + CMHOST_AOT_CODEGEN;
      if (value != ours) usage("build request from another build of cmhost (" + value + "; this is " + ours + ")");
    } else if (key == "path") {
      request.path = value;
    } else if (key == "component-sha256") {
      request.component_sha256 = value;
    } else if (key == "compiler") {
      request.settings.compiler = value;
    } else if (key == "baseline-compiler") {
      request.settings.baseline_compiler = value;
    } else if (key == "baseline") {
      request.settings.baseline = value == "1";
    } else if (key == "metered") {
      request.settings.metered = value == "1";
    } else if (key == "split-bytes") {
      request.settings.split_bytes = parse_size(value, "split size");
    } else if (key == "cache-dir") {
      request.settings.cache_dir = value;
    } else if (key == "module") {
      sizes.push_back(parse_size(value, "module size"));
    } else {
      usage("build request: unknown line `" + line + "`");
    }
  }
  if (first) usage("not a build request");
  if (request.path.empty() || request.component_sha256.empty() || sizes.empty())
    usage("build request: no path, hash or modules");
  for (const size_t size : sizes) {
    if (size > message.size() - at) usage("build request: a module runs past its end");
    request.modules.emplace_back(message.begin() + static_cast<std::ptrdiff_t>(at),
                                 message.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += size;
  }
  if (at != message.size()) usage("build request: bytes after its modules");
  return request;
}

}  // namespace cmhost::engine::aot
