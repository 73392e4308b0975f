// 0.3's filesystem types from the core's (filesystem_support.hpp).
#include "filesystem_support.hpp"

#include <cerrno>
#include <cstring>
#include <string>

namespace cmhost::wasi::p3::filesystem {

namespace {

namespace codes = fs::error_code;

// errno → error-code, as 0.2's table but for what 0.3 changed: what a
// read-only preopen refuses is not-permitted (the upstream fixtures
// assert it, p3_file_truncation_readonly among them), 0.3 has no
// would-block, and an errno not here is `other` with its description.
const std::pair<int, fs::ErrorCode> kErrorCodes[] = {
    {core::kRefused, codes::NotPermitted{}},
    {EACCES, codes::Access{}},
    {EALREADY, codes::Already{}},
    {EBADF, codes::BadDescriptor{}},
    {EBUSY, codes::Busy{}},
    {EDEADLK, codes::Deadlock{}},
    {EDQUOT, codes::Quota{}},
    {EEXIST, codes::Exist{}},
    {EFBIG, codes::FileTooLarge{}},
    {EILSEQ, codes::IllegalByteSequence{}},
    {EINPROGRESS, codes::InProgress{}},
    {EINTR, codes::Interrupted{}},
    {EINVAL, codes::Invalid{}},
    {EIO, codes::Io{}},
    {EISDIR, codes::IsDirectory{}},
    {ELOOP, codes::Loop{}},
    {EMLINK, codes::TooManyLinks{}},
    {EMSGSIZE, codes::MessageSize{}},
    {ENAMETOOLONG, codes::NameTooLong{}},
    {ENODEV, codes::NoDevice{}},
    {ENOENT, codes::NoEntry{}},
    {ENOLCK, codes::NoLock{}},
    {ENOMEM, codes::InsufficientMemory{}},
    {ENOSPC, codes::InsufficientSpace{}},
    {ENOTDIR, codes::NotDirectory{}},
    {ENOTEMPTY, codes::NotEmpty{}},
    {ENOTRECOVERABLE, codes::NotRecoverable{}},
    {EOPNOTSUPP, codes::Unsupported{}},
    {ENOTTY, codes::NoTty{}},
    {ENXIO, codes::NoSuchDevice{}},
    {EOVERFLOW, codes::Overflow{}},
    {EPERM, codes::NotPermitted{}},
    {EPIPE, codes::Pipe{}},
    {EROFS, codes::ReadOnly{}},
    {ESPIPE, codes::InvalidSeek{}},
    {ETXTBSY, codes::TextFileBusy{}},
    // A path leaving its directory (RESOLVE_BENEATH), as 0.2 reports it;
    // so the code never says cross-device.
    {EXDEV, codes::NotPermitted{}},
};

fs::Instant instant(const timespec& t) {
  // timespec's form is the WIT's: nanoseconds always count forwards, so
  // one nanosecond before the epoch is {-1, 999999999}.
  return {static_cast<int64_t>(t.tv_sec), static_cast<uint32_t>(t.tv_nsec)};
}

}  // namespace

fs::ErrorCode error_code(int error) {
  for (const auto& [number, code] : kErrorCodes)
    if (number == error) return code;
  return codes::Other(std::optional<std::string>(std::strerror(error)));
}

FsResult<void> status(int error) { return error ? failure<void>(error) : FsResult<void>::ok(); }

fs::DescriptorType descriptor_type(core::FileType type) {
  namespace types = fs::descriptor_type;
  switch (type) {
    case core::FileType::block_device: return types::BlockDevice{};
    case core::FileType::character_device: return types::CharacterDevice{};
    case core::FileType::directory: return types::Directory{};
    case core::FileType::fifo: return types::Fifo{};
    case core::FileType::symbolic_link: return types::SymbolicLink{};
    case core::FileType::regular_file: return types::RegularFile{};
    case core::FileType::socket: return types::Socket{};
    case core::FileType::unknown: break;
  }
  return types::Other(std::nullopt);
}

fs::DescriptorStat descriptor_stat(const struct stat& st) {
  return {descriptor_type(core::file_type(st.st_mode)),
          static_cast<fs::LinkCount>(st.st_nlink),
          static_cast<fs::Filesize>(st.st_size),
          instant(st.st_atim),
          instant(st.st_mtim),
          instant(st.st_ctim)};
}

fs::MetadataHashValue metadata_hash(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev)};
}

core::NewTime new_time(const fs::NewTimestamp& timestamp) {
  using Kind = core::NewTime::Kind;
  if (std::holds_alternative<fs::new_timestamp::NoChange>(timestamp)) return {};
  if (std::holds_alternative<fs::new_timestamp::Now>(timestamp)) return {.kind = Kind::now};
  const fs::Instant& at = std::get<fs::new_timestamp::Timestamp>(timestamp).value;
  return {.kind = Kind::at, .seconds = at.seconds, .nanoseconds = at.nanoseconds};
}

}  // namespace cmhost::wasi::p3::filesystem
