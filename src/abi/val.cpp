#include "cmhost/abi/val.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "cmhost/error.hpp"
#include "text.hpp"

namespace cmhost::abi {
namespace {

// Per-thread free lists of memory blocks, one list per size class, holding
// at most kBudget bytes in all so a burst does not pin much memory. A block
// may be freed by another thread than the one that allocated it; it then
// joins that thread's lists.
template <size_t kClasses, size_t kBudget>
class FreeLists {
 public:
  ~FreeLists() {
    for (Block*& head : heads_)
      while (head) {
        Block* next = head->next;
        ::operator delete(head);
        head = next;
      }
  }
  void* take(size_t size_class, size_t bytes) {
    Block* b = heads_[size_class];
    if (!b) return ::operator new(bytes);
    heads_[size_class] = b->next;
    kept_bytes_ -= bytes;
    return b;
  }
  void give(void* block, size_t size_class, size_t bytes) noexcept {
    if (kept_bytes_ + bytes > kBudget) {
      ::operator delete(block);
      return;
    }
    heads_[size_class] = new (block) Block{heads_[size_class]};
    kept_bytes_ += bytes;
  }

 private:
  struct Block {
    Block* next;
  };
  Block* heads_[kClasses] = {};
  size_t kept_bytes_ = 0;
};

// Item arrays of 1..kPooledMax values built one by one (not by lifting,
// whose trees come from a ValArena).
constexpr size_t kPooledMax = 16;
thread_local FreeLists<kPooledMax + 1, size_t{16} << 20> item_pool;

Val* allocate_items(size_t count) {
  if (count <= kPooledMax) return static_cast<Val*>(item_pool.take(count, count * sizeof(Val)));
  return static_cast<Val*>(::operator new(count * sizeof(Val)));
}

void free_items(Val* data, size_t count) noexcept {
  if (count <= kPooledMax)
    item_pool.give(data, count, count * sizeof(Val));
  else
    ::operator delete(data);
}

// Arena chunks are powers of two from 4 KiB; freed ones wait in per-thread
// lists so the next lifted tree of the same size reuses warm memory instead
// of asking malloc, or the kernel, for fresh pages. Under AddressSanitizer
// they go straight back to the heap, so a Val that outlives its arena is
// reported rather than reading a cached chunk.
constexpr unsigned kMinChunkShift = 12, kMaxChunkShift = 40;
thread_local FreeLists<kMaxChunkShift + 1, size_t{32} << 20> chunk_cache;

unsigned chunk_shift_for(size_t bytes) {
  unsigned shift = kMinChunkShift;
  while ((size_t{1} << shift) < bytes) ++shift;
  return shift;
}

void* take_chunk(unsigned shift) {
  if (shift > kMaxChunkShift) throw std::bad_alloc();
  return chunk_cache.take(shift, size_t{1} << shift);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheChunks = false;
#else
constexpr bool kCacheChunks = true;
#endif

void give_chunk(void* chunk, unsigned shift) noexcept {
  if (kCacheChunks)
    chunk_cache.give(chunk, shift, size_t{1} << shift);
  else
    ::operator delete(chunk);
}

}  // namespace

static_assert(sizeof(Val) == 32, "ValArena::kItemBytes is sizeof(Val)");
static_assert(Val::kMaxInlineText <= 24 && Val::kMaxInlinePacked <= 24, "inline bytes are moved by detail::copy_short");

struct ValArena::Chunk {
  Chunk* next;  // older chunk
  unsigned shift;
};
static_assert(sizeof(void*) + sizeof(unsigned) <= 16);

namespace {
constexpr size_t kChunkHeader = 16;  // a Chunk, rounded up
}

ValArena* ValArena::create() {
  void* memory = take_chunk(kMinChunkShift);
  auto* chunk = new (memory) Chunk{nullptr, kMinChunkShift};
  auto* arena = new (static_cast<unsigned char*>(memory) + kChunkHeader) ValArena();
  arena->chunks_ = chunk;
  arena->next_ = static_cast<unsigned char*>(memory) + kChunkHeader + (sizeof(ValArena) + 15) / 16 * 16;
  arena->end_ = static_cast<unsigned char*>(memory) + (size_t{1} << kMinChunkShift);
  return arena;
}

Val* ValArena::grow(size_t bytes) {
  // Each chunk at least doubles the last, up to 1 MiB, or fits the request.
  const unsigned doubled = std::min(chunks_->shift + 1, 20u);
  const unsigned shift = std::max(doubled, chunk_shift_for(bytes + kChunkHeader));
  void* memory = take_chunk(shift);
  chunks_ = new (memory) Chunk{chunks_, shift};
  next_ = static_cast<unsigned char*>(memory) + kChunkHeader + bytes;
  end_ = static_cast<unsigned char*>(memory) + (size_t{1} << shift);
  return reinterpret_cast<Val*>(static_cast<unsigned char*>(memory) + kChunkHeader);
}

void ValArena::destroy() noexcept {
  Chunk* c = chunks_;
  this->~ValArena();  // lives in the oldest chunk, given back last
  while (c) {
    Chunk* next = c->next;
    give_chunk(c, c->shift);
    c = next;
  }
}

uint32_t scalar_size(ValKind kind) {
  switch (kind) {
    case ValKind::S8:
    case ValKind::U8: return 1;
    case ValKind::S16:
    case ValKind::U16: return 2;
    case ValKind::S32:
    case ValKind::U32:
    case ValKind::F32: return 4;
    case ValKind::S64:
    case ValKind::U64:
    case ValKind::F64: return 8;
    default: return 0;
  }
}

Val::Val(const Val& other) : kind_(other.kind_) { copy_from(other); }

Val& Val::operator=(const Val& other) {
  if (this != &other) {
    Val copy(other);
    *this = std::move(copy);
  }
  return *this;
}

void Val::destroy_storage() noexcept {
  switch (repr_) {
    case Repr::Scalar: break;
    case Repr::Text:
      if (storage_.text.form == kHeapText) {
        char* data;
        std::memcpy(&data, storage_.text.bytes, sizeof data);
        delete[] data;
      } else if (storage_.text.form == kArenaText && (arena_flags_ & kArenaFlagRef)) {
        arena_of()->release();
      }
      break;
    case Repr::Items: {
      const Items& it = storage_.items;
      if (!it.arena) {
        for (size_t i = 0; i < it.size; ++i) it.data[i].~Val();
        if (it.capacity) free_items(it.data, it.capacity);
        break;
      }
      if (!(arena_flags_ & kArenaFlagDroppable))
        for (size_t i = 0; i < it.size; ++i) it.data[i].~Val();
      if (arena_flags_ & kArenaFlagRef) it.arena->release();
      break;
    }
    case Repr::Packed:
      if (!(arena_flags_ & kArenaFlagBytesInArena))
        delete[] storage_.packed.heap;
      else if (arena_flags_ & kArenaFlagRef)
        arena_of()->release();
      break;
  }
  repr_ = Repr::Scalar;
}

void Val::copy_from(const Val& other) {
  elem_ = other.elem_;
  case_ = other.case_;
  switch (other.repr_) {
    case Repr::Scalar: storage_.u = other.storage_.u; break;
    case Repr::Text: init_text(other.as_string()); break;
    case Repr::Items: {
      init_items(other.storage_.items.size);
      for (const Val& item : other.items()) emplace_item([&] { return item; });
      break;
    }
    case Repr::Packed: {
      const size_t n = other.storage_.packed.byte_size;
      init_packed(n);
      if (n) std::memcpy(storage_.packed.data(), other.storage_.packed.data(), n);
      break;
    }
  }
  repr_ = other.repr_;
}

void Val::init_packed(size_t byte_size) {
  storage_.packed.heap = byte_size > kMaxInlinePacked ? new uint8_t[byte_size] : nullptr;
  storage_.packed.byte_size = byte_size;
}

Val Val::f32(float v) { return Val(ValKind::F32, std::bit_cast<uint32_t>(v)); }
Val Val::f64(double v) { return Val(ValKind::F64, std::bit_cast<uint64_t>(v)); }

Val Val::char_(char32_t v) {
  if (!is_unicode_scalar(v))
    throw_invalid_value("char value " + std::to_string(uint32_t(v)) +
                        " is not a Unicode scalar value");
  return Val(ValKind::Char, v);
}

void Val::init_heap_text(std::string_view v) {
  char* data = new char[v.size()];
  std::memcpy(data, v.data(), v.size());
  set_out_of_line_text(kHeapText, data, v.size(), nullptr);
  repr_ = Repr::Text;
}

Val Val::string(std::string_view v) {
  if (!is_valid_utf8(reinterpret_cast<const uint8_t*>(v.data()), v.size()))
    throw_invalid_value("string is not valid UTF-8");
  return string_unchecked(v);
}

void Val::init_items(size_t capacity) {
  if (capacity > UINT32_MAX) throw std::length_error("too many items in one value");
  Val* data = capacity ? allocate_items(capacity) : nullptr;
  storage_.items = Items{data, 0, static_cast<uint32_t>(capacity), nullptr};
  repr_ = Repr::Items;
  arena_flags_ = 0;
}

Val Val::compound_with_capacity(ValKind kind, uint32_t case_index, size_t capacity) {
  Val out(kind, 0);
  out.case_ = case_index;
  out.init_items(capacity);
  return out;
}

Val Val::compound(ValKind kind, uint32_t case_index, std::vector<Val> items) {
  Val out = compound_with_capacity(kind, case_index, items.size());
  for (Val& item : items) out.emplace_item([&] { return std::move(item); });
  return out;
}

Val Val::list(std::vector<Val> elements) { return compound(ValKind::List, 0, std::move(elements)); }

Val Val::packed_uninitialized(ValKind element, size_t count, uint8_t** data) {
  const uint32_t es = scalar_size(element);
  if (es == 0)
    throw_invalid_value(std::string("a packed list holds numbers, not ") + to_string(element));
  Val out(ValKind::List, 0);
  const size_t n = count * es;
  out.init_packed(n);
  out.repr_ = Repr::Packed;
  out.elem_ = static_cast<uint8_t>(element);
  *data = out.storage_.packed.data();
  return out;
}

Val Val::packed_in(ValArena& arena, ValKind element, size_t count, uint8_t** data) {
  Val out = packed_uninitialized(element, 0, data);
  const size_t bytes = count * scalar_size(element);
  if (bytes > kMaxInlinePacked) {
    out.storage_.packed.heap = reinterpret_cast<uint8_t*>(arena.allocate_text(bytes));
    ValArena* at = &arena;
    std::memcpy(out.storage_.packed.inline_bytes, &at, sizeof at);
    out.arena_flags_ |= kArenaFlagBytesInArena;
    *data = out.storage_.packed.heap;
  }
  out.storage_.packed.byte_size = bytes;
  return out;
}

Val Val::packed_list(ValKind element, const void* data, size_t count) {
  uint8_t* dst = nullptr;
  Val out = packed_uninitialized(element, count, &dst);
  if (count) std::memcpy(dst, data, count * scalar_size(element));
  return out;
}

Val Val::record(std::vector<Val> fields) { return compound(ValKind::Record, 0, std::move(fields)); }
Val Val::tuple(std::vector<Val> elements) { return compound(ValKind::Tuple, 0, std::move(elements)); }
Val Val::map(std::vector<Val> entries) { return compound(ValKind::Map, 0, std::move(entries)); }

static std::vector<Val> payload_items(std::optional<Val> payload) {
  std::vector<Val> items;
  if (payload) items.push_back(std::move(*payload));
  return items;
}

Val Val::variant(uint32_t case_index, std::optional<Val> payload) {
  return compound(ValKind::Variant, case_index, payload_items(std::move(payload)));
}
Val Val::enum_(uint32_t case_index) { return compound(ValKind::Enum, case_index, {}); }
Val Val::none() { return compound(ValKind::Option, 0, {}); }
Val Val::some(Val payload) { return compound(ValKind::Option, 1, payload_items(std::move(payload))); }
Val Val::ok(std::optional<Val> payload) {
  return compound(ValKind::Result, 0, payload_items(std::move(payload)));
}
Val Val::err(std::optional<Val> payload) {
  return compound(ValKind::Result, 1, payload_items(std::move(payload)));
}
Val Val::flags(uint32_t mask) { return Val(ValKind::Flags, mask); }

void Val::wrong_kind(const char* wanted) const {
  throw_invalid_value(std::string("expected a ") + wanted + " value, got " + to_string(kind_));
}

float Val::as_f32() const {
  if (kind_ != ValKind::F32) wrong_kind("f32");
  return std::bit_cast<float>(static_cast<uint32_t>(storage_.u));
}
double Val::as_f64() const {
  if (kind_ != ValKind::F64) wrong_kind("f64");
  return std::bit_cast<double>(storage_.u);
}
std::string_view Val::out_of_line_text() const {
  const Text& t = storage_.text;
  const char* data;
  std::memcpy(&data, t.bytes, sizeof data);
  if (t.form == kArenaText) {
    uint32_t size;
    std::memcpy(&size, t.bytes + 16, sizeof size);
    return {data, size};
  }
  uint64_t size;
  std::memcpy(&size, t.bytes + 8, sizeof size);
  return {data, size};
}
uint32_t Val::as_handle() const {
  switch (kind_) {
    case ValKind::Own:
    case ValKind::Borrow:
    case ValKind::Stream:
    case ValKind::Future:
    case ValKind::ErrorContext: return static_cast<uint32_t>(storage_.u);
    default: wrong_kind("handle");
  }
}

size_t Val::list_size() const {
  if (repr_ == Repr::Packed) return storage_.packed.byte_size / scalar_size(packed_element_kind());
  if (repr_ == Repr::Items) return storage_.items.size;
  wrong_kind("list");
}

static uint64_t read_packed_element(const uint8_t* p, ValKind kind) {
  switch (kind) {
    case ValKind::U8: return *p;
    case ValKind::S8: return static_cast<uint64_t>(int64_t{static_cast<int8_t>(*p)});
    case ValKind::U16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case ValKind::S16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return static_cast<uint64_t>(int64_t{v});
    }
    case ValKind::U32:
    case ValKind::F32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case ValKind::S32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<uint64_t>(int64_t{v});
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

Val Val::list_element(size_t i) const {
  if (i >= list_size()) throw_invalid_value("list index " + std::to_string(i) + " out of range");
  if (repr_ == Repr::Items) return storage_.items.data[i];
  const ValKind ek = packed_element_kind();
  return Val(ek, read_packed_element(storage_.packed.data() + i * scalar_size(ek), ek));
}

std::span<Val> Val::items_mut() {
  if (repr_ != Repr::Items) return {};
  arena_flags_ &= static_cast<uint8_t>(~kArenaFlagDroppable);  // items may change to ones that need dropping
  return {storage_.items.data, storage_.items.size};
}

static bool same_items(std::span<const Val> a, std::span<const Val> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

bool Val::operator==(const Val& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ == ValKind::List || kind_ == ValKind::Map) {
    if (repr_ == Repr::Packed && other.repr_ == Repr::Packed &&
        elem_ == other.elem_)
      return storage_.packed.byte_size == other.storage_.packed.byte_size &&
             std::memcmp(storage_.packed.data(), other.storage_.packed.data(),
                         storage_.packed.byte_size) == 0;
    if (repr_ == Repr::Items && other.repr_ == Repr::Items) return same_items(items(), other.items());
    const size_t n = list_size();
    if (n != other.list_size()) return false;
    for (size_t i = 0; i < n; ++i)
      if (!(list_element(i) == other.list_element(i))) return false;
    return true;
  }
  if (repr_ != other.repr_ || case_ != other.case_) return false;
  switch (repr_) {
    case Repr::Scalar: return storage_.u == other.storage_.u;
    case Repr::Text: return as_string() == other.as_string();
    case Repr::Items: return same_items(items(), other.items());
    case Repr::Packed: return false;  // only lists are packed
  }
  return false;
}

}  // namespace cmhost::abi
