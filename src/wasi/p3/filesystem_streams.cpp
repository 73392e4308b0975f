// wasi:filesystem@0.3.0's streams (filesystem_streams.hpp). Each stream
// is one object that alternates between the store's pool and its loop: a
// blocking call (pread, pwrite, readdir) on the pool with a buffer of the
// object's, then a copy in place between that buffer and the guest's
// pending read or write from the loop, then the next call. So no thread
// waits per stream, the pool never sees the store or guest memory, and a
// stream holds at most one chunk. The future beside the stream is written
// once, when the stream ends.
//
// Chunks are 64 KiB, for reads and writes alike: one pool round trip per
// chunk costs far less than the chunk's I/O, and the host holds no more
// per stream. (wasmtime writes at most 8 KiB per step; any bound makes a
// guest's large write come back short, which the upstream fixture
// p3_file_write_chunked requires of it.)
#include "filesystem_streams.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/unicode.hpp"

namespace cmhost::wasi::p3::filesystem {

namespace {

using abi::typed::Stream;

constexpr size_t kChunk = 64 * 1024;
constexpr size_t kEntriesPerBatch = 256;

// The future<result<_, error-code>> beside a stream: written once, when
// the stream ends, keeping the stream's object alive until the guest
// reads it or drops the future.
class Ending {
 public:
  explicit Ending(Store& store) : writer_(store) {}
  Verdict handle() const { return writer_.readable_handle(); }
  void settle(Store& store, int error, std::shared_ptr<const void> owner) {
    if (settled_) return;
    settled_ = true;
    writer_.start_write(store, status(error), [owner = std::move(owner)](CopyOutcome) {});
  }

 private:
  FutureWriter<FsResult<void>> writer_;
  bool settled_ = false;
};

// read-via-stream: pread a chunk on the pool, write it into the guest's
// reads, and again until the end of the file.
class FileRead final : public std::enable_shared_from_this<FileRead> {
 public:
  FileRead(Store& store, SharedFile file, uint64_t offset)
      : store_(store), file_(std::move(file)), offset_(offset), data_(store), ending_(store) {}
  std::tuple<Stream<uint8_t>, Verdict> ends() const { return {data_.readable_handle(), ending_.handle()}; }

  void start() {
    // A directory has no bytes: said at once, as upstream says it since
    // its commit 5f060a2a4e (the fixtures' baseline trapped).
    if (file_->directory) return finish(EISDIR);
    if (const int refused = core::may_read(*file_)) return finish(refused);
    read_chunk();
  }

 private:
  void read_chunk() {
    on_pool(
        store_,
        [file = file_, chunk = chunk_, offset = offset_] {
          chunk->resize(kChunk);
          const ssize_t got = core::read_at(file->fd.get(), chunk->data(), chunk->size(), offset);
          const int error = got < 0 ? errno : 0;
          chunk->resize(got > 0 ? static_cast<size_t>(got) : 0);
          return error;
        },
        [self = shared_from_this()](std::optional<int> error) { self->deliver(error.value_or(ENOMEM)); });
  }

  void deliver(int error) {
    if (error) return finish(error);
    // The end of the file, or the guest let go of the stream meanwhile.
    if (chunk_->empty() || data_.ended()) return finish(0);
    sent_ = 0;
    data_.start_in_place(
        store_, chunk_->size(),
        [self = shared_from_this()](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
          std::memcpy(guest_bytes(cx, ptr, n), self->chunk_->data() + self->sent_, n);
          self->sent_ += n;
          return n;
        },
        [self = shared_from_this()](CopyOutcome outcome) {
          // A guest dropping its end early is no failure: the future says ok.
          if (outcome.status == CopyStatus::Dropped) return self->finish(0);
          self->offset_ += outcome.count;
          self->read_chunk();
        });
  }

  void finish(int error) {
    if (!data_.ended()) data_.close();  // the guest's read sees the stream end
    ending_.settle(store_, error, shared_from_this());
  }

  Store& store_;
  SharedFile file_;
  uint64_t offset_;
  StreamWriter<uint8_t> data_;
  Ending ending_;
  std::shared_ptr<std::vector<uint8_t>> chunk_ = std::make_shared<std::vector<uint8_t>>();
  uint64_t sent_ = 0;  // of the chunk, into the guest's reads
};

// write-via-stream and append-via-stream: take a chunk of the guest's
// write, pwrite it whole on the pool, and again until the guest ends the
// stream. The guest's write completes with what a step took, so a write
// longer than a chunk comes back short. A chunk is taken before it is
// written: when writing it fails, the guest was told it went, and learns
// otherwise from the future.
class FileWrite final : public std::enable_shared_from_this<FileWrite> {
 public:
  FileWrite(Store& store, SharedFile file, StreamReader<uint8_t> data, std::optional<uint64_t> offset)
      : store_(store), file_(std::move(file)), offset_(offset), data_(std::move(data)), ending_(store) {}
  Verdict future() const { return ending_.handle(); }

  void start() {
    // Refused before a byte is taken: the guest's write sees the stream
    // gone with nothing written. A directory's descriptor may hold the
    // right to write (a read-write preopen's), but has no bytes.
    const int refused = file_->directory ? EBADF : core::may_write(*file_);
    if (refused) return finish(refused);
    take_chunk();
  }

 private:
  void take_chunk() {
    if (data_.ended()) return finish(0);
    data_.start_in_place(
        store_, kChunk,
        [self = shared_from_this()](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
          const uint8_t* bytes = guest_bytes(cx, ptr, n);
          self->chunk_->assign(bytes, bytes + n);
          return n;
        },
        [self = shared_from_this()](CopyOutcome outcome) {
          if (outcome.count > 0) return self->write_chunk();
          // The guest ended the stream: everything it sent is written.
          if (outcome.status == CopyStatus::Dropped) return self->finish(0);
          self->take_chunk();
        });
  }

  void write_chunk() {
    on_pool(
        store_,
        [file = file_, chunk = chunk_, offset = offset_]() mutable {
          return core::write_fully(file->fd.get(), chunk->data(), chunk->size(), offset ? &*offset : nullptr);
        },
        [self = shared_from_this()](std::optional<int> error) {
          if (const int e = error.value_or(ENOMEM)) return self->finish(e);
          if (self->offset_) *self->offset_ += self->chunk_->size();
          self->take_chunk();
        });
  }

  void finish(int error) {
    if (!data_.ended()) data_.close();  // the guest's next write sees the stream gone
    ending_.settle(store_, error, shared_from_this());
  }

  Store& store_;
  SharedFile file_;
  std::optional<uint64_t> offset_;  // none: appending
  StreamReader<uint8_t> data_;
  Ending ending_;
  std::shared_ptr<std::vector<uint8_t>> chunk_ = std::make_shared<std::vector<uint8_t>>();
};

// read-directory: a batch of entries read on the pool, written into the
// guest's reads, and again until the listing ends.
class DirectoryRead final : public std::enable_shared_from_this<DirectoryRead> {
 public:
  DirectoryRead(Store& store, SharedFile dir) : store_(store), dir_(std::move(dir)), entries_(store), ending_(store) {}
  std::tuple<Stream<fs::DirectoryEntry>, Verdict> ends() const {
    return {entries_.readable_handle(), ending_.handle()};
  }

  void start() {
    if (!dir_->directory) return finish(ENOTDIR);
    read_batch();
  }

 private:
  using Listing = std::unique_ptr<core::DirectoryListing>;
  struct Batch {
    std::vector<core::DirectoryListing::Entry> entries;
    int error = 0;
    bool end = false;
  };

  // Up to a batch of entries, opening the listing first (on the pool: it
  // opens the directory again). What 0.3 cannot say ends the listing with
  // an error after the entries before it: an entry lstat cannot look at
  // (0.3 has no `unknown` type), a name that is not UTF-8 (no WIT string).
  static Batch next_batch(const core::OpenFile& dir, Listing& listing) {
    Batch batch;
    if (!listing) {
      auto opened = core::DirectoryListing::open(dir);
      if (!opened) {
        batch.error = opened.error();
        return batch;
      }
      listing = std::move(*opened);
    }
    while (batch.entries.size() < kEntriesPerBatch) {
      auto next = listing->next();
      if (!next || !*next) {
        batch.error = next ? 0 : next.error();
        batch.end = true;
        break;
      }
      core::DirectoryListing::Entry& entry = **next;
      const auto* name = reinterpret_cast<const uint8_t*>(entry.name.data());
      batch.error = entry.type_error ? entry.type_error : support::is_valid_utf8(name, entry.name.size()) ? 0 : EILSEQ;
      if (batch.error) break;
      batch.entries.push_back(std::move(entry));
    }
    return batch;
  }

  void read_batch() {
    on_pool(
        store_, [dir = dir_, listing = listing_] { return next_batch(*dir, *listing); },
        [self = shared_from_this()](std::optional<Batch> batch) {
          if (!batch) return self->finish(ENOMEM);
          self->deliver(std::move(*batch));
        });
  }

  void deliver(Batch batch) {
    if (entries_.ended()) return finish(0);  // the guest let go of the stream meanwhile
    const bool last = batch.error || batch.end;
    if (batch.entries.empty()) return finish(batch.error);
    std::vector<fs::DirectoryEntry> entries;
    entries.reserve(batch.entries.size());
    for (core::DirectoryListing::Entry& entry : batch.entries)
      entries.push_back({descriptor_type(entry.type), std::move(entry.name)});
    entries_.start_write(store_, std::move(entries),
                         [self = shared_from_this(), error = batch.error, last](CopyOutcome outcome) {
                           if (outcome.status == CopyStatus::Dropped) return self->finish(0);
                           if (last) return self->finish(error);
                           self->read_batch();
                         });
  }

  void finish(int error) {
    if (!entries_.ended()) entries_.close();
    ending_.settle(store_, error, shared_from_this());
  }

  Store& store_;
  SharedFile dir_;
  StreamWriter<fs::DirectoryEntry> entries_;
  Ending ending_;
  // Used by one batch at a time, on the pool; closed by whichever holder goes last.
  std::shared_ptr<Listing> listing_ = std::make_shared<Listing>();
};

}  // namespace

std::tuple<Stream<uint8_t>, Verdict> read_via_stream(Store& store, SharedFile file, uint64_t offset) {
  auto read = std::make_shared<FileRead>(store, std::move(file), offset);
  auto ends = read->ends();
  read->start();
  return ends;
}

Verdict write_via_stream(Store& store, SharedFile file, StreamReader<uint8_t> data, std::optional<uint64_t> offset) {
  auto write = std::make_shared<FileWrite>(store, std::move(file), std::move(data), offset);
  Verdict future = write->future();
  write->start();
  return future;
}

std::tuple<Stream<fs::DirectoryEntry>, Verdict> read_directory(Store& store, SharedFile dir) {
  auto read = std::make_shared<DirectoryRead>(store, std::move(dir));
  auto ends = read->ends();
  read->start();
  return ends;
}

}  // namespace cmhost::wasi::p3::filesystem
