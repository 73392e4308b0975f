// Hands one operation to the sink, from the hand-written families or the
// types `cmhost bindgen` generated (whose variant cases wrap their
// payloads): case I's payload becomes the sink method's arguments.
#pragma once

#include <array>
#include <span>

#include "boundary_frame.hpp"
#include "operations.hpp"
#include "sink.hpp"

namespace cmhost::bench::boundary {

namespace generated = cmhost_::bench::mutations;

// A case's payload: a generated case wraps it, a hand-written one is it.
template <class C>
const auto& payload(const C& c) {
  if constexpr (requires { typename C::case_payload; })
    return c.value;
  else
    return c;
}

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
    case 0: return {AttrKind::Text, text_of(payload(std::get<0>(v)))};
    case 1: return {AttrKind::Float, {}, payload(std::get<1>(v))};
    case 2: return {AttrKind::Int, {}, 0, payload(std::get<2>(v))};
    case 3: return {AttrKind::Boolean, {}, 0, 0, payload(std::get<3>(v))};
    default: return {AttrKind::None};
  }
}

// The template in the sink's shared form.
template <class T>
void deliver_template(const T& t, Sink& sink) {
  thread_local TemplateBuilder builder;
  builder.start();
  for (const auto& n : t.nodes) {
    switch (n.index()) {
      case 0: {
        const auto& e = payload(std::get<0>(n));
        const uint32_t node = builder.element(e.tag, e.ns);
        for (const auto& a : e.attrs) builder.attr(a.name, a.ns, text_of(a.value));
        for (uint32_t c : e.children) builder.child(node, c);
        break;
      }
      case 1: builder.text(text_of(payload(std::get<1>(n)))); break;
      default: builder.dynamic(); break;
    }
  }
  for (uint32_t r : t.roots) builder.root(r);
  builder.deliver(t.id, sink);
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

// An owning operation (typed and floor lanes), dispatched by a table on
// its index as the visitor lane's cases are.
template <class F>
void deliver(const wit::Operation<F>& op, Sink& sink) {
  using Op = wit::Operation<F>;
  static constexpr auto cases = []<size_t... I>(std::index_sequence<I...>) {
    return std::array<void (*)(const Op&, Sink&), sizeof...(I)>{
        [](const Op& op, Sink& sink) { deliver<I>(*std::get_if<I>(&op), sink); }...};
  }(std::make_index_sequence<std::variant_size_v<Op>>{});
  cases[op.index()](op, sink);
}

// A generated operation (the typed lane's), dispatched the same way.
inline void deliver(const generated::Operation& op, Sink& sink) {
  using Op = generated::Operation;
  static constexpr auto cases = []<size_t... I>(std::index_sequence<I...>) {
    return std::array<void (*)(const Op&, Sink&), sizeof...(I)>{
        [](const Op& op, Sink& sink) { deliver<I>(std::get_if<I>(&op)->value, sink); }...};
  }(std::make_index_sequence<std::variant_size_v<Op>>{});
  cases[op.index()](op, sink);
}

}  // namespace cmhost::bench::boundary
