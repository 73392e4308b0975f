// Handle tables: the per-instance table of the spec, shared by resource
// handles, subtasks, stream and future ends, waitable sets and
// error-contexts (index 0 never used, freed slots reused last-in first-out),
// and the store's table of what the host holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cmhost/error.hpp"
#include "runtime/runtime.hpp"

namespace cmhost::runtime {

struct ResourceHandle {
  ResourceTypeRef type;
  uint32_t rep = 0;
  bool own = true;
  uint32_t num_lends = 0;     // borrows of this own handle lent to calls in progress
  uint64_t borrow_scope = 0;  // borrows: the task that must drop it before returning
};

// What else a table slot can hold. The host table also carries a stream's or
// future's shared state (and error-contexts) between the two sides of a call.
enum class HandleKind : uint8_t {
  Resource, Subtask, StreamReadable, StreamWritable, FutureReadable, FutureWritable,
  WaitableSet, ErrorContext, SharedStream, SharedFuture,
};
const char* to_string(HandleKind kind) noexcept;

// Base of every non-resource table entry.
class HandleObject {
 public:
  virtual ~HandleObject() = default;
  // A table going away calls this on every entry before destroying any, so
  // entries that point at each other (a waitable and its set) let go first.
  virtual void detach() {}
  // Host bytes the object keeps beyond its own size, counted against the
  // store's host_bytes while a table holds it.
  virtual uint64_t held_bytes() const { return 0; }
};

// A table with the spec's indexing: 1-based, freed slots reused LIFO, at
// most 2^28-1 entries.
template <typename T>
class IndexTable {
 public:
  static constexpr uint32_t kMaxLength = (1u << 28) - 1;

  uint32_t add(T value) {
    if (!free_.empty()) {
      const uint32_t i = free_.back();
      free_.pop_back();
      slots_[i] = Slot{true, std::move(value)};
      return i;
    }
    if (slots_.size() > kMaxLength) throw_trap("table is full (2^28-1 entries)");
    slots_.push_back(Slot{true, std::move(value)});
    return static_cast<uint32_t>(slots_.size() - 1);
  }
  T* find(uint32_t i) {
    if (i >= slots_.size() || !slots_[i].used) return nullptr;
    return &slots_[i].value;
  }
  T& get(uint32_t i, const char* what = "handle") {
    T* v = find(i);
    if (!v) throw_trap("unknown " + std::string(what) + " index " + std::to_string(i));
    return *v;
  }
  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  T remove(uint32_t i, const char* what = "handle") {
    T value = std::move(get(i, what));
    slots_[i] = Slot{};
    free_.push_back(i);
    return value;
  }

 private:
  struct Slot {
    bool used = false;
    T value{};
  };
  std::vector<Slot> slots_ = std::vector<Slot>(1);  // index 0 is never handed out
  std::vector<uint32_t> free_;
};

class HandleTable {
 public:
  // `limits`: the store's, shared because instances may outlive their store;
  // null: the spec's limits only.
  explicit HandleTable(std::shared_ptr<HandleLimits> limits = nullptr) : limits_(std::move(limits)) {}
  ~HandleTable() {
    for (uint32_t i = 1; i < table_.capacity(); ++i)
      if (Entry* e = table_.find(i); e && e->object) e->object->detach();
    if (limits_) {
      limits_->live_waitables -= live_waitables_;
      limits_->live_host_bytes -= held_bytes_;
    }
  }

  // What one entry costs the host, for the store's host_bytes: the slot and
  // the bookkeeping of the object behind it.
  static constexpr uint64_t kEntryHostBytes = 64;
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  struct Entry {
    HandleKind kind = HandleKind::Resource;
    ResourceHandle resource;                // kind Resource
    std::shared_ptr<HandleObject> object;  // every other kind
  };

  uint32_t add(ResourceHandle h) {
    admit(false, kEntryHostBytes);
    const uint32_t i = table_.add(Entry{HandleKind::Resource, std::move(h), nullptr});
    ++live_;
    hold(kEntryHostBytes);
    return i;
  }
  uint32_t add(HandleKind kind, std::shared_ptr<HandleObject> object) {
    const uint64_t bytes = kEntryHostBytes + (object ? object->held_bytes() : 0);
    admit(true, bytes);
    const uint32_t i = table_.add(Entry{kind, {}, std::move(object)});
    ++live_;
    ++live_waitables_;
    if (limits_) ++limits_->live_waitables;
    hold(bytes);
    return i;
  }

  Entry* entry(uint32_t i) { return table_.find(i); }
  Entry& entry_or_trap(uint32_t i) { return table_.get(i); }

  // Resource handles; other kinds in the slot trap.
  ResourceHandle* find(uint32_t i) {
    Entry* e = table_.find(i);
    return e && e->kind == HandleKind::Resource ? &e->resource : nullptr;
  }
  ResourceHandle& get(uint32_t i) {
    Entry& e = table_.get(i);
    if (e.kind != HandleKind::Resource) throw_trap(not_a(i, e.kind, "resource handle"));
    return e.resource;
  }
  ResourceHandle remove(uint32_t i) {
    get(i);
    return take(i).resource;
  }

  // The object at `i`, which must be of `kind`.
  template <typename T>
  T& get(uint32_t i, HandleKind kind) {
    Entry& e = table_.get(i);
    if (e.kind != kind) throw_trap(not_a(i, e.kind, to_string(kind)));
    return static_cast<T&>(*e.object);
  }
  template <typename T>
  std::shared_ptr<T> remove(uint32_t i, HandleKind kind) {
    get<T>(i, kind);
    return std::static_pointer_cast<T>(take(i).object);
  }
  Entry remove_entry(uint32_t i) { return take(i); }

 private:
  // Traps when one more entry would pass the store's limits.
  void admit(bool waitable, uint64_t bytes) const {
    if (!limits_) return;
    if (bytes > limits_->host_bytes || limits_->live_host_bytes > limits_->host_bytes - bytes)
      throw_trap("host memory limit: the store's handle tables may keep " + std::to_string(limits_->host_bytes) +
                 " bytes of host memory for its guests (StoreLimits::host_bytes); " +
                 std::to_string(limits_->live_host_bytes) + " are held and this entry takes " +
                 std::to_string(bytes));
    if (live_ >= limits_->entries)
      throw_trap("handle limit: an instance's handle table may hold " + std::to_string(limits_->entries) +
                 " entries (StoreLimits::table_entries)");
    if (waitable && limits_->live_waitables >= limits_->waitables)
      throw_trap("waitable limit: the store's guests may hold " + std::to_string(limits_->waitables) +
                 " streams, futures, subtasks, waitable sets and error contexts (StoreLimits::waitables)");
  }
  Entry take(uint32_t i) {
    Entry e = table_.remove(i);
    --live_;
    uint64_t bytes = kEntryHostBytes;
    if (e.kind != HandleKind::Resource) {
      --live_waitables_;
      if (limits_) --limits_->live_waitables;
      if (e.object) bytes += e.object->held_bytes();
    }
    held_bytes_ -= bytes;
    if (limits_) limits_->live_host_bytes -= bytes;
    return e;
  }
  void hold(uint64_t bytes) {
    held_bytes_ += bytes;
    if (limits_) limits_->live_host_bytes += bytes;
  }
  static std::string not_a(uint32_t i, HandleKind actual, const char* wanted) {
    return "handle index " + std::to_string(i) + " is a " + to_string(actual) + ", not a " + wanted;
  }
  IndexTable<Entry> table_;
  std::shared_ptr<HandleLimits> limits_;
  uint32_t live_ = 0;
  uint32_t live_waitables_ = 0;
  uint64_t held_bytes_ = 0;  // this table's part of HandleLimits::live_host_bytes
};

}  // namespace cmhost::runtime
