#include "stamp.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// SHA256_Init and friends are deprecated in OpenSSL 3 in favour of EVP (see
// sha256_hex).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "aot_codegen.h"
#include "cmhost/error.hpp"
#include "cmhost_aot.h"
#include "compiler.hpp"

namespace cmhost::engine::aot {

namespace {

constexpr char kMagic[8] = {'C', 'M', 'H', 'O', 'S', 'T', 'A', '1'};

// A stamp longer than this is a damaged one.
constexpr uint64_t kStampLimit = 65536;

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

}  // namespace

// OpenSSL's SHA-256 itself: the EVP interface would first set up its
// provider machinery, about 1.5 ms the first time in a process, more than
// loading a cached artifact takes.
std::string sha256_hex(std::span<const uint8_t> bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX context;
  if (!SHA256_Init(&context) || !SHA256_Update(&context, bytes.data(), bytes.size()) ||
      !SHA256_Final(digest, &context))
    usage("cannot hash the component (OpenSSL SHA-256 failed)");
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    hex += digits[digest[i] >> 4];
    hex += digits[digest[i] & 15];
  }
  return hex;
}

std::string Stamp::text() const {
  return "cmhost-artifact " + std::to_string(CMHOST_AOT_ABI) + "\ncomponent " + component_sha256 + "\ncmhost " +
         cmhost_version + "\ncodegen " + codegen + "\ncompiler " + compiler + "\ncompiler-version " +
         compiler_version + "\nflags " + flags + "\nmodules " + std::to_string(module_count) + "\n";
}

Stamp expected_stamp(std::span<const uint8_t> component, const BuildSettings& settings, size_t module_count) {
  return expected_stamp(sha256_hex(component), settings, module_count);
}

Stamp expected_stamp(const std::string& component_sha256, const BuildSettings& settings, size_t module_count) {
  Stamp stamp;
  stamp.component_sha256 = component_sha256;
  stamp.cmhost_version = CMHOST_VERSION;
  stamp.codegen = CMHOST_AOT_CODEGEN;
  stamp.compiler = compiler_identity(resolve_compiler(tier_compiler(settings)));
  stamp.flags = artifact_flags(settings.metered, settings.baseline);
  stamp.module_count = module_count;
  return stamp;
}

bool append_stamp(const std::string& path, const Stamp& stamp) {
  const std::string text = stamp.text();
  std::ofstream out(path, std::ios::binary | std::ios::app);
  uint64_t length = text.size();
  unsigned char length_bytes[8];
  for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<unsigned char>(length >> (8 * i));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.write(reinterpret_cast<const char*>(length_bytes), 8);
  out.write(kMagic, 8);
  return static_cast<bool>(out);
}

std::string read_stamp(int fd, int64_t size, const std::string& path) {
  if (size < 16) usage(path + " is not a cmhost artifact");
  char trailer[16];
  if (pread(fd, trailer, 16, size - 16) != 16 || std::memcmp(trailer + 8, kMagic, 8) != 0)
    usage(path + " is not a cmhost artifact (or one of another format)");
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t{static_cast<unsigned char>(trailer[i])} << (8 * i);
  if (length > kStampLimit || length + 16 > static_cast<uint64_t>(size)) usage(path + " has a damaged stamp");
  std::string text(length, '\0');
  if (pread(fd, text.data(), length, size - 16 - static_cast<off_t>(length)) != static_cast<ssize_t>(length))
    usage("cannot read the stamp of " + path);
  return text;
}

bool artifact_is_baseline(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  bool baseline = false;
  try {
    if (fstat(fd, &info) == 0) {
      const std::string flags = " " + stamp_field(read_stamp(fd, info.st_size, path), "flags") + " ";
      baseline = flags.find(" tier=baseline ") != std::string::npos;
    }
  } catch (const Error&) {
    // No stamp: the load says what is wrong with the file.
  }
  close(fd);
  return baseline;
}

std::string stamp_field(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return line.substr(name.size() + 1);
  return "";
}

void check_stamp(const std::string& text, const Stamp& expected, const std::string& path) {
  const auto differs = [&](const std::string& name, const std::string& want, const std::string& what) {
    const std::string have = stamp_field(text, name);
    if (have != want)
      usage("the artifact " + path + " was built " + what + " (" + (have.empty() ? "none" : have) + "), not " + want);
  };
  differs("cmhost-artifact", std::to_string(CMHOST_AOT_ABI), "for another artifact format");
  differs("component", expected.component_sha256, "from another component, whose SHA-256 is");
  differs("cmhost", expected.cmhost_version, "by another version of cmhost");
  differs("codegen", expected.codegen,
          "by another build of cmhost, whose translator, glue or runtime support differ (stale: compile it again); "
          "its code-generation hash is");
  differs("compiler", expected.compiler, "with another C compiler");
  // Metering alone is told apart: the fix is another artifact, not another compiler.
  if (stamp_field(text, "flags") + kMeteredFlag == expected.flags)
    usage("the artifact " + path + " was built without metering, which fuel and deadlines need");
  if (stamp_field(text, "flags") == expected.flags + kMeteredFlag)
    usage("the artifact " + path + " was built with metering, which this engine does not do");
  differs("flags", expected.flags, "with other flags");
  if (expected.module_count != kAnyModuleCount)
    differs("modules", std::to_string(expected.module_count), "with another number of core modules");
}

}  // namespace cmhost::engine::aot
