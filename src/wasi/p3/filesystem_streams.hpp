// The streams of wasi:filesystem@0.3.0's descriptors (filesystem_streams.cpp):
// a file read into a stream<u8>, a stream<u8> written or appended to a
// file, a directory listed into a stream<directory-entry>, each with the
// future saying how it ended. The blocking calls run on the store's pool
// a chunk at a time; the guest's buffers are only touched from the loop.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include "cmhost/streams.hpp"
#include "filesystem_support.hpp"

namespace cmhost::wasi::p3::filesystem {

using Verdict = abi::typed::Future<FsResult<void>>;

// read-via-stream: the file from `offset` on. The future resolves when the
// stream ends: ok at the end of the file or when the guest drops the
// stream, err when a read fails; a directory is err(is-directory) at once.
std::tuple<abi::typed::Stream<uint8_t>, Verdict> read_via_stream(Store& store, SharedFile file, uint64_t offset);

// write-via-stream (at `offset`) and append-via-stream (none): the guest's
// bytes written as it sends them. The future resolves ok once the guest
// ends the stream and every byte is written, err when a write fails; a
// descriptor that may not write closes the stream at once, nothing taken.
Verdict write_via_stream(Store& store, SharedFile file, StreamReader<uint8_t> data, std::optional<uint64_t> offset);

// read-directory: the entries from the directory's start, without `.` and
// `..`. The future resolves when the stream ends, as read-via-stream's.
std::tuple<abi::typed::Stream<fs::DirectoryEntry>, Verdict> read_directory(Store& store, SharedFile dir);

}  // namespace cmhost::wasi::p3::filesystem
