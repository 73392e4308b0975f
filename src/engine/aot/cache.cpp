// The cache of compiled components: a directory of ours closed to others,
// one file per stamp.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "artifact.hpp"
#include "cmhost/error.hpp"

namespace cmhost::engine::aot {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

}  // namespace

std::string cache_directory(const std::string& configured) {
  fs::path dir;
  if (!configured.empty()) {
    dir = configured;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = fs::path(xdg) / "cmhost";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = fs::path(home) / ".cache" / "cmhost";
  } else {
    usage("no cache directory for compiled components: set XDG_CACHE_HOME or HOME");
  }
  std::error_code error;
  if (!fs::exists(dir.parent_path(), error)) {
    fs::create_directories(dir.parent_path(), error);
    if (!error) chmod(dir.parent_path().c_str(), 0700);
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    usage("cannot create the cache directory " + dir.string() + ": " + std::strerror(errno));
  struct stat info {};
  if (lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    usage("the cache directory " + dir.string() + " is not a directory");
  if (info.st_uid != geteuid()) usage("the cache directory " + dir.string() + " belongs to another user");
  if (info.st_mode & (S_IWGRP | S_IWOTH))
    usage("the cache directory " + dir.string() + " is writable by others (it must be 0700)");
  return dir.string();
}

std::string cache_path(const std::string& directory, const Stamp& stamp) {
  const std::string key = stamp.component_sha256 + "\n" + stamp.cmhost_version + "\n" + stamp.codegen + "\n" +
                          stamp.compiler + "\n" + stamp.flags + "\n" + std::to_string(stamp.module_count);
  const std::string hash =
      sha256_hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
  return (fs::path(directory) / (hash.substr(0, 40) + ".cmhost-aot")).string();
}

}  // namespace cmhost::engine::aot
