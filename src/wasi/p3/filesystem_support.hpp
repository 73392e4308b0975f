// What the wasi:filesystem@0.3.0 host's files share (filesystem.cpp,
// filesystem_streams.cpp): 0.3's types made from the core's (error codes
// from errnos, descriptor types and stats, timestamps), and blocking work
// run on the store's pool.
#pragma once

#include <sys/stat.h>

#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "cmhost/cmhost.hpp"
#include "wasi/core/files.hpp"
#include "wasi/p3/bindings.hpp"

namespace cmhost::wasi::p3::filesystem {

namespace fs = bindings::p3::wasi::filesystem::types;
template <class T>
using FsResult = abi::typed::Result<T, fs::ErrorCode>;
// A guest's file or directory, shared by its descriptor and the streams
// and blocking work that use it (its host descriptor stays open while any
// of them does).
using SharedFile = std::shared_ptr<const core::OpenFile>;

// An errno (or core::kRefused) as 0.3's error-code.
fs::ErrorCode error_code(int error);
template <class T>
FsResult<T> failure(int error) {
  return FsResult<T>::err(error_code(error));
}
// ok for 0, else the error.
FsResult<void> status(int error);

fs::DescriptorType descriptor_type(core::FileType type);
fs::DescriptorStat descriptor_stat(const struct stat& st);
fs::MetadataHashValue metadata_hash(const struct stat& st);
core::NewTime new_time(const fs::NewTimestamp& timestamp);

// Runs `work` (blocking calls on the host's files; nothing of the store,
// and nothing that must be destroyed on the store's thread) on the store's
// pool, then `then` on the store's thread with what it returned, or with
// none when it threw (it allocates, nothing else throws).
template <class Work, class Then>
void on_pool(Store& store, Work work, Then then) {
  using R = std::invoke_result_t<Work&>;
  auto result = std::make_shared<std::optional<R>>();
  store.run_blocking([result, work = std::move(work)]() mutable { result->emplace(work()); },
                     [result, then = std::move(then)](std::exception_ptr failed) mutable {
                       if (failed) result->reset();
                       then(std::move(*result));
                     });
}

}  // namespace cmhost::wasi::p3::filesystem
