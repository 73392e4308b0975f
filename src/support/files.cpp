#include "files.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cmhost/error.hpp"

namespace cmhost::support {

namespace {

[[noreturn]] void cannot_read(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::Usage, "cannot read " + path + ": " + why);
}

// An open stream over the file, or an error saying why there is none.
std::ifstream open(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) cannot_read(path, "it is a directory");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) cannot_read(path, errno ? std::strerror(errno) : "it cannot be opened");
  return in;
}

template <class Out>
Out read_all(const std::string& path) {
  std::ifstream in = open(path);
  Out out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) cannot_read(path, "a read failed");
  return out;
}

}  // namespace

std::vector<uint8_t> read_file(const std::string& path) { return read_all<std::vector<uint8_t>>(path); }

std::string read_text_file(const std::string& path) { return read_all<std::string>(path); }

}  // namespace cmhost::support
