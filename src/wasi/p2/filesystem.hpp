// wasi:filesystem on the host's file system, confined to preopened
// directories (src/wasi/p2/filesystem.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cmhost/wasi.hpp"
#include "common.hpp"

namespace cmhost::wasi::detail {

namespace fs = ::cmhost::wasi::bindings::wasi::filesystem;

// The preopens as descriptors for the guest, opened afresh for each call of
// get-directories. A host directory that cannot be opened is an Error (Usage).
std::vector<std::tuple<abi::typed::Own<fs::types::Descriptor>, std::string>> open_preopens(
    Caller& caller, const std::vector<Preopen>& preopens, const std::shared_ptr<const Handles>& handles);

// Checks that every preopen's host directory can be opened (at link time,
// so a wrong --dir is reported before the guest runs).
void check_preopens(const std::vector<Preopen>& preopens);

// The longest symlink target readlink-at reads, in bytes, buffer included:
// what one call may make the host allocate. Linux makes no targets of
// PATH_MAX (4 096) bytes or more; another file system's longer ones fail.
inline constexpr size_t kLinkTargetLimit = 64 * 1024;

// The whole target of the symlink `name` in the directory `dir`, read into
// a buffer of `first_size` bytes doubled until readlinkat leaves room to
// spare (it truncates silently), of at most `limit` bytes. None with errno
// set on failure: ENAMETOOLONG when the target fills `limit` bytes.
std::optional<std::string> read_link_target(int dir, const std::string& name, size_t first_size = 256,
                                            size_t limit = kLinkTargetLimit);

// The filesystem error behind a stream error, if it came from a file.
std::optional<fs::types::ErrorCode> filesystem_error_code(io::error::Error& error);

}  // namespace cmhost::wasi::detail
