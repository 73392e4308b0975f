#include "reader.hpp"

#include "support/unicode.hpp"
#include "cmhost/error.hpp"

namespace cmhost::binary::detail {

void Reader::fail_at(size_t offset, const std::string& reason) const {
  std::string message = "at byte " + hex(offset) + ": " + reason;
  if (context_ && *context_) message += std::string(" in ") + context_;
  throw Error(kind_, message);
}

void Reader::fail_unknown(const char* what, uint8_t byte) const {
  fail_at(pos_ - 1, std::string("unknown ") + what + " " + hex(byte));
}

void Reader::require(size_t n, const char* what) const {
  if (remaining() < n) fail(std::string("unexpected end of data reading ") + what);
}

uint8_t Reader::peek_u8() const {
  require(1, "a byte");
  return input_[pos_];
}

uint8_t Reader::read_u8() {
  require(1, "a byte");
  return input_[pos_++];
}

// LEB128 as core wasm decodes it: at most ceil(N/7) bytes, and the bits of
// the last byte beyond N must be zero (unsigned) or copies of the sign bit.
uint32_t Reader::read_u32() {
  const size_t start = pos_;
  uint32_t result = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (at_end()) fail("unexpected end of data reading an integer");
    const uint8_t byte = input_[pos_++];
    if (shift == 28 && (byte & 0xf0) != 0) {
      fail_at(start, (byte & 0x80) ? "integer representation too long (u32 takes at most 5 bytes)"
                                    : "integer too large for u32");
    }
    result |= uint32_t(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return result;
  }
}

uint64_t Reader::read_u64() {
  const size_t start = pos_;
  uint64_t result = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (at_end()) fail("unexpected end of data reading an integer");
    const uint8_t byte = input_[pos_++];
    if (shift == 63 && (byte & 0xfe) != 0) {
      fail_at(start, (byte & 0x80) ? "integer representation too long (u64 takes at most 10 bytes)"
                                    : "integer too large for u64");
    }
    result |= uint64_t(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return result;
  }
}

// Signed LEB128 of `bits` bits: at most ceil(bits/7) bytes, and the bits
// of the last byte beyond `bits` must repeat the sign bit.
int64_t Reader::read_signed(unsigned bits) {
  const size_t start = pos_;
  uint64_t result = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (at_end()) fail("unexpected end of data reading an integer");
    const uint8_t byte = input_[pos_++];
    if (shift + 7 >= bits) {
      if (byte & 0x80)
        fail_at(start, "integer representation too long (s" + std::to_string(bits) + " takes at most " +
                           std::to_string((bits + 6) / 7) + " bytes)");
      const unsigned value_bits = bits - shift;  // the sign bit is the last of them
      const uint8_t unused = uint8_t(0x7f << value_bits) & 0x7f;
      const uint8_t expected = (byte >> (value_bits - 1)) & 1 ? unused : 0;
      if ((byte & unused) != expected) fail_at(start, "integer too large for s" + std::to_string(bits));
    }
    result |= uint64_t(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      const unsigned read = shift + 7;
      if (read < 64 && (byte & 0x40)) result |= ~uint64_t{0} << read;
      return static_cast<int64_t>(result);
    }
  }
}

uint32_t Reader::read_count(const char* what) {
  const size_t start = pos_;
  const uint32_t count = read_u32();
  if (count > remaining()) {
    fail_at(start, std::string("unexpected end of data: ") + std::to_string(count) + " " + what +
                       " declared but only " + std::to_string(remaining()) + " bytes remain");
  }
  return count;
}

std::string Reader::read_name(const char* what) {
  const size_t start = pos_;
  const uint32_t length = read_u32();
  if (length > remaining()) {
    fail_at(start, std::string("unexpected end of data: ") + what + " of " +
                       std::to_string(length) + " bytes but only " + std::to_string(remaining()) +
                       " remain");
  }
  const uint8_t* bytes = input_.data() + pos_;
  if (!support::is_valid_utf8(bytes, length)) fail_at(pos_, std::string(what) + " is not valid UTF-8");
  pos_ += length;
  return std::string(reinterpret_cast<const char*>(bytes), length);
}

ByteRange Reader::read_bytes(size_t n, const char* what) {
  require(n, what);
  const ByteRange range{pos_, n};
  pos_ += n;
  return range;
}

void Reader::expect_byte(uint8_t expected, const char* what) {
  const uint8_t byte = read_u8();
  if (byte != expected)
    fail_at(pos_ - 1, std::string(what) + " must be " + hex(expected) + ", found " + hex(byte));
}

bool Reader::read_flag(const char* what) {
  const uint8_t byte = read_u8();
  if (byte > 1)
    fail_at(pos_ - 1,
            std::string("invalid ") + what + " flag " + hex(byte) + " (expected 0x00 or 0x01)");
  return byte == 1;
}

Reader Reader::sub_reader(size_t size, const char* context) {
  require(size, "a section");
  Reader sub(input_, pos_, pos_ + size, context, kind_);
  sub.depth_ = depth_;
  pos_ += size;
  return sub;
}

void Reader::expect_end() {
  if (!at_end()) {
    fail(std::to_string(remaining()) + " unused byte" + (remaining() == 1 ? "" : "s") +
         " at the end (the size does not match the contents)");
  }
}

Reader::NestingGuard::NestingGuard(Reader& reader) : reader_(reader) {
  if (reader_.depth_ >= kMaxNestingDepth) {
    reader_.fail("nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels");
  }
  ++reader_.depth_;
}

}  // namespace cmhost::binary::detail
