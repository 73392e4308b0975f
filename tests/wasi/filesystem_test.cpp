// The confinement every WASI filesystem uses (src/wasi/core/confine.cpp) below what a
// guest can reach: symlink targets longer than the first buffer, and the
// bound on what reading one allocates.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../src/wasi/core/confine.hpp"

namespace {

using cmhost::wasi::core::read_link_target;

// A fresh directory holding the symlink `link` to `target`, removed after.
class LinkDirectory {
 public:
  explicit LinkDirectory(const std::string& target) {
    char name[] = "/tmp/cmhost-readlink-XXXXXX";
    path_ = mkdtemp(name);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    linked_ = ::symlinkat(target.c_str(), fd_, "link") == 0;
  }
  ~LinkDirectory() {
    ::unlinkat(fd_, "link", 0);
    ::close(fd_);
    ::rmdir(path_.c_str());
  }
  int fd() const { return fd_; }
  bool linked() const { return linked_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool linked_ = false;
};

TEST(WasiFilesystem, ALinkTargetIsReadWholePastTheFirstBuffer) {
  std::string target;
  while (target.size() < 4000) target += "segment/" + std::to_string(target.size()) + "/";  // not all one byte
  const LinkDirectory dir(target);
  ASSERT_TRUE(dir.linked());
  for (size_t first_size : {1, 16, 255, 4096, 8192}) {
    const auto read = read_link_target(dir.fd(), "link", first_size);
    ASSERT_TRUE(read) << first_size << ": " << std::strerror(errno);
    EXPECT_EQ(*read, target) << first_size;
  }
}

TEST(WasiFilesystem, ATargetFillingTheLimitFailsWithNameTooLong) {
  const std::string target(1000, 'x');
  const LinkDirectory dir(target);
  ASSERT_TRUE(dir.linked());
  errno = 0;
  EXPECT_FALSE(read_link_target(dir.fd(), "link", 16, 1000));  // no room to tell it ends
  EXPECT_EQ(errno, ENAMETOOLONG);
  const auto read = read_link_target(dir.fd(), "link", 16, 1001);
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, target);
}

TEST(WasiFilesystem, ReadingWhatIsNoLinkFails) {
  const LinkDirectory dir("anything");
  errno = 0;
  EXPECT_FALSE(read_link_target(dir.fd(), ".", 16));
  EXPECT_EQ(errno, EINVAL);
  EXPECT_FALSE(read_link_target(dir.fd(), "missing", 16));
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
