#include "sink.hpp"

namespace cmhost::bench::boundary {

std::string Checksum::to_string() const {
  std::string out = "calls [";
  for (size_t i = 0; i < calls.size(); ++i) out += (i ? " " : "") + std::to_string(calls[i]);
  return out + "], numbers " + std::to_string(numbers) + ", text bytes " + std::to_string(text_bytes);
}

void TemplateBuilder::deliver(uint16_t id, Sink& sink) {
  out_.clear();
  for (const Pending& n : nodes_)
    out_.push_back({n.kind, n.tag, n.ns, std::span(attrs_).subspan(n.first_attr, n.attr_count),
                    std::span(children_).subspan(n.first_child, n.child_count), n.text});
  sink.register_template(id, out_, roots_);
}

void ChecksumSink::cache_string(uint16_t id, std::string_view str) {
  ++sum.calls[0];
  sum.numbers += id;
  sum.text_bytes += str.size();
}

void ChecksumSink::register_template(uint16_t id, std::span<const TemplateNode> nodes, std::span<const uint32_t> roots) {
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

void ChecksumSink::load_template(uint32_t id, uint16_t tmpl, uint16_t root) {
  ++sum.calls[6];
  sum.numbers += uint64_t{id} + tmpl + root;
}

void ChecksumSink::set_attribute(uint32_t id, uint16_t name, std::optional<uint16_t> ns, const AttrValue& value) {
  ++sum.calls[11];
  sum.numbers += uint64_t{id} + name + ns.value_or(0) + static_cast<uint8_t>(value.kind);
  switch (value.kind) {
    case AttrKind::Text: sum.text_bytes += value.text.size(); break;
    case AttrKind::Float: sum.numbers += static_cast<uint64_t>(value.number); break;
    case AttrKind::Int: sum.numbers += static_cast<uint64_t>(value.integer); break;
    case AttrKind::Boolean: sum.numbers += value.boolean; break;
    case AttrKind::None: break;
  }
}

}  // namespace cmhost::bench::boundary
