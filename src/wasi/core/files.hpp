// The POSIX side of wasi:filesystem that every WASI version shares: a
// guest's open files and directories with the rights it holds on them,
// opening beneath a directory, the operations on final names, stat, times,
// directory listings and I/O at an offset, every path confined by
// confine.hpp. Failures are errnos (0 is success) for each version to map
// to its error codes; one of them is no kernel errno: kRefused, what a
// descriptor's rights refuse, which each version reports its own way.
// Everything here may run on any thread (the store's pool): it touches no
// store and no guest memory.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cmhost/wasi.hpp"
#include "confine.hpp"

namespace cmhost::wasi::core {

// What a descriptor lets the guest do: read and write its file, and change
// the tree beneath its directory (create, remove, rename, link, set times).
// A read-write preopen has all three and a read-only one `read`; a
// descriptor opened beneath another has the read and write asked for and
// its parent's `mutate`.
struct Rights {
  bool read = false;
  bool write = false;
  bool mutate = false;
};
Rights preopen_rights(const Preopen& preopen);

// The "errno" of an operation the descriptor's rights refuse (a change
// beneath a read-only preopen). No kernel errno has this value, so a
// version tells it from a read-only mount's EROFS.
inline constexpr int kRefused = -1;

// A value, or the errno saying why there is none.
template <class T>
class OrErrno {
 public:
  OrErrno(T value) : value_(std::move(value)) {}  // NOLINT: a value converts implicitly
  static OrErrno failure(int error) { return OrErrno(error); }
  explicit operator bool() const { return value_.has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  int error() const { return error_; }

 private:
  explicit OrErrno(int error) : error_(error) {}
  std::optional<T> value_;
  int error_ = 0;
};

// A guest's open file or directory: the host descriptor and its rights.
struct OpenFile {
  Fd fd;
  Rights rights;
  bool directory = false;  // what fstat said when it was opened
};

// The preopen's directory, opened afresh, with the preopen's rights.
OrErrno<OpenFile> open_preopen_file(const Preopen& preopen);

// What open-at asks: how to resolve the path, the open flags, and the
// rights wanted (descriptor-flags' read, write, mutate-directory).
struct OpenRequest {
  bool follow = false;
  bool create = false;
  bool directory = false;
  bool exclusive = false;
  bool truncate = false;
  bool read = false;
  bool write = false;
  bool mutate = false;
};
// Opens `path` beneath `dir`: kRefused when write, mutate or create is
// asked of a directory that may not change; EINVAL for truncate without
// write; files are created 0666 less umask. An existing directory opened
// with create (not exclusive) and without write is opened as a directory.
OrErrno<OpenFile> open_at(const OpenFile& dir, const std::string& path, const OpenRequest& request);

// The kinds of file st_mode tells apart.
enum class FileType : uint8_t {
  unknown,
  block_device,
  character_device,
  directory,
  fifo,
  symbolic_link,
  regular_file,
  socket,
};
FileType file_type(mode_t mode);

OrErrno<struct stat> stat_file(const OpenFile& file);
// `path` beneath `dir`, its final symlink followed only when asked.
OrErrno<struct stat> stat_at(const OpenFile& dir, const std::string& path, bool follow);

// A timestamp set-times sets: left as it is, the time now, or a time
// (seconds since the epoch and nanoseconds past them, below 10^9).
struct NewTime {
  enum class Kind : uint8_t { unchanged, now, at };
  Kind kind = Kind::unchanged;
  int64_t seconds = 0;
  uint32_t nanoseconds = 0;
};
// Both need `mutate`: the kernel lets an owner touch a file opened only
// for reading, so the rights must refuse it. EINVAL for nanoseconds of a
// second or more (the kernel would read two such values as "now" and
// "unchanged").
int set_times(const OpenFile& file, const NewTime& access, const NewTime& modification);
int set_times_at(const OpenFile& dir, const std::string& path, bool follow, const NewTime& access,
                 const NewTime& modification);

// Operations on a final name, acted on through its parent and never
// followed. All but readlink-at need `mutate` on every directory involved.
int create_directory_at(const OpenFile& dir, const std::string& path);  // mode 0777 less umask
// EINVAL when asked to follow the old path's symlink.
int link_at(const OpenFile& dir, bool follow, const std::string& old_path, const OpenFile& new_dir,
            const std::string& new_path);
int rename_at(const OpenFile& dir, const std::string& old_path, const OpenFile& new_dir, const std::string& new_path);
// An absolute target is EPERM (a program outside the sandbox following the
// link would be led to a host path); a relative one is stored as given,
// and one leading out is never followed out here.
int symlink_at(const OpenFile& dir, const std::string& target, const std::string& path);
// `.` is EISDIR for unlink-file-at and EBUSY for remove-directory-at.
int unlink_file_at(const OpenFile& dir, const std::string& path);
int remove_directory_at(const OpenFile& dir, const std::string& path);
// An absolute target is EPERM: it names a host path outside every preopen.
OrErrno<std::string> readlink_at(const OpenFile& dir, const std::string& path);

// posix_fadvise's advice, in the order every version's WIT lists it.
enum class Advice : uint8_t { normal, sequential, random, will_need, dont_need, no_reuse };
int advise(const OpenFile& file, uint64_t offset, uint64_t length, Advice advice);
int sync_data(const OpenFile& file);
int sync(const OpenFile& file);
int set_size(const OpenFile& file, uint64_t size);  // needs `write`

// Reading needs `read` and writing `write`: EBADF otherwise, what the
// kernel says of a descriptor not opened for it.
int may_read(const OpenFile& file);
int may_write(const OpenFile& file);

// pread at `offset`: bytes read (0 at the end), or -1 with errno.
ssize_t read_at(int fd, uint8_t* data, size_t size, uint64_t offset);
// pwrite at `offset`: bytes written, or -1 with errno.
ssize_t write_at(int fd, const uint8_t* data, size_t size, uint64_t offset);
// Writes all `size` bytes at `*offset`, advancing it past what was
// written, or at the end of the file when `offset` is null (RWF_APPEND,
// whatever the descriptor's flags): 0 or an errno (EIO when the kernel
// takes nothing, which would otherwise repeat for ever).
int write_fully(int fd, const uint8_t* data, size_t size, uint64_t* offset);

// A directory's entries from its start, without `.` and `..`, through a
// descriptor of the listing's own (so listings of one directory never
// share a position). Each entry's type comes from lstat.
class DirectoryListing {
 public:
  static OrErrno<std::unique_ptr<DirectoryListing>> open(const OpenFile& dir);
  ~DirectoryListing();
  DirectoryListing(const DirectoryListing&) = delete;
  DirectoryListing& operator=(const DirectoryListing&) = delete;

  struct Entry {
    std::string name;
    FileType type = FileType::unknown;
    int type_error = 0;  // why lstat failed (type unknown then), or 0
  };
  // The next entry; none at the end.
  OrErrno<std::optional<Entry>> next();

 private:
  explicit DirectoryListing(DIR* dir) : dir_(dir) {}
  DIR* dir_;
};

}  // namespace cmhost::wasi::core
