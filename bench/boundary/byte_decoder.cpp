#include "byte_decoder.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace cmhost::bench::boundary {
namespace {

class FrameDecoder {
 public:
  FrameDecoder(const uint8_t* ops, const uint8_t* ops_end, const uint8_t* texts, const uint8_t* texts_end)
      : p_(ops), end_(ops_end), text_(texts), text_end_(texts_end) {}

  uint64_t run(Sink& sink) {
    uint64_t count = 0;
    while (p_ < end_) {
      operation(sink);
      ++count;
    }
    if (text_ != text_end_) fail("texts do not use up the string segment");
    return count;
  }

 private:
  [[noreturn]] static void fail(const char* why) { throw std::runtime_error(std::string("byte protocol: ") + why); }

  void need(size_t n) const {
    if (static_cast<size_t>(end_ - p_) < n) fail("operation runs past the op segment");
  }
  template <class T>
  T read() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  uint8_t u8() { return read<uint8_t>(); }
  uint16_t u16() { return read<uint16_t>(); }
  uint32_t u32() { return read<uint32_t>(); }
  uint64_t u64() { return read<uint64_t>(); }
  std::optional<uint16_t> ns() {
    const uint16_t v = u16();
    if (v == 0xffff) return std::nullopt;
    return v;
  }
  std::string_view text() {
    uint32_t n = u16();
    if (n == 0xffff) n = u32();
    if (static_cast<size_t>(text_end_ - text_) < n) fail("text runs past the string segment");
    std::string_view s(reinterpret_cast<const char*>(text_), n);
    text_ += n;
    return s;
  }
  std::span<const uint8_t> path() {
    const uint8_t n = u8();
    need(n);
    std::span<const uint8_t> s(p_, n);
    p_ += n;
    return s;
  }

  // A template node and its subtree, numbered in pre-order. A node's
  // children are known only after their subtrees, so they wait on a stack.
  uint32_t node() {
    const uint8_t kind = u8();
    if (kind == 1) return builder_.text(text());
    if (kind == 2) return builder_.dynamic();
    if (kind != 0) fail("unknown template node kind");
    const uint16_t tag = u16();
    const uint32_t index = builder_.element(tag, ns());
    const uint16_t attrs = u16();
    for (uint16_t i = 0; i < attrs; ++i) {
      const uint16_t name = u16();
      const auto attr_ns = ns();
      builder_.attr(name, attr_ns, text());
    }
    const uint16_t children = u16();
    const size_t base = pending_.size();
    for (uint16_t i = 0; i < children; ++i) {
      const uint32_t child = node();
      pending_.push_back(child);
    }
    for (size_t i = base; i < pending_.size(); ++i) builder_.child(index, pending_[i]);
    pending_.resize(base);
    return index;
  }

  void operation(Sink& sink) {
    switch (u8()) {
      case 1: {
        const uint16_t id = u16();
        sink.cache_string(id, text());
        return;
      }
      case 2: {
        const uint16_t id = u16();
        const uint16_t root_count = u16();
        builder_.start();
        for (uint16_t i = 0; i < root_count; ++i) builder_.root(node());
        builder_.deliver(id, sink);
        return;
      }
      case 3: { const uint32_t id = u32(); sink.append_children(id, u32()); return; }
      case 4: { const auto p = path(); sink.assign_id(p, u32()); return; }
      case 5: sink.create_placeholder(u32()); return;
      case 6: { const uint32_t id = u32(); sink.create_text_node(id, text()); return; }
      case 7: {
        const uint32_t id = u32();
        const uint16_t tmpl = u16();
        sink.load_template(id, tmpl, u16());
        return;
      }
      case 8: { const uint32_t id = u32(); sink.replace_with(id, u32()); return; }
      case 9: { const auto p = path(); sink.replace_placeholder(p, u32()); return; }
      case 10: { const uint32_t id = u32(); sink.insert_after(id, u32()); return; }
      case 11: { const uint32_t id = u32(); sink.insert_before(id, u32()); return; }
      case 12: {
        const uint32_t id = u32();
        const uint16_t name = u16();
        const auto attr_ns = ns();
        AttrValue v{};
        switch (u8()) {
          case 0: v.kind = AttrKind::Text, v.text = text(); break;
          case 1: {
            v.kind = AttrKind::Float;
            const uint64_t bits = u64();
            std::memcpy(&v.number, &bits, 8);
            break;
          }
          case 2: v.kind = AttrKind::Int, v.integer = static_cast<int64_t>(u64()); break;
          case 3: v.kind = AttrKind::Boolean, v.boolean = u8() != 0; break;
          case 4: v.kind = AttrKind::None; break;
          default: fail("unknown attribute value kind");
        }
        sink.set_attribute(id, name, attr_ns, v);
        return;
      }
      case 13: { const uint32_t id = u32(); sink.set_text(id, text()); return; }
      case 14: {
        const uint32_t id = u32();
        const uint16_t name = u16();
        sink.new_event_listener(id, name, u8() != 0);
        return;
      }
      case 15: {
        const uint32_t id = u32();
        const uint16_t name = u16();
        sink.remove_event_listener(id, name, u8() != 0);
        return;
      }
      case 16: sink.remove(u32()); return;
      case 17: sink.push_root(u32()); return;
      default: fail("unknown opcode");
    }
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* text_;
  const uint8_t* text_end_;
  // Kept from one batch to the next: decoding a template allocates nothing.
  static thread_local TemplateBuilder builder_;
  static thread_local std::vector<uint32_t> pending_;
};

thread_local TemplateBuilder FrameDecoder::builder_;
thread_local std::vector<uint32_t> FrameDecoder::pending_;

}  // namespace

uint64_t decode_bytes(std::span<const uint8_t> bytes, Sink& sink) {
  uint64_t count = 0;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 8) throw std::runtime_error("byte protocol: truncated frame header");
    uint32_t frame_len, strings_len;
    std::memcpy(&frame_len, bytes.data() + at, 4);
    std::memcpy(&strings_len, bytes.data() + at + 4, 4);
    if (frame_len < 8 || frame_len > bytes.size() - at || strings_len > frame_len - 8)
      throw std::runtime_error("byte protocol: malformed frame header");
    const uint8_t* texts = bytes.data() + at + 8;
    FrameDecoder frame(texts + strings_len, bytes.data() + at + frame_len, texts, texts + strings_len);
    count += frame.run(sink);
    at += frame_len;
  }
  return count;
}

}  // namespace cmhost::bench::boundary
