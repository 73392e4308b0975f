// wasi:filesystem's POSIX side for every version (files.hpp), each path
// through the confinement of confine.hpp.
#include "files.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace cmhost::wasi::core {

namespace {

template <class T>
OrErrno<T> fail(int error = errno) {
  return OrErrno<T>::failure(error);
}

// 0, or errno when a call returning -1 on failure failed.
int status(int result) { return result == 0 ? 0 : errno; }

// The timespec utimensat takes; false for nanoseconds of a second or more.
bool to_timespec(const NewTime& time, timespec& out) {
  switch (time.kind) {
    case NewTime::Kind::unchanged: out = {0, UTIME_OMIT}; return true;
    case NewTime::Kind::now: out = {0, UTIME_NOW}; return true;
    case NewTime::Kind::at:
      if (time.nanoseconds >= 1'000'000'000) return false;
      out = {static_cast<time_t>(time.seconds), static_cast<long>(time.nanoseconds)};
      return true;
  }
  return false;
}

// The times of a set-times call, or EINVAL.
int to_times(const NewTime& access, const NewTime& modification, timespec (&times)[2]) {
  return to_timespec(access, times[0]) && to_timespec(modification, times[1]) ? 0 : EINVAL;
}

int unlink_name(const OpenFile& dir, const std::string& path, int flags) {
  if (!dir.rights.mutate) return kRefused;
  auto parent = parent_beneath(dir.fd.get(), path);
  if (!parent) return errno;
  if (parent->name == ".") return flags ? EBUSY : EISDIR;
  return status(::unlinkat(parent->dir.get(), parent->name.c_str(), flags));
}

}  // namespace

Rights preopen_rights(const Preopen& preopen) {
  return preopen.read_only ? Rights{.read = true} : Rights{.read = true, .write = true, .mutate = true};
}

OrErrno<OpenFile> open_preopen_file(const Preopen& preopen) {
  Fd fd = open_preopen(preopen);
  if (!fd) return fail<OpenFile>();
  return OpenFile{std::move(fd), preopen_rights(preopen), true};
}

OrErrno<OpenFile> open_at(const OpenFile& dir, const std::string& path, const OpenRequest& request) {
  // A descriptor has at most the rights of the one it was opened from.
  if ((request.write || request.mutate || request.create) && !dir.rights.mutate) return fail<OpenFile>(kRefused);
  if (request.truncate && !request.write) return fail<OpenFile>(EINVAL);
  int flags = request.read && request.write ? O_RDWR : request.write ? O_WRONLY : O_RDONLY;
  // Never wait in open(2) (a FIFO without a peer would hold one of the
  // process's few blocking threads for ever), never become a terminal's
  // controlling process; the descriptor blocks again once open.
  flags |= O_NONBLOCK | O_NOCTTY;
  if (request.create) flags |= O_CREAT;
  if (request.directory) flags |= O_DIRECTORY;
  if (request.exclusive) flags |= O_EXCL;
  if (request.truncate) flags |= O_TRUNC;
  Fd fd = open_beneath(dir.fd.get(), path, flags, 0666, request.follow);
  // create over an existing directory is EISDIR; without write, opening
  // that directory is what was asked.
  if (!fd && errno == EISDIR && !request.write)
    fd = open_beneath(dir.fd.get(), path, O_RDONLY | O_DIRECTORY | O_NOCTTY, 0, request.follow);
  if (!fd) return fail<OpenFile>();
  const int status = ::fcntl(fd.get(), F_GETFL);
  if (status < 0 || ::fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK) < 0) return fail<OpenFile>();
  struct stat st {};
  if (::fstat(fd.get(), &st)) return fail<OpenFile>();
  // Read and write rights as asked; the right to change a directory as the parent's.
  const Rights rights{.read = request.read, .write = request.write, .mutate = dir.rights.mutate};
  return OpenFile{std::move(fd), rights, S_ISDIR(st.st_mode)};
}

FileType file_type(mode_t mode) {
  if (S_ISREG(mode)) return FileType::regular_file;
  if (S_ISDIR(mode)) return FileType::directory;
  if (S_ISLNK(mode)) return FileType::symbolic_link;
  if (S_ISBLK(mode)) return FileType::block_device;
  if (S_ISCHR(mode)) return FileType::character_device;
  if (S_ISFIFO(mode)) return FileType::fifo;
  if (S_ISSOCK(mode)) return FileType::socket;
  return FileType::unknown;
}

OrErrno<struct stat> stat_file(const OpenFile& file) {
  struct stat st {};
  if (::fstat(file.fd.get(), &st)) return fail<struct stat>();
  return st;
}

OrErrno<struct stat> stat_at(const OpenFile& dir, const std::string& path, bool follow) {
  struct stat st {};
  if (follow) {
    Fd target = open_beneath(dir.fd.get(), path, O_PATH, 0, true);
    if (!target || ::fstat(target.get(), &st)) return fail<struct stat>();
    return st;
  }
  auto parent = parent_beneath(dir.fd.get(), path);
  if (!parent || ::fstatat(parent->dir.get(), parent->name.c_str(), &st, AT_SYMLINK_NOFOLLOW))
    return fail<struct stat>();
  return st;
}

int set_times(const OpenFile& file, const NewTime& access, const NewTime& modification) {
  if (!file.rights.mutate) return kRefused;
  timespec times[2];
  if (const int e = to_times(access, modification, times)) return e;
  return status(::futimens(file.fd.get(), times));
}

int set_times_at(const OpenFile& dir, const std::string& path, bool follow, const NewTime& access,
                 const NewTime& modification) {
  if (!dir.rights.mutate) return kRefused;
  timespec times[2];
  if (const int e = to_times(access, modification, times)) return e;
  if (follow) {
    Fd target = open_beneath(dir.fd.get(), path, O_PATH, 0, true);
    if (!target) return errno;
    return status(::utimensat(target.get(), "", times, AT_EMPTY_PATH));
  }
  auto parent = parent_beneath(dir.fd.get(), path);
  if (!parent) return errno;
  return status(::utimensat(parent->dir.get(), parent->name.c_str(), times, AT_SYMLINK_NOFOLLOW));
}

int create_directory_at(const OpenFile& dir, const std::string& path) {
  if (!dir.rights.mutate) return kRefused;
  auto parent = parent_beneath(dir.fd.get(), path);
  if (!parent) return errno;
  return status(::mkdirat(parent->dir.get(), parent->name.c_str(), 0777));
}

int link_at(const OpenFile& dir, bool follow, const std::string& old_path, const OpenFile& new_dir,
            const std::string& new_path) {
  if (!dir.rights.mutate || !new_dir.rights.mutate) return kRefused;
  if (follow) return EINVAL;
  auto from = parent_beneath(dir.fd.get(), old_path);
  auto to = from ? parent_beneath(new_dir.fd.get(), new_path) : std::nullopt;
  if (!from || !to) return errno;
  return status(::linkat(from->dir.get(), from->name.c_str(), to->dir.get(), to->name.c_str(), 0));
}

int rename_at(const OpenFile& dir, const std::string& old_path, const OpenFile& new_dir, const std::string& new_path) {
  if (!dir.rights.mutate || !new_dir.rights.mutate) return kRefused;
  auto from = parent_beneath(dir.fd.get(), old_path);
  auto to = from ? parent_beneath(new_dir.fd.get(), new_path) : std::nullopt;
  if (!from || !to) return errno;
  return status(::renameat(from->dir.get(), from->name.c_str(), to->dir.get(), to->name.c_str()));
}

int symlink_at(const OpenFile& dir, const std::string& target, const std::string& path) {
  if (!dir.rights.mutate) return kRefused;
  if (!target.empty() && target.front() == '/') return EPERM;  // as wasmtime (cap-std) decides
  if (has_nul(target)) return EINVAL;
  auto parent = parent_beneath(dir.fd.get(), path);
  if (!parent) return errno;
  return status(::symlinkat(target.c_str(), parent->dir.get(), parent->name.c_str()));
}

int unlink_file_at(const OpenFile& dir, const std::string& path) { return unlink_name(dir, path, 0); }

int remove_directory_at(const OpenFile& dir, const std::string& path) { return unlink_name(dir, path, AT_REMOVEDIR); }

OrErrno<std::string> readlink_at(const OpenFile& dir, const std::string& path) {
  auto parent = parent_beneath(dir.fd.get(), path);
  if (!parent) return fail<std::string>();
  auto target = read_link_target(parent->dir.get(), parent->name);
  if (!target) return fail<std::string>();
  // Not the guest's to learn (wasmtime refuses it too).
  if (!target->empty() && target->front() == '/') return fail<std::string>(EPERM);
  return std::move(*target);
}

int advise(const OpenFile& file, uint64_t offset, uint64_t length, Advice advice) {
  static constexpr int kAdvice[] = {POSIX_FADV_NORMAL,   POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM,
                                    POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED,   POSIX_FADV_NOREUSE};
  // posix_fadvise returns the error rather than setting errno.
  return ::posix_fadvise(file.fd.get(), static_cast<off_t>(offset), static_cast<off_t>(length),
                         kAdvice[static_cast<size_t>(advice)]);
}

int sync_data(const OpenFile& file) { return status(::fdatasync(file.fd.get())); }

int sync(const OpenFile& file) { return status(::fsync(file.fd.get())); }

int set_size(const OpenFile& file, uint64_t size) {
  if (const int e = may_write(file)) return e;
  return status(::ftruncate(file.fd.get(), static_cast<off_t>(size)));
}

int may_read(const OpenFile& file) { return file.rights.read ? 0 : EBADF; }

int may_write(const OpenFile& file) { return file.rights.write ? 0 : EBADF; }

ssize_t read_at(int fd, uint8_t* data, size_t size, uint64_t offset) {
  ssize_t n;
  do n = ::pread(fd, data, size, static_cast<off_t>(offset));
  while (n < 0 && errno == EINTR);
  return n;
}

ssize_t write_at(int fd, const uint8_t* data, size_t size, uint64_t offset) {
  ssize_t n;
  do n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
  while (n < 0 && errno == EINTR);
  return n;
}

int write_fully(int fd, const uint8_t* data, size_t size, uint64_t* offset) {
  while (size > 0) {
    ssize_t n;
    if (offset) {
      n = write_at(fd, data, size, *offset);
    } else {
      iovec bytes{const_cast<uint8_t*>(data), size};
      do n = ::pwritev2(fd, &bytes, 1, -1, RWF_APPEND);
      while (n < 0 && errno == EINTR);
    }
    if (n < 0) return errno;
    if (n == 0) return EIO;
    data += n;
    size -= static_cast<size_t>(n);
    if (offset) *offset += static_cast<uint64_t>(n);
  }
  return 0;
}

OrErrno<std::unique_ptr<DirectoryListing>> DirectoryListing::open(const OpenFile& dir) {
  Fd own = open_beneath(dir.fd.get(), ".", O_RDONLY | O_DIRECTORY, 0, true);
  if (!own) return fail<std::unique_ptr<DirectoryListing>>();
  DIR* listing = ::fdopendir(own.get());
  if (!listing) return fail<std::unique_ptr<DirectoryListing>>();
  own.release();  // the listing owns it now
  return std::unique_ptr<DirectoryListing>(new DirectoryListing(listing));
}

DirectoryListing::~DirectoryListing() { ::closedir(dir_); }

OrErrno<std::optional<DirectoryListing::Entry>> DirectoryListing::next() {
  for (;;) {
    errno = 0;
    const dirent* found = ::readdir(dir_);
    if (!found) {
      if (errno) return fail<std::optional<Entry>>();
      return std::optional<Entry>();
    }
    const std::string_view name = found->d_name;
    if (name == "." || name == "..") continue;
    Entry entry{std::string(name)};
    struct stat st {};
    if (::fstatat(::dirfd(dir_), found->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
      entry.type = file_type(st.st_mode);
    else
      entry.type_error = errno;
    return std::optional<Entry>(std::move(entry));
  }
}

}  // namespace cmhost::wasi::core
