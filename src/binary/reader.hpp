// A bounds-checked cursor over the component bytes. All positions are
// absolute offsets into the decoded input, so error messages and ByteRanges
// need no translation, also inside sections and nested components.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "binary/binary.hpp"
#include "cmhost/error.hpp"
#include "support/text.hpp"

namespace cmhost::binary::detail {

// Deeper nesting of components and component/instance types is rejected, so
// hostile input cannot exhaust the stack.
inline constexpr unsigned kMaxNestingDepth = 100;

class Reader {
 public:
  // `kind` is what a malformed input throws: Decode for the component
  // binary, Validate for the core modules validation reads with it.
  Reader(std::span<const uint8_t> input, size_t begin, size_t end, const char* context,
         ErrorKind kind = ErrorKind::Decode)
      : input_(input), pos_(begin), end_(end), context_(context), kind_(kind) {}

  size_t position() const { return pos_; }
  size_t end() const { return end_; }
  size_t remaining() const { return end_ - pos_; }
  bool at_end() const { return pos_ == end_; }
  const char* context() const { return context_; }

  uint8_t peek_u8() const;
  uint8_t read_u8();
  uint32_t read_u32();
  uint64_t read_u64();
  int64_t read_s33() { return read_signed(33); }
  int64_t read_s32() { return read_signed(32); }
  int64_t read_s64() { return read_signed(64); }

  // A vector length; larger than the remaining bytes is an error (every
  // element takes at least one byte), so it can bound allocations.
  uint32_t read_count(const char* what);
  // A length-prefixed UTF-8 name (core:name).
  std::string read_name(const char* what);
  // Skips n bytes and returns where they are.
  ByteRange read_bytes(size_t n, const char* what);

  // Reads one byte that must be `expected`.
  void expect_byte(uint8_t expected, const char* what);
  // 0x00 => false, 0x01 => true; anything else is malformed.
  bool read_flag(const char* what);

  // The next `size` bytes as a reader of their own.
  Reader sub_reader(size_t size, const char* context);
  // A section must be consumed exactly.
  void expect_end();

  [[noreturn]] void fail_at(size_t offset, const std::string& reason) const;
  [[noreturn]] void fail(const std::string& reason) const { fail_at(pos_, reason); }
  // "unknown <what> 0xNN" at the byte just read.
  [[noreturn]] void fail_unknown(const char* what, uint8_t byte) const;

  std::span<const uint8_t> input() const { return input_; }

  // Nesting of components and component/instance types; see kMaxNestingDepth.
  class NestingGuard {
   public:
    explicit NestingGuard(Reader& reader);
    ~NestingGuard() { --reader_.depth_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    Reader& reader_;
  };

 private:
  void require(size_t n, const char* what) const;
  int64_t read_signed(unsigned bits);

  std::span<const uint8_t> input_;
  size_t pos_;
  size_t end_;
  const char* context_;
  ErrorKind kind_;
  unsigned depth_ = 0;
};

using support::hex;

// Reservations for vec(T) are capped: read_count bounds a count by the
// remaining bytes, but a short input declaring many items must not reserve
// much more memory than the items it actually holds.
inline constexpr uint32_t kMaxReservedItems = 256;

// vec(T): a count, then that many items read by read_item(reader).
template <typename ReadItem>
auto read_vec(Reader& reader, const char* what, ReadItem read_item)
    -> std::vector<decltype(read_item(reader))> {
  const uint32_t count = reader.read_count(what);
  std::vector<decltype(read_item(reader))> items;
  items.reserve(std::min(count, kMaxReservedItems));
  for (uint32_t i = 0; i < count; ++i) items.push_back(read_item(reader));
  return items;
}

}  // namespace cmhost::binary::detail
