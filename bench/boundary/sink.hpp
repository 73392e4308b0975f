// What every lane of the boundary benchmark delivers its operations to: one
// method per case of `operation`, operands as arguments. The checksum sink
// proves the lanes saw the same batch.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cmhost::bench::boundary {

// A template node in the one form all lanes can produce: texts are views
// into whatever the lane read from, children are node numbers.
struct TemplateAttr {
  uint16_t name;
  std::optional<uint16_t> ns;
  std::string_view value;
};
struct TemplateNode {
  enum Kind : uint8_t { Element, Text, Dynamic } kind;
  uint16_t tag = 0;
  std::optional<uint16_t> ns;
  std::span<const TemplateAttr> attrs;
  std::span<const uint32_t> children;
  std::string_view text;
};

enum class AttrKind : uint8_t { Text, Float, Int, Boolean, None };
struct AttrValue {
  AttrKind kind = AttrKind::None;
  std::string_view text = {};
  double number = 0;
  int64_t integer = 0;
  bool boolean = false;
};

class Sink;

// Assembles a template's nodes in the sink's form. Its buffers are kept from
// one batch to the next, so delivering a template allocates nothing.
class TemplateBuilder {
 public:
  void start() { nodes_.clear(), attrs_.clear(), children_.clear(), roots_.clear(); }
  // A new node; an element's attributes follow with attr().
  uint32_t element(uint16_t tag, std::optional<uint16_t> ns) {
    return add({TemplateNode::Element, tag, ns, attrs_.size(), 0, 0, 0, {}});
  }
  uint32_t text(std::string_view text) { return add({TemplateNode::Text, 0, std::nullopt, 0, 0, 0, 0, text}); }
  uint32_t dynamic() { return add({TemplateNode::Dynamic, 0, std::nullopt, 0, 0, 0, 0, {}}); }
  void attr(uint16_t name, std::optional<uint16_t> ns, std::string_view value) {
    attrs_.push_back({name, ns, value});
    ++nodes_.back().attr_count;
  }
  void child(uint32_t node, uint32_t child) {  // a node's children come one after another
    Pending& n = nodes_[node];
    if (n.child_count == 0) n.first_child = children_.size();
    children_.push_back(child);
    ++n.child_count;
  }
  void root(uint32_t node) { roots_.push_back(node); }
  void deliver(uint16_t id, Sink& sink);

 private:
  struct Pending {
    TemplateNode::Kind kind;
    uint16_t tag;
    std::optional<uint16_t> ns;
    size_t first_attr, attr_count, first_child, child_count;
    std::string_view text;
  };
  uint32_t add(const Pending& n) {
    nodes_.push_back(n);
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  std::vector<Pending> nodes_;
  std::vector<TemplateAttr> attrs_;
  std::vector<uint32_t> children_, roots_;
  std::vector<TemplateNode> out_;
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void cache_string(uint16_t id, std::string_view str) = 0;
  virtual void register_template(uint16_t id, std::span<const TemplateNode> nodes, std::span<const uint32_t> roots) = 0;
  virtual void append_children(uint32_t id, uint32_t m) = 0;
  virtual void assign_id(std::span<const uint8_t> path, uint32_t id) = 0;
  virtual void create_placeholder(uint32_t id) = 0;
  virtual void create_text_node(uint32_t id, std::string_view text) = 0;
  virtual void load_template(uint32_t id, uint16_t tmpl, uint16_t root) = 0;
  virtual void replace_with(uint32_t id, uint32_t m) = 0;
  virtual void replace_placeholder(std::span<const uint8_t> path, uint32_t m) = 0;
  virtual void insert_after(uint32_t id, uint32_t m) = 0;
  virtual void insert_before(uint32_t id, uint32_t m) = 0;
  virtual void set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) = 0;
  virtual void set_text(uint32_t id, std::string_view text) = 0;
  virtual void new_event_listener(uint32_t id, uint16_t name, bool bubbles) = 0;
  virtual void remove_event_listener(uint32_t id, uint16_t name, bool bubbles) = 0;
  virtual void remove(uint32_t id) = 0;
  virtual void push_root(uint32_t id) = 0;
};

// What the timed rounds deliver to: calls per case, the sum of every id and
// number, the sizes of texts. Cheap, so that it weighs little on the lanes
// it times (for the batches it times, which carry no floats, the same sums
// as in the first recorded runs, so ratios stay comparable); whether the
// lanes deliver the same values is DigestSink's job.
struct Tally {
  std::array<uint64_t, 17> calls{};
  uint64_t numbers = 0;
  uint64_t text_bytes = 0;
};

class TallySink final : public Sink {
 public:
  Tally sum;
  void cache_string(uint16_t id, std::string_view str) override { text_op(0, id, str); }
  void register_template(uint16_t id, std::span<const TemplateNode> nodes, std::span<const uint32_t> roots) override;
  void append_children(uint32_t id, uint32_t m) override { stack(2, id, m); }
  void assign_id(std::span<const uint8_t> path, uint32_t id) override { path_op(3, path, id); }
  void create_placeholder(uint32_t id) override { one(4, id); }
  void create_text_node(uint32_t id, std::string_view text) override { text_op(5, id, text); }
  void load_template(uint32_t id, uint16_t tmpl, uint16_t root) override;
  void replace_with(uint32_t id, uint32_t m) override { stack(7, id, m); }
  void replace_placeholder(std::span<const uint8_t> path, uint32_t m) override { path_op(8, path, m); }
  void insert_after(uint32_t id, uint32_t m) override { stack(9, id, m); }
  void insert_before(uint32_t id, uint32_t m) override { stack(10, id, m); }
  void set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) override;
  void set_text(uint32_t id, std::string_view text) override { text_op(12, id, text); }
  void new_event_listener(uint32_t id, uint16_t name, bool bubbles) override { listener(13, id, name, bubbles); }
  void remove_event_listener(uint32_t id, uint16_t name, bool bubbles) override { listener(14, id, name, bubbles); }
  void remove(uint32_t id) override { one(15, id); }
  void push_root(uint32_t id) override { one(16, id); }

 private:
  void one(int c, uint32_t id) {
    ++sum.calls[c];
    sum.numbers += id;
  }
  void stack(int c, uint32_t id, uint32_t m) {
    ++sum.calls[c];
    sum.numbers += uint64_t{id} + m;
  }
  void path_op(int c, std::span<const uint8_t> path, uint32_t n) {
    ++sum.calls[c];
    sum.numbers += n + path.size();
    for (uint8_t b : path) sum.numbers += b;
  }
  void text_op(int c, uint32_t id, std::string_view text) {
    ++sum.calls[c];
    sum.numbers += id;
    sum.text_bytes += text.size();
  }
  void listener(int c, uint32_t id, uint16_t name, bool bubbles) {
    ++sum.calls[c];
    sum.numbers += uint64_t{id} + name + bubbles;
  }
};

// Calls per case and a 64-bit FNV-1a hash of every operand in order: every
// number, every text byte, every float bit (the same stream as
// jco_lane.mjs's DigestSink). One byte or bit delivered differently changes
// the hash, so equal digests mean the lanes delivered the same values.
struct Digest {
  std::array<uint64_t, 17> calls{};
  uint64_t hash = 0xcbf29ce484222325;
  bool operator==(const Digest&) const = default;
  uint64_t operations() const;
  std::string to_string() const;
};

class DigestSink final : public Sink {
 public:
  Digest digest;
  void cache_string(uint16_t id, std::string_view str) override;
  void register_template(uint16_t id, std::span<const TemplateNode> nodes, std::span<const uint32_t> roots) override;
  void append_children(uint32_t id, uint32_t m) override { numbers(2, {id, m}); }
  void assign_id(std::span<const uint8_t> path, uint32_t id) override;
  void create_placeholder(uint32_t id) override { numbers(4, {id}); }
  void create_text_node(uint32_t id, std::string_view text) override { id_text(5, id, text); }
  void load_template(uint32_t id, uint16_t tmpl, uint16_t root) override { numbers(6, {id, tmpl, root}); }
  void replace_with(uint32_t id, uint32_t m) override { numbers(7, {id, m}); }
  void replace_placeholder(std::span<const uint8_t> path, uint32_t m) override;
  void insert_after(uint32_t id, uint32_t m) override { numbers(9, {id, m}); }
  void insert_before(uint32_t id, uint32_t m) override { numbers(10, {id, m}); }
  void set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) override;
  void set_text(uint32_t id, std::string_view text) override { id_text(12, id, text); }
  void new_event_listener(uint32_t id, uint16_t name, bool bubbles) override { numbers(13, {id, name, bubbles}); }
  void remove_event_listener(uint32_t id, uint16_t name, bool bubbles) override { numbers(14, {id, name, bubbles}); }
  void remove(uint32_t id) override { numbers(15, {id}); }
  void push_root(uint32_t id) override { numbers(16, {id}); }

 private:
  void begin(uint8_t c) {
    ++digest.calls[c];
    byte(c);
  }
  void byte(uint8_t b) { digest.hash = (digest.hash ^ b) * 0x100000001b3; }
  void integer(uint64_t v) {  // 8 bytes, little-endian
    for (int i = 0; i < 8; ++i) byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void text(std::string_view s);
  void bytes(std::span<const uint8_t> b);
  void option(std::optional<uint16_t> v) {
    integer(v.has_value());
    integer(v.value_or(0));
  }
  void numbers(uint8_t c, std::initializer_list<uint64_t> values) {
    begin(c);
    for (uint64_t v : values) integer(v);
  }
  void id_text(uint8_t c, uint32_t id, std::string_view s) {
    begin(c);
    integer(id);
    text(s);
  }
};

// Forwards to another sink, but delivers the first non-empty text with its
// first byte changed, or the first float attribute with its lowest bit
// flipped: how the benchmark's tests show that the digests catch a lane that
// mis-decodes one byte or one bit.
enum class Corruption { Text, Float };

class CorruptingSink final : public Sink {
 public:
  CorruptingSink(Sink& inner, Corruption what) : inner_(inner), what_(what) {}
  void cache_string(uint16_t id, std::string_view str) override { inner_.cache_string(id, text(str)); }
  void register_template(uint16_t id, std::span<const TemplateNode> nodes, std::span<const uint32_t> roots) override {
    inner_.register_template(id, nodes, roots);
  }
  void append_children(uint32_t id, uint32_t m) override { inner_.append_children(id, m); }
  void assign_id(std::span<const uint8_t> path, uint32_t id) override { inner_.assign_id(path, id); }
  void create_placeholder(uint32_t id) override { inner_.create_placeholder(id); }
  void create_text_node(uint32_t id, std::string_view t) override { inner_.create_text_node(id, text(t)); }
  void load_template(uint32_t id, uint16_t tmpl, uint16_t root) override { inner_.load_template(id, tmpl, root); }
  void replace_with(uint32_t id, uint32_t m) override { inner_.replace_with(id, m); }
  void replace_placeholder(std::span<const uint8_t> path, uint32_t m) override { inner_.replace_placeholder(path, m); }
  void insert_after(uint32_t id, uint32_t m) override { inner_.insert_after(id, m); }
  void insert_before(uint32_t id, uint32_t m) override { inner_.insert_before(id, m); }
  void set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) override;
  void set_text(uint32_t id, std::string_view t) override { inner_.set_text(id, text(t)); }
  void new_event_listener(uint32_t id, uint16_t name, bool bubbles) override {
    inner_.new_event_listener(id, name, bubbles);
  }
  void remove_event_listener(uint32_t id, uint16_t name, bool bubbles) override {
    inner_.remove_event_listener(id, name, bubbles);
  }
  void remove(uint32_t id) override { inner_.remove(id); }
  void push_root(uint32_t id) override { inner_.push_root(id); }

 private:
  std::string_view text(std::string_view t);
  Sink& inner_;
  Corruption what_;
  bool done_ = false;
  std::string changed_;
};

}  // namespace cmhost::bench::boundary
