// wasi:filesystem 0.2: descriptors over host file descriptors. Every path
// goes through the core's confinement (src/wasi/core/confine.hpp: openat2
// beneath the descriptor's directory, final names acted on through their
// parent); what is here is the 0.2 interface over it and errno mapped to
// its error codes.
#include "filesystem.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "wasi/core/confine.hpp"

namespace cmhost::wasi::detail {

namespace {

using abi::typed::Own;
using abi::typed::Result;
using core::Fd;
using core::has_nul;
using core::open_beneath;
using core::open_preopen;
using core::parent_beneath;
using core::read_link_target;
using fs::types::ErrorCode;
template <class T>
using FsResult = Result<T, ErrorCode>;

ErrorCode error_code(int e) {
  switch (e) {
    case EACCES: return ErrorCode::access;
    case EAGAIN: return ErrorCode::would_block;
    case EALREADY: return ErrorCode::already;
    case EBADF: return ErrorCode::bad_descriptor;
    case EBUSY: return ErrorCode::busy;
    case EDEADLK: return ErrorCode::deadlock;
    case EDQUOT: return ErrorCode::quota;
    case EEXIST: return ErrorCode::exist;
    case EFBIG: return ErrorCode::file_too_large;
    case EILSEQ: return ErrorCode::illegal_byte_sequence;
    case EINPROGRESS: return ErrorCode::in_progress;
    case EINTR: return ErrorCode::interrupted;
    case EINVAL: return ErrorCode::invalid;
    case EIO: return ErrorCode::io;
    case EISDIR: return ErrorCode::is_directory;
    case ELOOP: return ErrorCode::loop;
    case EMLINK: return ErrorCode::too_many_links;
    case EMSGSIZE: return ErrorCode::message_size;
    case ENAMETOOLONG: return ErrorCode::name_too_long;
    case ENODEV: return ErrorCode::no_device;
    case ENOENT: return ErrorCode::no_entry;
    case ENOLCK: return ErrorCode::no_lock;
    case ENOMEM: return ErrorCode::insufficient_memory;
    case ENOSPC: return ErrorCode::insufficient_space;
    case ENOTDIR: return ErrorCode::not_directory;
    case ENOTEMPTY: return ErrorCode::not_empty;
    case ENOTRECOVERABLE: return ErrorCode::not_recoverable;
    case EOPNOTSUPP: return ErrorCode::unsupported;
    case ENOTTY: return ErrorCode::no_tty;
    case ENXIO: return ErrorCode::no_such_device;
    case EOVERFLOW: return ErrorCode::overflow;
    case EPIPE: return ErrorCode::pipe;
    case EROFS: return ErrorCode::read_only;
    case ESPIPE: return ErrorCode::invalid_seek;
    case ETXTBSY: return ErrorCode::text_file_busy;
    // A path leaving its directory (RESOLVE_BENEATH), or a forbidden one.
    case EXDEV:
    case EPERM:
    default: return ErrorCode::not_permitted;
  }
}

template <class T = void>
FsResult<T> fail(int e = errno) {
  return FsResult<T>::err(error_code(e));
}

fs::types::DescriptorType type_of(mode_t mode) {
  using T = fs::types::DescriptorType;
  if (S_ISREG(mode)) return T::regular_file;
  if (S_ISDIR(mode)) return T::directory;
  if (S_ISLNK(mode)) return T::symbolic_link;
  if (S_ISBLK(mode)) return T::block_device;
  if (S_ISCHR(mode)) return T::character_device;
  if (S_ISFIFO(mode)) return T::fifo;
  if (S_ISSOCK(mode)) return T::socket;
  return T::unknown;
}

fs::types::Datetime datetime(const timespec& t) {
  return {static_cast<uint64_t>(t.tv_sec), static_cast<uint32_t>(t.tv_nsec)};
}

fs::types::DescriptorStat stat_of(const struct stat& st) {
  return {type_of(st.st_mode), st.st_nlink,           static_cast<uint64_t>(st.st_size),
          datetime(st.st_atim), datetime(st.st_mtim), datetime(st.st_ctim)};
}

fs::types::MetadataHashValue hash_of(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev)};
}

timespec timestamp(const fs::types::NewTimestamp& t) {
  if (std::holds_alternative<fs::types::new_timestamp::NoChange>(t)) return {0, UTIME_OMIT};
  if (std::holds_alternative<fs::types::new_timestamp::Now>(t)) return {0, UTIME_NOW};
  const auto& at = std::get<fs::types::new_timestamp::Timestamp>(t).value;
  return {static_cast<time_t>(at.seconds), static_cast<long>(at.nanoseconds)};
}

using StreamResult = Result<void, io::streams::StreamError>;

// A file read from `offset` on, through its own position.
class FileInput final : public io::streams::InputStream {
 public:
  FileInput(std::shared_ptr<const Handles> handles, int fd, uint64_t offset)
      : handles_(std::move(handles)), fd_(::dup(fd)), offset_(offset) {}
  Result<std::vector<uint8_t>, io::streams::StreamError> read(Caller& caller, uint64_t len) override {
    using R = Result<std::vector<uint8_t>, io::streams::StreamError>;
    std::vector<uint8_t> out(std::min<uint64_t>(len, 1 << 20));
    const ssize_t n = ::pread(fd_.get(), out.data(), out.size(), static_cast<off_t>(offset_));
    if (n < 0) return R::err(failed(caller, *handles_, errno));
    if (n == 0 && len > 0) return R::err(io::streams::stream_error::Closed{});
    out.resize(static_cast<size_t>(n));
    offset_ += static_cast<uint64_t>(n);
    return R::ok(std::move(out));
  }
  Result<std::vector<uint8_t>, io::streams::StreamError> blocking_read(Caller& caller, uint64_t len) override {
    return read(caller, len);
  }
  Result<uint64_t, io::streams::StreamError> skip(Caller& caller, uint64_t len) override {
    using R = Result<uint64_t, io::streams::StreamError>;
    auto r = read(caller, len);
    if (r.is_err()) return R::err(std::move(r.error()));
    return R::ok(r.value().size());
  }
  Result<uint64_t, io::streams::StreamError> blocking_skip(Caller& caller, uint64_t len) override {
    return skip(caller, len);
  }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override { return std::make_unique<Pollable>(); }

 private:
  std::shared_ptr<const Handles> handles_;
  Fd fd_;
  uint64_t offset_;
};

// A file written from `offset` on, or appended to.
class FileOutput final : public ImmediateOutput {
 public:
  FileOutput(std::shared_ptr<const Handles> handles, int fd, std::optional<uint64_t> offset)
      : ImmediateOutput(1 << 20), handles_(std::move(handles)), fd_(::dup(fd)), offset_(offset) {}

 private:
  StreamResult put(Caller& caller, const uint8_t* data, size_t n) override {
    while (n > 0) {
      const ssize_t w = offset_ ? ::pwrite(fd_.get(), data, n, static_cast<off_t>(*offset_)) : ::write(fd_.get(), data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return StreamResult::err(failed(caller, *handles_, errno));
      data += w;
      n -= static_cast<size_t>(w);
      if (offset_) *offset_ += static_cast<uint64_t>(w);
    }
    return StreamResult::ok();
  }

  std::shared_ptr<const Handles> handles_;
  Fd fd_;
  std::optional<uint64_t> offset_;  // none: appending (O_APPEND)
};

class Entries final : public fs::types::DirectoryEntryStream {
 public:
  explicit Entries(DIR* dir) : dir_(dir) {}
  ~Entries() override {
    if (dir_) ::closedir(dir_);
  }
  FsResult<std::optional<fs::types::DirectoryEntry>> read_directory_entry(Caller&) override {
    using R = FsResult<std::optional<fs::types::DirectoryEntry>>;
    for (;;) {
      errno = 0;
      const dirent* e = ::readdir(dir_);
      if (!e) return errno ? fail<std::optional<fs::types::DirectoryEntry>>() : R::ok(std::nullopt);
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      struct stat st {};
      fs::types::DescriptorType type = fs::types::DescriptorType::unknown;
      if (::fstatat(::dirfd(dir_), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) type = type_of(st.st_mode);
      return R::ok(fs::types::DirectoryEntry{type, name});
    }
  }

 private:
  DIR* dir_;
};

class Descriptor final : public fs::types::Descriptor {
 public:
  Descriptor(std::shared_ptr<const Handles> handles, Fd fd, fs::types::DescriptorFlags flags)
      : handles_(std::move(handles)), fd_(std::move(fd)), flags_(flags) {}

  FsResult<Own<io::streams::InputStream>> read_via_stream(Caller& caller, fs::types::Filesize offset) override {
    if (!flags_.has(fs::types::DescriptorFlags::read)) return fail<Own<io::streams::InputStream>>(EBADF);
    return FsResult<Own<io::streams::InputStream>>::ok(handles_->streams->input_stream.make_own(
        caller.store(), std::make_unique<FileInput>(handles_, fd_.get(), offset)));
  }
  FsResult<Own<io::streams::OutputStream>> write_via_stream(Caller& caller, fs::types::Filesize offset) override {
    if (!flags_.has(fs::types::DescriptorFlags::write)) return fail<Own<io::streams::OutputStream>>(EBADF);
    return FsResult<Own<io::streams::OutputStream>>::ok(handles_->streams->output_stream.make_own(
        caller.store(), std::make_unique<FileOutput>(handles_, fd_.get(), offset)));
  }
  FsResult<Own<io::streams::OutputStream>> append_via_stream(Caller& caller) override {
    if (!flags_.has(fs::types::DescriptorFlags::write)) return fail<Own<io::streams::OutputStream>>(EBADF);
    // An appending stream needs O_APPEND on a descriptor of its own.
    Fd appending(::open(("/proc/self/fd/" + std::to_string(fd_.get())).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    if (!appending) return fail<Own<io::streams::OutputStream>>();
    return FsResult<Own<io::streams::OutputStream>>::ok(handles_->streams->output_stream.make_own(
        caller.store(), std::make_unique<FileOutput>(handles_, appending.get(), std::nullopt)));
  }
  FsResult<void> advise(Caller&, fs::types::Filesize offset, fs::types::Filesize length,
                        fs::types::Advice advice) override {
    static constexpr int kAdvice[] = {POSIX_FADV_NORMAL,   POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM,
                                      POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED,   POSIX_FADV_NOREUSE};
    const int e = ::posix_fadvise(fd_.get(), static_cast<off_t>(offset), static_cast<off_t>(length),
                                  kAdvice[static_cast<int>(advice)]);
    return e ? fail(e) : FsResult<void>::ok();
  }
  FsResult<void> sync_data(Caller&) override { return ::fdatasync(fd_.get()) ? fail() : FsResult<void>::ok(); }
  FsResult<void> sync(Caller&) override { return ::fsync(fd_.get()) ? fail() : FsResult<void>::ok(); }
  FsResult<fs::types::DescriptorFlags> get_flags(Caller&) override {
    return FsResult<fs::types::DescriptorFlags>::ok(flags_);
  }
  FsResult<fs::types::DescriptorType> get_type(Caller&) override {
    struct stat st {};
    if (::fstat(fd_.get(), &st)) return fail<fs::types::DescriptorType>();
    return FsResult<fs::types::DescriptorType>::ok(type_of(st.st_mode));
  }
  FsResult<void> set_size(Caller&, fs::types::Filesize size) override {
    if (!flags_.has(fs::types::DescriptorFlags::write)) return fail(EBADF);
    return ::ftruncate(fd_.get(), static_cast<off_t>(size)) ? fail() : FsResult<void>::ok();
  }
  FsResult<void> set_times(Caller&, fs::types::NewTimestamp access, fs::types::NewTimestamp modification) override {
    // A change like set-times-at's: the kernel lets an owner touch a file
    // opened only for reading, so the preopen's rights must refuse it.
    if (!mutable_()) return fail(EROFS);
    const timespec times[2] = {timestamp(access), timestamp(modification)};
    return ::futimens(fd_.get(), times) ? fail() : FsResult<void>::ok();
  }
  FsResult<std::tuple<std::vector<uint8_t>, bool>> read(Caller&, fs::types::Filesize length,
                                                        fs::types::Filesize offset) override {
    using R = FsResult<std::tuple<std::vector<uint8_t>, bool>>;
    if (!flags_.has(fs::types::DescriptorFlags::read)) return fail<std::tuple<std::vector<uint8_t>, bool>>(EBADF);
    std::vector<uint8_t> out(std::min<uint64_t>(length, 1 << 24));
    const ssize_t n = ::pread(fd_.get(), out.data(), out.size(), static_cast<off_t>(offset));
    if (n < 0) return fail<std::tuple<std::vector<uint8_t>, bool>>();
    out.resize(static_cast<size_t>(n));
    const bool end = n == 0 && length > 0;
    return R::ok(std::tuple<std::vector<uint8_t>, bool>{std::move(out), end});
  }
  FsResult<fs::types::Filesize> write(Caller&, std::vector<uint8_t> buffer, fs::types::Filesize offset) override {
    if (!flags_.has(fs::types::DescriptorFlags::write)) return fail<fs::types::Filesize>(EBADF);
    const ssize_t n = ::pwrite(fd_.get(), buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (n < 0) return fail<fs::types::Filesize>();
    return FsResult<fs::types::Filesize>::ok(static_cast<uint64_t>(n));
  }
  FsResult<Own<fs::types::DirectoryEntryStream>> read_directory(Caller& caller) override {
    Fd copy = open_beneath(fd_.get(), ".", O_RDONLY | O_DIRECTORY, 0, true);
    if (!copy) return fail<Own<fs::types::DirectoryEntryStream>>();
    DIR* dir = ::fdopendir(copy.get());
    if (!dir) return fail<Own<fs::types::DirectoryEntryStream>>();
    copy.release();  // the stream owns it now
    return FsResult<Own<fs::types::DirectoryEntryStream>>::ok(
        handles_->files->directory_entry_stream.make_own(caller.store(), std::make_unique<Entries>(dir)));
  }
  FsResult<void> create_directory_at(Caller&, std::string path) override {
    if (!mutable_()) return fail(EROFS);
    auto parent = parent_beneath(fd_.get(), path);
    if (!parent) return fail();
    return ::mkdirat(parent->dir.get(), parent->name.c_str(), 0777) ? fail() : FsResult<void>::ok();
  }
  FsResult<fs::types::DescriptorStat> stat(Caller&) override {
    struct stat st {};
    if (::fstat(fd_.get(), &st)) return fail<fs::types::DescriptorStat>();
    return FsResult<fs::types::DescriptorStat>::ok(stat_of(st));
  }
  FsResult<fs::types::DescriptorStat> stat_at(Caller&, fs::types::PathFlags path_flags, std::string path) override {
    struct stat st {};
    if (stat_path(path_flags, path, st)) return fail<fs::types::DescriptorStat>();
    return FsResult<fs::types::DescriptorStat>::ok(stat_of(st));
  }
  FsResult<void> set_times_at(Caller&, fs::types::PathFlags path_flags, std::string path,
                              fs::types::NewTimestamp access, fs::types::NewTimestamp modification) override {
    if (!mutable_()) return fail(EROFS);
    const timespec times[2] = {timestamp(access), timestamp(modification)};
    if (path_flags.has(fs::types::PathFlags::symlink_follow)) {
      Fd target = open_beneath(fd_.get(), path, O_PATH, 0, true);
      if (!target) return fail();
      return ::utimensat(target.get(), "", times, AT_EMPTY_PATH) ? fail() : FsResult<void>::ok();
    }
    auto parent = parent_beneath(fd_.get(), path);
    if (!parent) return fail();
    return ::utimensat(parent->dir.get(), parent->name.c_str(), times, AT_SYMLINK_NOFOLLOW) ? fail()
                                                                                             : FsResult<void>::ok();
  }
  FsResult<void> link_at(Caller&, fs::types::PathFlags old_flags, std::string old_path,
                         fs::types::Descriptor& new_descriptor, std::string new_path) override {
    auto& target = static_cast<Descriptor&>(new_descriptor);
    if (!mutable_() || !target.mutable_()) return fail(EROFS);
    if (old_flags.has(fs::types::PathFlags::symlink_follow)) return fail(EINVAL);
    auto from = parent_beneath(fd_.get(), old_path);
    auto to = from ? parent_beneath(target.fd_.get(), new_path) : std::nullopt;
    if (!from || !to) return fail();
    return ::linkat(from->dir.get(), from->name.c_str(), to->dir.get(), to->name.c_str(), 0) ? fail()
                                                                                           : FsResult<void>::ok();
  }
  FsResult<Own<fs::types::Descriptor>> open_at(Caller& caller, fs::types::PathFlags path_flags, std::string path,
                                               fs::types::OpenFlags open_flags,
                                               fs::types::DescriptorFlags flags) override {
    using F = fs::types::DescriptorFlags;
    // A descriptor has at most the rights of the one it was opened from.
    if ((flags.has(F::write) || flags.has(F::mutate_directory)) && !mutable_())
      return fail<Own<fs::types::Descriptor>>(EROFS);
    const bool write = flags.has(F::write);
    int os = flags.has(F::read) && write ? O_RDWR : write ? O_WRONLY : O_RDONLY;
    if (open_flags.has(fs::types::OpenFlags::create)) {
      if (!mutable_()) return fail<Own<fs::types::Descriptor>>(EROFS);
      os |= O_CREAT;
    }
    if (open_flags.has(fs::types::OpenFlags::directory)) os |= O_DIRECTORY;
    if (open_flags.has(fs::types::OpenFlags::exclusive)) os |= O_EXCL;
    if (open_flags.has(fs::types::OpenFlags::truncate)) {
      if (!write) return fail<Own<fs::types::Descriptor>>(EINVAL);
      os |= O_TRUNC;
    }
    Fd fd = open_beneath(fd_.get(), path, os, 0666, path_flags.has(fs::types::PathFlags::symlink_follow));
    if (!fd && errno == EISDIR && !write) fd = open_beneath(fd_.get(), path, O_RDONLY | O_DIRECTORY, 0, true);
    if (!fd) return fail<Own<fs::types::Descriptor>>();
    // Read and write rights as asked; the right to change a directory as the parent's.
    fs::types::DescriptorFlags rights = flags & (F::read | F::write);
    if (flags_.has(F::mutate_directory)) rights |= F::mutate_directory;
    return FsResult<Own<fs::types::Descriptor>>::ok(
        handles_->files->descriptor.make_own(caller.store(), std::make_unique<Descriptor>(handles_, std::move(fd), rights)));
  }
  FsResult<std::string> readlink_at(Caller&, std::string path) override {
    auto parent = parent_beneath(fd_.get(), path);
    if (!parent) return fail<std::string>();
    auto target = read_link_target(parent->dir.get(), parent->name);
    if (!target) return fail<std::string>();
    // An absolute target names a host path outside every preopen: not the
    // guest's to learn (wasmtime refuses it too).
    if (!target->empty() && target->front() == '/') return fail<std::string>(EPERM);
    return FsResult<std::string>::ok(std::move(*target));
  }
  FsResult<void> remove_directory_at(Caller&, std::string path) override { return unlink(path, AT_REMOVEDIR); }
  FsResult<void> unlink_file_at(Caller&, std::string path) override { return unlink(path, 0); }
  FsResult<void> rename_at(Caller&, std::string old_path, fs::types::Descriptor& new_descriptor,
                           std::string new_path) override {
    auto& target = static_cast<Descriptor&>(new_descriptor);
    if (!mutable_() || !target.mutable_()) return fail(EROFS);
    auto from = parent_beneath(fd_.get(), old_path);
    auto to = from ? parent_beneath(target.fd_.get(), new_path) : std::nullopt;
    if (!from || !to) return fail();
    return ::renameat(from->dir.get(), from->name.c_str(), to->dir.get(), to->name.c_str()) ? fail()
                                                                                          : FsResult<void>::ok();
  }
  FsResult<void> symlink_at(Caller&, std::string old_path, std::string new_path) override {
    if (!mutable_()) return fail(EROFS);
    // As wasmtime (cap-std) decides: an absolute target is refused, so no
    // program outside the sandbox that follows the link is led to a host
    // path. A relative target is stored as it is: one leading out is never
    // followed out here (every path is resolved beneath its preopen).
    if (!old_path.empty() && old_path.front() == '/') return fail(EPERM);
    if (has_nul(old_path)) return fail(EINVAL);
    auto parent = parent_beneath(fd_.get(), new_path);
    if (!parent) return fail();
    return ::symlinkat(old_path.c_str(), parent->dir.get(), parent->name.c_str()) ? fail() : FsResult<void>::ok();
  }
  bool is_same_object(Caller&, fs::types::Descriptor& other) override {
    struct stat a {}, b {};
    return ::fstat(fd_.get(), &a) == 0 && ::fstat(static_cast<Descriptor&>(other).fd_.get(), &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  }
  FsResult<fs::types::MetadataHashValue> metadata_hash(Caller&) override {
    struct stat st {};
    if (::fstat(fd_.get(), &st)) return fail<fs::types::MetadataHashValue>();
    return FsResult<fs::types::MetadataHashValue>::ok(hash_of(st));
  }
  FsResult<fs::types::MetadataHashValue> metadata_hash_at(Caller&, fs::types::PathFlags path_flags,
                                                          std::string path) override {
    struct stat st {};
    if (stat_path(path_flags, path, st)) return fail<fs::types::MetadataHashValue>();
    return FsResult<fs::types::MetadataHashValue>::ok(hash_of(st));
  }

 private:
  bool mutable_() const { return flags_.has(fs::types::DescriptorFlags::mutate_directory); }

  // 0, or -1 with errno.
  int stat_path(fs::types::PathFlags path_flags, const std::string& path, struct stat& st) const {
    if (path_flags.has(fs::types::PathFlags::symlink_follow)) {
      Fd target = open_beneath(fd_.get(), path, O_PATH, 0, true);
      if (!target) return -1;
      return ::fstat(target.get(), &st);
    }
    auto parent = parent_beneath(fd_.get(), path);
    if (!parent) return -1;
    return ::fstatat(parent->dir.get(), parent->name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  }

  FsResult<void> unlink(const std::string& path, int flags) {
    if (!mutable_()) return fail(EROFS);
    auto parent = parent_beneath(fd_.get(), path);
    if (!parent) return fail();
    if (parent->name == ".") return fail(flags ? EBUSY : EISDIR);
    return ::unlinkat(parent->dir.get(), parent->name.c_str(), flags) ? fail() : FsResult<void>::ok();
  }

  std::shared_ptr<const Handles> handles_;
  Fd fd_;
  fs::types::DescriptorFlags flags_;
};

}  // namespace

std::vector<std::tuple<Own<fs::types::Descriptor>, std::string>> open_preopens(
    Caller& caller, const std::vector<Preopen>& preopens, const std::shared_ptr<const Handles>& handles) {
  using F = fs::types::DescriptorFlags;
  std::vector<std::tuple<Own<fs::types::Descriptor>, std::string>> out;
  for (const Preopen& p : preopens) {
    Fd fd = open_preopen(p);
    if (!fd) throw_trap("wasi:filesystem: the preopened directory " + p.host_path + " is gone");
    const F rights = p.read_only ? F::read : F::read | F::write | F::mutate_directory;
    out.emplace_back(handles->files->descriptor.make_own(caller.store(),
                                                         std::make_unique<Descriptor>(handles, std::move(fd), rights)),
                     p.guest_path);
  }
  return out;
}

std::optional<fs::types::ErrorCode> filesystem_error_code(io::error::Error& error) {
  if (auto* os = dynamic_cast<OsError*>(&error)) return error_code(os->code());
  return std::nullopt;
}

}  // namespace cmhost::wasi::detail
