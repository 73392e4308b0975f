// The boundary benchmark's C guest (bench/boundary/guest) against the host's
// own batches (bench/common/dom_batch.cpp): the typed results must equal
// build_operations (and build_coverage_operations) Val for Val, and the byte
// protocol must decode into the same operations, so the benchmark compares
// two encodings of one batch. The reference decoder below is written from
// bench/boundary/guest/PROTOCOL.md alone; the benchmark's own decoder and
// Val walker (bench/boundary) are checked against the same batches, value
// by value, through a sink that rebuilds each operation as a Val.
#include <gtest/gtest.h>

#include "../support/test_engine.hpp"

#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../bench/boundary/byte_decoder.hpp"
#include "../../bench/boundary/val_walker.hpp"
#include "../../bench/common/dom_batch.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

// ---- Reference decoder (PROTOCOL.md) ----

class FrameReader {
 public:
  FrameReader(std::span<const uint8_t> ops, std::span<const uint8_t> strings) : ops_(ops), strings_(strings) {}

  bool done() const { return at_ == ops_.size(); }
  bool strings_used() const { return text_at_ == strings_.size(); }

  uint8_t u8() { return static_cast<uint8_t>(take(1)); }
  uint16_t u16() { return static_cast<uint16_t>(take(2)); }
  uint32_t u32() { return static_cast<uint32_t>(take(4)); }
  uint64_t u64() { return take(8); }

  Val text() {
    uint32_t len = u16();
    if (len == 0xffff) len = u32();
    if (len > strings_.size() - text_at_) throw std::runtime_error("text past the string segment");
    const auto bytes = strings_.subspan(text_at_, len);
    text_at_ += len;
    return Val::string(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  Val ns() {
    const uint16_t v = u16();
    return v == 0xffff ? Val::none() : Val::some(Val::u16(v));
  }
  Val path() {
    const uint8_t len = u8();
    std::vector<uint8_t> bytes(len);
    for (auto& b : bytes) b = u8();
    return Val::bytes(bytes);
  }
  Val boolean() {
    const uint8_t v = u8();
    if (v > 1) throw std::runtime_error("bool byte " + std::to_string(v));
    return Val::bool_(v == 1);
  }

 private:
  uint64_t take(size_t n) {
    if (n > ops_.size() - at_) throw std::runtime_error("operation past the op segment");
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{ops_[at_ + i]} << (8 * i);
    at_ += n;
    return v;
  }

  std::span<const uint8_t> ops_, strings_;
  size_t at_ = 0, text_at_ = 0;
};

Val u32s(const std::vector<uint32_t>& v) { return Val::packed_list(abi::ValKind::U32, v.data(), v.size()); }

// A node and its subtree, numbered in the order read; returns its number.
uint32_t decode_node(FrameReader& r, std::vector<Val>& nodes) {
  const auto index = static_cast<uint32_t>(nodes.size());
  nodes.emplace_back();
  const uint8_t kind = r.u8();
  switch (kind) {
    case 0: {
      const Val tag = Val::u16(r.u16());
      Val ns = r.ns();
      std::vector<Val> attrs(r.u16());
      for (auto& attr : attrs) {
        const Val name = Val::u16(r.u16());
        Val attr_ns = r.ns();
        attr = Val::record({name, std::move(attr_ns), r.text()});
      }
      std::vector<uint32_t> children(r.u16());
      for (auto& child : children) child = decode_node(r, nodes);
      nodes[index] = Val::variant(0, Val::record({tag, std::move(ns), Val::list(std::move(attrs)), u32s(children)}));
      break;
    }
    case 1: nodes[index] = Val::variant(1, r.text()); break;
    case 2: nodes[index] = Val::variant(2); break;
    default: throw std::runtime_error("template node kind " + std::to_string(kind));
  }
  return index;
}

Val decode_operation(FrameReader& r) {
  const uint8_t opcode = r.u8();
  if (opcode < 1 || opcode > 17) throw std::runtime_error("opcode " + std::to_string(opcode));
  const uint32_t c = opcode - 1u;
  auto stack_op = [&] {
    const Val id = Val::u32(r.u32());
    return Val::record({id, Val::u32(r.u32())});
  };
  auto listener = [&] {
    const Val id = Val::u32(r.u32());
    const Val name = Val::u16(r.u16());
    return Val::record({id, name, r.boolean()});
  };
  auto id_text = [&] {
    const Val id = Val::u32(r.u32());
    return Val::record({id, r.text()});
  };
  switch (c) {
    case 0: {
      const Val id = Val::u16(r.u16());
      return Val::variant(c, Val::record({id, r.text()}));
    }
    case 1: {
      const Val id = Val::u16(r.u16());
      std::vector<Val> nodes;
      std::vector<uint32_t> roots(r.u16());
      for (auto& root : roots) root = decode_node(r, nodes);
      return Val::variant(c, Val::record({id, Val::list(std::move(nodes)), u32s(roots)}));
    }
    case 3:
    case 8: {  // assign-id, replace-placeholder: path first
      Val path = r.path();
      return Val::variant(c, Val::record({std::move(path), Val::u32(r.u32())}));
    }
    case 2:
    case 7:
    case 9:
    case 10: return Val::variant(c, stack_op());
    case 4:
    case 15:
    case 16: return Val::variant(c, Val::u32(r.u32()));
    case 5:
    case 12: return Val::variant(c, id_text());
    case 6: {
      const Val id = Val::u32(r.u32());
      const Val tmpl = Val::u16(r.u16());
      return Val::variant(c, Val::record({id, tmpl, Val::u16(r.u16())}));
    }
    case 11: {
      const Val id = Val::u32(r.u32());
      const Val name = Val::u16(r.u16());
      Val ns = r.ns();
      const uint8_t kind = r.u8();
      Val value;
      switch (kind) {
        case 0: value = Val::variant(0, r.text()); break;
        case 1: {
          const uint64_t bits = r.u64();
          double d;
          std::memcpy(&d, &bits, sizeof d);
          value = Val::variant(1, Val::f64(d));
          break;
        }
        case 2: value = Val::variant(2, Val::s64(static_cast<int64_t>(r.u64()))); break;
        case 3: value = Val::variant(3, r.boolean()); break;
        case 4: value = Val::variant(4); break;
        default: throw std::runtime_error("attr-value kind " + std::to_string(kind));
      }
      return Val::variant(c, Val::record({id, name, std::move(ns), std::move(value)}));
    }
    default: return Val::variant(c, listener());  // 13, 14
  }
}

uint32_t le32(std::span<const uint8_t> b) { return b[0] | b[1] << 8 | b[2] << 16 | uint32_t{b[3]} << 24; }

// Frames back to back, each `frame-len, strings-len, strings, ops`.
Val decode_batch(std::span<const uint8_t> bytes) {
  std::vector<Val> ops;
  while (!bytes.empty()) {
    if (bytes.size() < 8) throw std::runtime_error("frame header cut short");
    const uint32_t frame_len = le32(bytes), strings_len = le32(bytes.subspan(4));
    if (frame_len < 8 || frame_len > bytes.size() || strings_len > frame_len - 8)
      throw std::runtime_error("frame lengths out of range");
    FrameReader r(bytes.subspan(8 + strings_len, frame_len - 8 - strings_len), bytes.subspan(8, strings_len));
    while (!r.done()) ops.push_back(decode_operation(r));
    if (!r.strings_used()) throw std::runtime_error("string segment not used up");
    bytes = bytes.subspan(frame_len);
  }
  return Val::list(std::move(ops));
}

std::vector<uint8_t> bytes_of(const Val& list) {
  if (list.is_packed()) return {list.packed_bytes().begin(), list.packed_bytes().end()};
  std::vector<uint8_t> out;
  for (size_t i = 0; i < list.list_size(); ++i) out.push_back(list.list_element(i).as_u8());
  return out;
}

// ---- The benchmark's lanes, value by value ----

// Rebuilds every operation a lane delivers as the Val of its case.
class ValRecorder final : public bench::boundary::Sink {
 public:
  std::vector<Val> ops;
  Val list() { return Val::list(std::move(ops)); }

  void cache_string(uint16_t id, std::string_view str) override {
    add(0, Val::record({Val::u16(id), Val::string(str)}));
  }
  void register_template(uint16_t id, std::span<const bench::boundary::TemplateNode> nodes,
                         std::span<const uint32_t> roots) override {
    using bench::boundary::TemplateNode;
    std::vector<Val> out;
    for (const TemplateNode& n : nodes) {
      if (n.kind == TemplateNode::Text) {
        out.push_back(Val::variant(1, Val::string(n.text)));
      } else if (n.kind == TemplateNode::Dynamic) {
        out.push_back(Val::variant(2));
      } else {
        std::vector<Val> attrs;
        for (const auto& a : n.attrs) attrs.push_back(Val::record({Val::u16(a.name), ns(a.ns), Val::string(a.value)}));
        out.push_back(Val::variant(0, Val::record({Val::u16(n.tag), ns(n.ns), Val::list(std::move(attrs)),
                                                   u32s({n.children.begin(), n.children.end()})})));
      }
    }
    add(1, Val::record({Val::u16(id), Val::list(std::move(out)), u32s({roots.begin(), roots.end()})}));
  }
  void append_children(uint32_t id, uint32_t m) override { add(2, pair(id, m)); }
  void assign_id(std::span<const uint8_t> path, uint32_t id) override {
    add(3, Val::record({Val::bytes(path), Val::u32(id)}));
  }
  void create_placeholder(uint32_t id) override { add(4, Val::u32(id)); }
  void create_text_node(uint32_t id, std::string_view text) override {
    add(5, Val::record({Val::u32(id), Val::string(text)}));
  }
  void load_template(uint32_t id, uint16_t tmpl, uint16_t root) override {
    add(6, Val::record({Val::u32(id), Val::u16(tmpl), Val::u16(root)}));
  }
  void replace_with(uint32_t id, uint32_t m) override { add(7, pair(id, m)); }
  void replace_placeholder(std::span<const uint8_t> path, uint32_t m) override {
    add(8, Val::record({Val::bytes(path), Val::u32(m)}));
  }
  void insert_after(uint32_t id, uint32_t m) override { add(9, pair(id, m)); }
  void insert_before(uint32_t id, uint32_t m) override { add(10, pair(id, m)); }
  void set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> n,
                     const bench::boundary::AttrValue& value) override {
    using bench::boundary::AttrKind;
    Val v;
    switch (value.kind) {
      case AttrKind::Text: v = Val::variant(0, Val::string(value.text)); break;
      case AttrKind::Float: v = Val::variant(1, Val::f64(value.number)); break;
      case AttrKind::Int: v = Val::variant(2, Val::s64(value.integer)); break;
      case AttrKind::Boolean: v = Val::variant(3, Val::bool_(value.boolean)); break;
      case AttrKind::None: v = Val::variant(4); break;
    }
    add(11, Val::record({Val::u32(id), Val::u16(name), ns(n), std::move(v)}));
  }
  void set_text(uint32_t id, std::string_view text) override {
    add(12, Val::record({Val::u32(id), Val::string(text)}));
  }
  void new_event_listener(uint32_t id, uint16_t name, bool bubbles) override { add(13, listener(id, name, bubbles)); }
  void remove_event_listener(uint32_t id, uint16_t name, bool bubbles) override {
    add(14, listener(id, name, bubbles));
  }
  void remove(uint32_t id) override { add(15, Val::u32(id)); }
  void push_root(uint32_t id) override { add(16, Val::u32(id)); }

 private:
  void add(uint32_t c, Val payload) { ops.push_back(Val::variant(c, std::move(payload))); }
  static Val ns(std::optional<uint16_t> v) { return v ? Val::some(Val::u16(*v)) : Val::none(); }
  static Val pair(uint32_t id, uint32_t m) { return Val::record({Val::u32(id), Val::u32(m)}); }
  static Val listener(uint32_t id, uint16_t name, bool bubbles) {
    return Val::record({Val::u32(id), Val::u16(name), Val::bool_(bubbles)});
  }
};

// ---- The guest ----

class BoundaryGuest : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, CMHOST_BOUNDARY_GUEST);
  Store store{engine};
  Instance instance = Linker().instantiate(store, component);

  Val call(std::string_view name, std::vector<Val> args = {}) {
    auto results = instance.func(name).call(store, args);
    EXPECT_EQ(results.size(), name.starts_with("prepare") ? 0u : 1u) << name;
    return results.empty() ? Val() : std::move(results[0]);
  }

  // Equal lists, and on a difference the first differing operation in WAVE.
  static void expect_same(const Val& got, const Val& want, const std::string& what) {
    ASSERT_EQ(got.list_size(), want.list_size()) << what;
    if (got == want) return;
    for (size_t i = 0; i < want.list_size(); ++i) {
      const Val g = got.list_element(i), w = want.list_element(i);
      ASSERT_EQ(g, w) << "operation " << i << " of " << what << ": got " << to_wave(*bench::operation_type(), g)
                      << ", want " << to_wave(*bench::operation_type(), w);
    }
  }
  static void expect_batch(const Val& got, uint32_t rows) {
    ASSERT_EQ(got.list_size(), 7u + 8u * rows);
    expect_same(got, bench::build_operations(rows), std::to_string(rows) + " rows");
  }
  static void expect_bytes(const Val& got, uint32_t rows) {
    const auto bytes = bytes_of(got);
    Val decoded;
    ASSERT_NO_THROW(decoded = decode_batch(bytes)) << rows << " rows";
    expect_batch(decoded, rows);
  }
  // What the benchmark's byte decoder delivers from `bytes`, and its Val
  // walker from `typed`, as operation Vals.
  static Val byte_lane(const Val& bytes) {
    const auto b = bytes_of(bytes);
    ValRecorder recorder;
    const uint64_t delivered = bench::boundary::decode_bytes(b, recorder);
    EXPECT_EQ(delivered, recorder.ops.size());
    return recorder.list();
  }
  static Val val_lane(const Val& typed) {
    ValRecorder recorder;
    bench::boundary::deliver_vals(typed, recorder);
    return recorder.list();
  }
};

TEST_F(BoundaryGuest, ExportsTheBenchmarkWorld) {
  const auto operations = abi::Type::list(bench::operation_type());
  for (const char* name : {"take-typed", "build-typed"}) {
    const auto& result = instance.func(name).type().result;
    ASSERT_TRUE(result) << name;
    EXPECT_TRUE(abi::equal(*result, *operations)) << name << ": " << result->to_wit();
  }
  for (const char* name : {"take-bytes", "build-bytes"})
    EXPECT_TRUE(abi::equal(*instance.func(name).type().result, *abi::Type::list(abi::Type::u8()))) << name;
  EXPECT_FALSE(instance.func("prepare").type().result);
  // The layout the guest's C structs are checked against (glue.c).
  const auto& layout = bench::operation_type()->layout(abi::AddrWidth::I32);
  EXPECT_EQ(layout.size, 40u);
  EXPECT_EQ(layout.align, 8u);
}

TEST_F(BoundaryGuest, BuiltTypedIsTheHostBatch) {
  for (uint32_t rows : {0u, 1u, 10u, 1000u}) expect_batch(call("build-typed", {Val::u32(rows)}), rows);
}

TEST_F(BoundaryGuest, BuiltBytesDecodeToTheHostBatch) {
  for (uint32_t rows : {0u, 1u, 10u, 1000u}) expect_bytes(call("build-bytes", {Val::u32(rows)}), rows);
}

TEST_F(BoundaryGuest, PreparedBatchesAreTakenAsOftenAsAsked) {
  EXPECT_EQ(call("take-typed").list_size(), 0u);  // nothing prepared yet
  EXPECT_EQ(call("take-bytes").list_size(), 0u);
  call("prepare", {Val::u32(10)});
  for (int i = 0; i < 2; ++i) {
    expect_batch(call("take-typed"), 10);
    expect_bytes(call("take-bytes"), 10);
  }
  // Building in between leaves the prepared batch alone (post-return frees
  // only what the call built); a new prepare replaces it.
  expect_batch(call("build-typed", {Val::u32(3)}), 3);
  expect_bytes(call("build-bytes", {Val::u32(3)}), 3);
  expect_batch(call("take-typed"), 10);
  call("prepare", {Val::u32(1000)});
  expect_batch(call("take-typed"), 1000);
  expect_bytes(call("take-bytes"), 1000);
}

TEST_F(BoundaryGuest, CoverageBatchIsTheHostBatch) {
  call("prepare-coverage");
  const Val want = bench::build_coverage_operations();
  expect_same(call("take-typed"), want, "the coverage batch");
  Val decoded;
  ASSERT_NO_THROW(decoded = decode_batch(bytes_of(call("take-bytes"))));
  expect_same(decoded, want, "the coverage batch's bytes");
  // It holds every case, every attribute value kind, and a text past the
  // byte protocol's short form.
  std::set<uint32_t> cases, attr_kinds;
  size_t longest = 0;
  for (size_t i = 0; i < want.list_size(); ++i) {
    const Val op = want.list_element(i);
    cases.insert(op.case_index());
    if (op.case_index() == 11) attr_kinds.insert(op.payload()->items()[3].case_index());
    if (op.case_index() == 5) longest = std::max(longest, op.payload()->items()[1].as_string().size());
  }
  EXPECT_EQ(cases.size(), 17u);
  EXPECT_EQ(attr_kinds.size(), 5u);
  EXPECT_GT(longest, 0xffffu);
  // A new prepare replaces it.
  call("prepare", {Val::u32(3)});
  expect_batch(call("take-typed"), 3);
}

// The benchmark's own byte decoder and Val walker deliver every value of the
// batch they read: the coverage batch, and batches of the sweep.
TEST_F(BoundaryGuest, BenchmarkDecodersDeliverEveryValue) {
  call("prepare-coverage");
  const Val coverage = bench::build_coverage_operations();
  expect_same(byte_lane(call("take-bytes")), coverage, "the coverage batch (byte decoder)");
  expect_same(val_lane(call("take-typed")), coverage, "the coverage batch (Val walker)");
  for (uint32_t rows : {0u, 1u, 10u, 1000u}) {
    call("prepare", {Val::u32(rows)});
    expect_batch(byte_lane(call("take-bytes")), rows);
    expect_batch(val_lane(call("take-typed")), rows);
  }
}

TEST(BoundaryProtocol, BenchmarkDecoderRejectsMalformedFrames) {
  const std::pair<std::vector<uint8_t>, const char*> cases[] = {
      {{9, 0, 0, 0, 0, 0, 0, 0, 0}, "unknown opcode"},
      {{16, 0, 0, 0, 0, 0, 0, 0}, "malformed frame header"},  // longer than the list
      {{15, 0, 0, 0, 0, 0, 0, 0, 13, 1, 0, 0, 0, 1, 0}, "text runs past the string segment"},
      {{8, 0, 0, 0, 0, 0, 0}, "truncated frame header"},
      {{9, 0, 0, 0, 0, 0, 0, 0, 18}, "unknown opcode"},
      {{10, 0, 0, 0, 1, 0, 0, 0, 'x', 16}, "operation runs past the op segment"},
      {{14, 0, 0, 0, 1, 0, 0, 0, 'x', 5, 1, 0, 0, 0}, "texts do not use up the string segment"},
  };
  for (const auto& [bytes, message] : cases) {
    ValRecorder sink;
    try {
      bench::boundary::decode_bytes(bytes, sink);
      ADD_FAILURE() << "accepted a frame that should fail with: " << message;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST_F(BoundaryGuest, RepeatedBuildsReuseTheGuestHeap) {
  // Post-return frees each batch: a heap that kept them, or freed one twice,
  // would trap or run out long before this ends.
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(call("build-typed", {Val::u32(1000)}).list_size(), 8007u);
    EXPECT_EQ(call("build-bytes", {Val::u32(1000)}).list_size(), 87738u);
  }
  expect_batch(call("build-typed", {Val::u32(100)}), 100);
}

TEST_F(BoundaryGuest, ByteSizes) {
  // PROTOCOL.md quotes these: a 102-byte prelude of ops and 46 of strings,
  // then 66 bytes of ops per row (68 with "danger") plus its texts.
  const auto frame = bytes_of(call("build-bytes", {Val::u32(1000)}));
  ASSERT_EQ(frame.size(), 87738u);
  EXPECT_EQ(le32(frame), 87738u);
  EXPECT_EQ(le32(std::span<const uint8_t>(frame).subspan(4)), 21428u);
  EXPECT_EQ(bytes_of(call("build-bytes", {Val::u32(0)})).size(), 8u + 46u + 102u);
}

// The decoder reads what PROTOCOL.md says for the cases the guest never
// sends: several frames, long texts, every attribute value kind.
TEST(BoundaryProtocol, DecoderFollowsTheDocument) {
  std::vector<uint8_t> b;
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(uint8_t(v >> (8 * i)));
  };
  auto u8 = [&](uint8_t v) { le(v, 1); };
  auto u16 = [&](uint16_t v) { le(v, 2); };
  auto u32 = [&](uint32_t v) { le(v, 4); };
  auto u64 = [&](uint64_t v) { le(v, 8); };
  const std::string long_text(70000, 'y');
  // Frame 1: create-text-node with a long text, set-attribute float / int / bool.
  u32(0), u32(uint32_t(1 + long_text.size()));
  b.push_back('x'), b.insert(b.end(), long_text.begin(), long_text.end());
  u8(6), u32(7), u16(1);
  u8(6), u32(8), u16(0xffff), u32(uint32_t(long_text.size()));
  double half = 0.5;
  uint64_t half_bits;
  std::memcpy(&half_bits, &half, 8);
  u8(12), u32(1), u16(2), u16(3), u8(1), u64(half_bits);
  u8(12), u32(1), u16(2), u16(0xffff), u8(2), u64(uint64_t(-5));
  u8(12), u32(1), u16(2), u16(0xffff), u8(3), u8(1);
  const auto first = uint32_t(b.size());
  b[0] = uint8_t(first), b[1] = uint8_t(first >> 8), b[2] = uint8_t(first >> 16), b[3] = uint8_t(first >> 24);
  // Frame 2: no strings; replace-placeholder, remove-event-listener, remove, push-root.
  u32(8 + 9 + 8 + 5 + 5), u32(0);
  u8(9), u8(3), u8(0), u8(1), u8(2), u32(4);
  u8(15), u32(9), u16(5), u8(0);
  u8(16), u32(10);
  u8(17), u32(11);

  const Val ops = decode_batch(b);
  const std::vector<Val> want = {
      Val::variant(5, Val::record({Val::u32(7), Val::string("x")})),
      Val::variant(5, Val::record({Val::u32(8), Val::string(long_text)})),
      Val::variant(11, Val::record({Val::u32(1), Val::u16(2), Val::some(Val::u16(3)), Val::variant(1, Val::f64(0.5))})),
      Val::variant(11, Val::record({Val::u32(1), Val::u16(2), Val::none(), Val::variant(2, Val::s64(-5))})),
      Val::variant(11, Val::record({Val::u32(1), Val::u16(2), Val::none(), Val::variant(3, Val::bool_(true))})),
      Val::variant(8, Val::record({Val::bytes(std::vector<uint8_t>{0, 1, 2}), Val::u32(4)})),
      Val::variant(14, Val::record({Val::u32(9), Val::u16(5), Val::bool_(false)})),
      Val::variant(15, Val::u32(10)),
      Val::variant(16, Val::u32(11)),
  };
  EXPECT_EQ(ops, Val::list(want));
  // Malformed: bytes after the last frame, an unknown opcode, a frame longer
  // than the list, a text past the string segment.
  b.push_back(0);
  EXPECT_THROW(decode_batch(b), std::runtime_error);
  EXPECT_THROW(decode_batch(std::vector<uint8_t>{9, 0, 0, 0, 0, 0, 0, 0, 0}), std::runtime_error);
  EXPECT_THROW(decode_batch(std::vector<uint8_t>{16, 0, 0, 0, 0, 0, 0, 0}), std::runtime_error);
  EXPECT_THROW(decode_batch(std::vector<uint8_t>{15, 0, 0, 0, 0, 0, 0, 0, 13, 1, 0, 0, 0, 1, 0}), std::runtime_error);
}

}  // namespace
}  // namespace cmhost
