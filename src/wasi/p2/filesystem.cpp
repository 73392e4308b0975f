// wasi:filesystem 0.2: descriptors over the core's open files
// (src/wasi/core/files.hpp: every path confined beneath its directory,
// final names acted on through their parent, the rights a guest holds);
// what is here is the 0.2 interface over it, its streams, and errnos
// mapped to its error codes.
#include "filesystem.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "wasi/core/binding_shapes.hpp"
#include "wasi/core/files.hpp"

namespace cmhost::wasi::detail {

namespace {

using abi::typed::Own;
using abi::typed::Result;
using core::Fd;
using core::OpenFile;
using fs::types::ErrorCode;
template <class T>
using FsResult = Result<T, ErrorCode>;

// errno → error-code. What a read-only preopen refuses is read-only, as
// the WIT says; EXDEV (a path leaving its directory, RESOLVE_BENEATH) and
// EPERM, and any errno not here, are not-permitted.
constexpr std::pair<int, ErrorCode> kErrorCodes[] = {
    {core::kRefused, ErrorCode::read_only},
    {EACCES, ErrorCode::access},
    {EAGAIN, ErrorCode::would_block},
    {EALREADY, ErrorCode::already},
    {EBADF, ErrorCode::bad_descriptor},
    {EBUSY, ErrorCode::busy},
    {EDEADLK, ErrorCode::deadlock},
    {EDQUOT, ErrorCode::quota},
    {EEXIST, ErrorCode::exist},
    {EFBIG, ErrorCode::file_too_large},
    {EILSEQ, ErrorCode::illegal_byte_sequence},
    {EINPROGRESS, ErrorCode::in_progress},
    {EINTR, ErrorCode::interrupted},
    {EINVAL, ErrorCode::invalid},
    {EIO, ErrorCode::io},
    {EISDIR, ErrorCode::is_directory},
    {ELOOP, ErrorCode::loop},
    {EMLINK, ErrorCode::too_many_links},
    {EMSGSIZE, ErrorCode::message_size},
    {ENAMETOOLONG, ErrorCode::name_too_long},
    {ENODEV, ErrorCode::no_device},
    {ENOENT, ErrorCode::no_entry},
    {ENOLCK, ErrorCode::no_lock},
    {ENOMEM, ErrorCode::insufficient_memory},
    {ENOSPC, ErrorCode::insufficient_space},
    {ENOTDIR, ErrorCode::not_directory},
    {ENOTEMPTY, ErrorCode::not_empty},
    {ENOTRECOVERABLE, ErrorCode::not_recoverable},
    {EOPNOTSUPP, ErrorCode::unsupported},
    {ENOTTY, ErrorCode::no_tty},
    {ENXIO, ErrorCode::no_such_device},
    {EOVERFLOW, ErrorCode::overflow},
    {EPIPE, ErrorCode::pipe},
    {EROFS, ErrorCode::read_only},
    {ESPIPE, ErrorCode::invalid_seek},
    {ETXTBSY, ErrorCode::text_file_busy},
};

ErrorCode error_code(int e) {
  for (const auto& [number, code] : kErrorCodes)
    if (number == e) return code;
  return ErrorCode::not_permitted;
}

template <class T = void>
FsResult<T> fail(int e = errno) {
  return FsResult<T>::err(error_code(e));
}

FsResult<void> status(int e) { return e ? fail(e) : FsResult<void>::ok(); }

fs::types::DescriptorType descriptor_type(core::FileType type) {
  using T = fs::types::DescriptorType;
  switch (type) {
    case core::FileType::unknown: return T::unknown;
    case core::FileType::block_device: return T::block_device;
    case core::FileType::character_device: return T::character_device;
    case core::FileType::directory: return T::directory;
    case core::FileType::fifo: return T::fifo;
    case core::FileType::symbolic_link: return T::symbolic_link;
    case core::FileType::regular_file: return T::regular_file;
    case core::FileType::socket: return T::socket;
  }
  return T::unknown;
}

fs::types::DescriptorType type_of(mode_t mode) { return descriptor_type(core::file_type(mode)); }

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

core::NewTime new_time(const fs::types::NewTimestamp& t) {
  using Kind = core::NewTime::Kind;
  if (std::holds_alternative<fs::types::new_timestamp::NoChange>(t)) return {};
  if (std::holds_alternative<fs::types::new_timestamp::Now>(t)) return {.kind = Kind::now};
  const auto& at = std::get<fs::types::new_timestamp::Timestamp>(t).value;
  return {.kind = Kind::at, .seconds = static_cast<int64_t>(at.seconds), .nanoseconds = at.nanoseconds};
}

fs::types::DescriptorFlags flags_of(const core::Rights& rights) {
  using F = fs::types::DescriptorFlags;
  F flags{};
  if (rights.read) flags |= F::read;
  if (rights.write) flags |= F::write;
  if (rights.mutate) flags |= F::mutate_directory;
  return flags;
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
    const ssize_t n = core::read_at(fd_.get(), out.data(), out.size(), offset_);
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
    const int e = core::write_fully(fd_.get(), data, n, offset_ ? &*offset_ : nullptr);
    return e ? StreamResult::err(failed(caller, *handles_, e)) : StreamResult::ok();
  }

  std::shared_ptr<const Handles> handles_;
  Fd fd_;
  std::optional<uint64_t> offset_;  // none: appending
};

class Entries final : public fs::types::DirectoryEntryStream {
 public:
  explicit Entries(std::unique_ptr<core::DirectoryListing> listing) : listing_(std::move(listing)) {}
  FsResult<std::optional<fs::types::DirectoryEntry>> read_directory_entry(Caller&) override {
    using R = FsResult<std::optional<fs::types::DirectoryEntry>>;
    auto next = listing_->next();
    if (!next) return fail<std::optional<fs::types::DirectoryEntry>>(next.error());
    if (!*next) return R::ok(std::nullopt);
    // An entry lstat could not look at is `unknown`.
    core::DirectoryListing::Entry& entry = **next;
    return R::ok(fs::types::DirectoryEntry{descriptor_type(entry.type), std::move(entry.name)});
  }

 private:
  std::unique_ptr<core::DirectoryListing> listing_;
};

class Descriptor final : public fs::types::Descriptor {
 public:
  Descriptor(std::shared_ptr<const Handles> handles, OpenFile file)
      : handles_(std::move(handles)), file_(std::move(file)) {}

  FsResult<Own<io::streams::InputStream>> read_via_stream(Caller& caller, fs::types::Filesize offset) override {
    if (const int e = core::may_read(file_)) return fail<Own<io::streams::InputStream>>(e);
    return FsResult<Own<io::streams::InputStream>>::ok(handles_->streams->input_stream.make_own(
        caller.store(), std::make_unique<FileInput>(handles_, fd(), offset)));
  }
  FsResult<Own<io::streams::OutputStream>> write_via_stream(Caller& caller, fs::types::Filesize offset) override {
    if (const int e = core::may_write(file_)) return fail<Own<io::streams::OutputStream>>(e);
    return FsResult<Own<io::streams::OutputStream>>::ok(handles_->streams->output_stream.make_own(
        caller.store(), std::make_unique<FileOutput>(handles_, fd(), offset)));
  }
  FsResult<Own<io::streams::OutputStream>> append_via_stream(Caller& caller) override {
    if (const int e = core::may_write(file_)) return fail<Own<io::streams::OutputStream>>(e);
    // An appending stream has a descriptor of its own, opened for writing.
    Fd appending(::open(("/proc/self/fd/" + std::to_string(fd())).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    if (!appending) return fail<Own<io::streams::OutputStream>>();
    return FsResult<Own<io::streams::OutputStream>>::ok(handles_->streams->output_stream.make_own(
        caller.store(), std::make_unique<FileOutput>(handles_, appending.get(), std::nullopt)));
  }
  FsResult<void> advise(Caller&, fs::types::Filesize offset, fs::types::Filesize length,
                        fs::types::Advice advice) override {
    // The WIT lists the advice in the core's order.
    return status(core::advise(file_, offset, length, static_cast<core::Advice>(advice)));
  }
  FsResult<void> sync_data(Caller&) override { return status(core::sync_data(file_)); }
  FsResult<void> sync(Caller&) override { return status(core::sync(file_)); }
  FsResult<fs::types::DescriptorFlags> get_flags(Caller&) override {
    return FsResult<fs::types::DescriptorFlags>::ok(flags_of(file_.rights));
  }
  FsResult<fs::types::DescriptorType> get_type(Caller&) override {
    auto st = core::stat_file(file_);
    if (!st) return fail<fs::types::DescriptorType>(st.error());
    return FsResult<fs::types::DescriptorType>::ok(type_of(st->st_mode));
  }
  FsResult<void> set_size(Caller&, fs::types::Filesize size) override { return status(core::set_size(file_, size)); }
  FsResult<void> set_times(Caller&, fs::types::NewTimestamp access, fs::types::NewTimestamp modification) override {
    return status(core::set_times(file_, new_time(access), new_time(modification)));
  }
  FsResult<std::tuple<std::vector<uint8_t>, bool>> read(Caller&, fs::types::Filesize length,
                                                        fs::types::Filesize offset) override {
    using R = FsResult<std::tuple<std::vector<uint8_t>, bool>>;
    if (const int e = core::may_read(file_)) return fail<std::tuple<std::vector<uint8_t>, bool>>(e);
    std::vector<uint8_t> out(std::min<uint64_t>(length, 1 << 24));
    const ssize_t n = core::read_at(fd(), out.data(), out.size(), offset);
    if (n < 0) return fail<std::tuple<std::vector<uint8_t>, bool>>();
    out.resize(static_cast<size_t>(n));
    const bool end = n == 0 && length > 0;
    return R::ok(std::tuple<std::vector<uint8_t>, bool>{std::move(out), end});
  }
  FsResult<fs::types::Filesize> write(Caller&, std::vector<uint8_t> buffer, fs::types::Filesize offset) override {
    if (const int e = core::may_write(file_)) return fail<fs::types::Filesize>(e);
    const ssize_t n = core::write_at(fd(), buffer.data(), buffer.size(), offset);
    if (n < 0) return fail<fs::types::Filesize>();
    return FsResult<fs::types::Filesize>::ok(static_cast<uint64_t>(n));
  }
  FsResult<Own<fs::types::DirectoryEntryStream>> read_directory(Caller& caller) override {
    auto listing = core::DirectoryListing::open(file_);
    if (!listing) return fail<Own<fs::types::DirectoryEntryStream>>(listing.error());
    return FsResult<Own<fs::types::DirectoryEntryStream>>::ok(handles_->files->directory_entry_stream.make_own(
        caller.store(), std::make_unique<Entries>(std::move(*listing))));
  }
  FsResult<void> create_directory_at(Caller&, std::string path) override {
    return status(core::create_directory_at(file_, path));
  }
  FsResult<fs::types::DescriptorStat> stat(Caller&) override {
    auto st = core::stat_file(file_);
    if (!st) return fail<fs::types::DescriptorStat>(st.error());
    return FsResult<fs::types::DescriptorStat>::ok(stat_of(*st));
  }
  FsResult<fs::types::DescriptorStat> stat_at(Caller&, fs::types::PathFlags path_flags, std::string path) override {
    auto st = core::stat_at(file_, path, core::follows(path_flags));
    if (!st) return fail<fs::types::DescriptorStat>(st.error());
    return FsResult<fs::types::DescriptorStat>::ok(stat_of(*st));
  }
  FsResult<void> set_times_at(Caller&, fs::types::PathFlags path_flags, std::string path,
                              fs::types::NewTimestamp access, fs::types::NewTimestamp modification) override {
    return status(core::set_times_at(file_, path, core::follows(path_flags), new_time(access), new_time(modification)));
  }
  FsResult<void> link_at(Caller&, fs::types::PathFlags old_flags, std::string old_path,
                         fs::types::Descriptor& new_descriptor, std::string new_path) override {
    return status(core::link_at(file_, core::follows(old_flags), old_path, other(new_descriptor).file_, new_path));
  }
  FsResult<Own<fs::types::Descriptor>> open_at(Caller& caller, fs::types::PathFlags path_flags, std::string path,
                                               fs::types::OpenFlags open_flags,
                                               fs::types::DescriptorFlags flags) override {
    const core::OpenRequest request = core::open_request(path_flags, open_flags, flags);
    auto opened = core::open_at(file_, path, request);
    if (!opened) return fail<Own<fs::types::Descriptor>>(opened.error());
    return FsResult<Own<fs::types::Descriptor>>::ok(handles_->files->descriptor.make_own(
        caller.store(), std::make_unique<Descriptor>(handles_, std::move(*opened))));
  }
  FsResult<std::string> readlink_at(Caller&, std::string path) override {
    auto target = core::readlink_at(file_, path);
    if (!target) return fail<std::string>(target.error());
    return FsResult<std::string>::ok(std::move(*target));
  }
  FsResult<void> remove_directory_at(Caller&, std::string path) override {
    return status(core::remove_directory_at(file_, path));
  }
  FsResult<void> unlink_file_at(Caller&, std::string path) override {
    return status(core::unlink_file_at(file_, path));
  }
  FsResult<void> rename_at(Caller&, std::string old_path, fs::types::Descriptor& new_descriptor,
                           std::string new_path) override {
    return status(core::rename_at(file_, old_path, other(new_descriptor).file_, new_path));
  }
  FsResult<void> symlink_at(Caller&, std::string old_path, std::string new_path) override {
    return status(core::symlink_at(file_, old_path, new_path));
  }
  bool is_same_object(Caller&, fs::types::Descriptor& other_descriptor) override {
    const auto a = core::stat_file(file_);
    if (!a) return false;
    const auto b = core::stat_file(other(other_descriptor).file_);
    return b && a->st_dev == b->st_dev && a->st_ino == b->st_ino;
  }
  FsResult<fs::types::MetadataHashValue> metadata_hash(Caller&) override {
    auto st = core::stat_file(file_);
    if (!st) return fail<fs::types::MetadataHashValue>(st.error());
    return FsResult<fs::types::MetadataHashValue>::ok(hash_of(*st));
  }
  FsResult<fs::types::MetadataHashValue> metadata_hash_at(Caller&, fs::types::PathFlags path_flags,
                                                          std::string path) override {
    auto st = core::stat_at(file_, path, core::follows(path_flags));
    if (!st) return fail<fs::types::MetadataHashValue>(st.error());
    return FsResult<fs::types::MetadataHashValue>::ok(hash_of(*st));
  }

 private:
  int fd() const { return file_.fd.get(); }
  // Every descriptor of the resource is one of these.
  static Descriptor& other(fs::types::Descriptor& descriptor) { return static_cast<Descriptor&>(descriptor); }

  std::shared_ptr<const Handles> handles_;
  OpenFile file_;
};

}  // namespace

std::vector<std::tuple<Own<fs::types::Descriptor>, std::string>> open_preopens(
    Caller& caller, const std::vector<Preopen>& preopens, const std::shared_ptr<const Handles>& handles) {
  std::vector<std::tuple<Own<fs::types::Descriptor>, std::string>> out;
  for (const Preopen& p : preopens) {
    auto dir = core::open_preopen_file(p);
    if (!dir) throw_trap("wasi:filesystem: the preopened directory " + p.host_path + " is gone");
    out.emplace_back(handles->files->descriptor.make_own(caller.store(),
                                                         std::make_unique<Descriptor>(handles, std::move(*dir))),
                     p.guest_path);
  }
  return out;
}

std::optional<fs::types::ErrorCode> filesystem_error_code(io::error::Error& error) {
  if (auto* os = dynamic_cast<OsError*>(&error)) return error_code(os->code());
  return std::nullopt;
}

}  // namespace cmhost::wasi::detail
