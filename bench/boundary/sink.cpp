#include "sink.hpp"

#include <fmt/core.h>

#include <bit>

namespace cmhost::bench::boundary {

void TemplateBuilder::deliver(uint16_t id, Sink& sink) {
  out_.clear();
  for (const Pending& n : nodes_)
    out_.push_back({n.kind, n.tag, n.ns, std::span(attrs_).subspan(n.first_attr, n.attr_count),
                    std::span(children_).subspan(n.first_child, n.child_count), n.text});
  sink.register_template(id, out_, roots_);
}

void TallySink::register_template(uint16_t id, std::span<const TemplateNode> nodes, std::span<const uint32_t> roots) {
  ++sum.calls[1];
  sum.numbers += id + nodes.size();
  for (uint32_t r : roots) sum.numbers += r;
  for (const TemplateNode& n : nodes) {
    sum.numbers += n.kind + n.tag + n.ns.value_or(0) + n.attrs.size();
    for (uint32_t c : n.children) sum.numbers += c;
    for (const TemplateAttr& a : n.attrs) {
      sum.numbers += a.name + a.ns.value_or(0);
      sum.text_bytes += a.value.size();
    }
    sum.text_bytes += n.text.size();
  }
}

void TallySink::load_template(uint32_t id, uint16_t tmpl, uint16_t root) {
  ++sum.calls[6];
  sum.numbers += uint64_t{id} + tmpl + root;
}

void TallySink::set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) {
  ++sum.calls[11];
  sum.numbers += uint64_t{id} + name + ns.value_or(0) + static_cast<uint8_t>(value.kind);
  switch (value.kind) {
    case AttrKind::Text: sum.text_bytes += value.text.size(); break;
    case AttrKind::Float: sum.numbers += std::bit_cast<uint64_t>(value.number); break;
    case AttrKind::Int: sum.numbers += static_cast<uint64_t>(value.integer); break;
    case AttrKind::Boolean: sum.numbers += value.boolean; break;
    case AttrKind::None: break;
  }
}

uint64_t Digest::operations() const {
  uint64_t n = 0;
  for (uint64_t c : calls) n += c;
  return n;
}

std::string Digest::to_string() const {
  std::string out = "calls [";
  for (size_t i = 0; i < calls.size(); ++i) out += (i ? " " : "") + std::to_string(calls[i]);
  return out + fmt::format("], hash {:016x}", hash);
}

void DigestSink::text(std::string_view s) {
  integer(s.size());
  for (char c : s) byte(static_cast<uint8_t>(c));
}

void DigestSink::bytes(std::span<const uint8_t> b) {
  integer(b.size());
  for (uint8_t c : b) byte(c);
}

void DigestSink::cache_string(uint16_t id, std::string_view str) { id_text(0, id, str); }

void DigestSink::register_template(uint16_t id, std::span<const TemplateNode> nodes, std::span<const uint32_t> roots) {
  begin(1);
  integer(id);
  integer(nodes.size());
  for (const TemplateNode& n : nodes) {
    integer(n.kind);
    if (n.kind == TemplateNode::Element) {
      integer(n.tag);
      option(n.ns);
      integer(n.attrs.size());
      for (const TemplateAttr& a : n.attrs) {
        integer(a.name);
        option(a.ns);
        text(a.value);
      }
      integer(n.children.size());
      for (uint32_t c : n.children) integer(c);
    } else if (n.kind == TemplateNode::Text) {
      text(n.text);
    }
  }
  integer(roots.size());
  for (uint32_t r : roots) integer(r);
}

void DigestSink::assign_id(std::span<const uint8_t> path, uint32_t id) {
  begin(3);
  bytes(path);
  integer(id);
}

void DigestSink::replace_placeholder(std::span<const uint8_t> path, uint32_t m) {
  begin(8);
  bytes(path);
  integer(m);
}

void DigestSink::set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) {
  begin(11);
  integer(id);
  integer(name);
  option(ns);
  integer(static_cast<uint8_t>(value.kind));
  switch (value.kind) {
    case AttrKind::Text: text(value.text); break;
    case AttrKind::Float: integer(std::bit_cast<uint64_t>(value.number)); break;
    case AttrKind::Int: integer(static_cast<uint64_t>(value.integer)); break;
    case AttrKind::Boolean: integer(value.boolean); break;
    case AttrKind::None: break;
  }
}

std::string_view CorruptingSink::text(std::string_view t) {
  if (done_ || what_ != Corruption::Text || t.empty()) return t;
  done_ = true;
  changed_.assign(t);
  changed_[0] = static_cast<char>(changed_[0] ^ 1);
  return changed_;
}

void CorruptingSink::set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) {
  AttrValue v = value;
  if (v.kind == AttrKind::Text) v.text = text(v.text);
  if (v.kind == AttrKind::Float && what_ == Corruption::Float && !done_) {
    done_ = true;
    v.number = std::bit_cast<double>(std::bit_cast<uint64_t>(v.number) ^ 1);
  }
  inner_.set_attribute(id, name, ns, v);
}

}  // namespace cmhost::bench::boundary
