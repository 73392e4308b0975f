// Hands one operation of either family to the sink: case I's payload
// becomes the sink method's arguments.
#pragma once

#include <span>

#include "operations.hpp"
#include "sink.hpp"

namespace cmhost::bench::boundary {

template <class S>
std::string_view text_of(const S& s) {
  return std::string_view(s);
}

template <class L>
std::span<const uint8_t> bytes_of(const L& list) {
  if constexpr (requires { list.data(); }) {
    return {list.data(), list.size()};
  } else {  // a ListView<uint8_t>: the bytes are contiguous in guest memory
    if (list.empty()) return {};
    return {list.reader().at(list.address(0)), list.size()};
  }
}

template <class V>
AttrValue attr_value(const V& v) {
  switch (v.index()) {
    case 0: return {AttrKind::Text, text_of(std::get<0>(v))};
    case 1: return {AttrKind::Float, {}, std::get<1>(v)};
    case 2: return {AttrKind::Int, {}, 0, std::get<2>(v)};
    case 3: return {AttrKind::Boolean, {}, 0, 0, std::get<3>(v)};
    default: return {AttrKind::None};
  }
}

// The template in the sink's shared form.
template <class F>
void deliver_template(const wit::RegisterTemplate<F>& t, Sink& sink) {
  std::vector<TemplateNode> nodes;
  nodes.reserve(t.nodes.size());
  for (const auto& n : t.nodes) {
    TemplateNode out{};
    switch (n.index()) {
      case 0: {
        const auto& e = std::get<0>(n);
        out.kind = TemplateNode::Element;
        out.tag = e.tag;
        out.ns = e.ns;
        for (const auto& a : e.attrs) out.attrs.push_back({a.name, a.ns, text_of(a.value)});
        for (uint32_t c : e.children) out.children.push_back(c);
        break;
      }
      case 1: out.kind = TemplateNode::Text, out.text = text_of(std::get<1>(n)); break;
      default: out.kind = TemplateNode::Dynamic; break;
    }
    nodes.push_back(std::move(out));
  }
  std::vector<uint32_t> roots;
  for (uint32_t r : t.roots) roots.push_back(r);
  sink.register_template(t.id, nodes, roots);
}

template <size_t I, class P>
void deliver(const P& p, Sink& sink) {
  if constexpr (I == 0) sink.cache_string(p.id, text_of(p.str));
  else if constexpr (I == 1) deliver_template(p, sink);
  else if constexpr (I == 2) sink.append_children(p.id, p.m);
  else if constexpr (I == 3) sink.assign_id(bytes_of(p.path), p.id);
  else if constexpr (I == 4) sink.create_placeholder(p);
  else if constexpr (I == 5) sink.create_text_node(p.id, text_of(p.text));
  else if constexpr (I == 6) sink.load_template(p.id, p.tmpl, p.root);
  else if constexpr (I == 7) sink.replace_with(p.id, p.m);
  else if constexpr (I == 8) sink.replace_placeholder(bytes_of(p.path), p.m);
  else if constexpr (I == 9) sink.insert_after(p.id, p.m);
  else if constexpr (I == 10) sink.insert_before(p.id, p.m);
  else if constexpr (I == 11) sink.set_attribute(p.id, p.name, p.ns, attr_value(p.value));
  else if constexpr (I == 12) sink.set_text(p.id, text_of(p.text));
  else if constexpr (I == 13) sink.new_event_listener(p.id, p.name, p.bubbles);
  else if constexpr (I == 14) sink.remove_event_listener(p.id, p.name, p.bubbles);
  else if constexpr (I == 15) sink.remove(p);
  else sink.push_root(p);
}

// An owning operation (typed and floor lanes).
template <class F>
void deliver(const wit::Operation<F>& op, Sink& sink) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((op.index() == I ? (deliver<I>(std::get<I>(op), sink), true) : false) || ...);
  }(std::make_index_sequence<17>{});
}

}  // namespace cmhost::bench::boundary
