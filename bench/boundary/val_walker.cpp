#include "val_walker.hpp"

namespace cmhost::bench::boundary {
namespace {

using abi::Val;

std::optional<uint16_t> ns_of(const Val& option) {
  if (const Val* p = option.payload()) return p->as_u16();
  return std::nullopt;
}

std::span<const uint8_t> path_of(const Val& list) {
  const auto bytes = list.packed_bytes();
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

void deliver_template(const Val& t, Sink& sink) {
  thread_local TemplateBuilder builder;
  builder.start();
  const auto f = t.items();
  for (const Val& n : f[1].items()) {
    switch (n.case_index()) {
      case 0: {
        const auto e = n.payload()->items();
        const uint32_t node = builder.element(e[0].as_u16(), ns_of(e[1]));
        for (const Val& a : e[2].items()) {
          const auto af = a.items();
          builder.attr(af[0].as_u16(), ns_of(af[1]), af[2].as_string());
        }
        for (size_t i = 0; i < e[3].list_size(); ++i) builder.child(node, e[3].list_element(i).as_u32());
        break;
      }
      case 1: builder.text(n.payload()->as_string()); break;
      default: builder.dynamic(); break;
    }
  }
  for (size_t i = 0; i < f[2].list_size(); ++i) builder.root(f[2].list_element(i).as_u32());
  builder.deliver(f[0].as_u16(), sink);
}

AttrValue attr_value(const Val& v) {
  switch (v.case_index()) {
    case 0: return {AttrKind::Text, v.payload()->as_string()};
    case 1: return {AttrKind::Float, {}, v.payload()->as_f64()};
    case 2: return {AttrKind::Int, {}, 0, v.payload()->as_s64()};
    case 3: return {AttrKind::Boolean, {}, 0, 0, v.payload()->as_bool()};
    default: return {AttrKind::None};
  }
}

}  // namespace

void deliver_vals(const Val& operations, Sink& sink) {
  for (const Val& op : operations.items()) deliver_val(op, sink);
}

void deliver_val(const Val& op, Sink& sink) {
  {
    const Val& p = *op.payload();
    switch (op.case_index()) {
      case 0: sink.cache_string(p.items()[0].as_u16(), p.items()[1].as_string()); break;
      case 1: deliver_template(p, sink); break;
      case 2: sink.append_children(p.items()[0].as_u32(), p.items()[1].as_u32()); break;
      case 3: sink.assign_id(path_of(p.items()[0]), p.items()[1].as_u32()); break;
      case 4: sink.create_placeholder(p.as_u32()); break;
      case 5: sink.create_text_node(p.items()[0].as_u32(), p.items()[1].as_string()); break;
      case 6: sink.load_template(p.items()[0].as_u32(), p.items()[1].as_u16(), p.items()[2].as_u16()); break;
      case 7: sink.replace_with(p.items()[0].as_u32(), p.items()[1].as_u32()); break;
      case 8: sink.replace_placeholder(path_of(p.items()[0]), p.items()[1].as_u32()); break;
      case 9: sink.insert_after(p.items()[0].as_u32(), p.items()[1].as_u32()); break;
      case 10: sink.insert_before(p.items()[0].as_u32(), p.items()[1].as_u32()); break;
      case 11: {
        const auto f = p.items();
        sink.set_attribute(f[0].as_u32(), f[1].as_u16(), ns_of(f[2]), attr_value(f[3]));
        break;
      }
      case 12: sink.set_text(p.items()[0].as_u32(), p.items()[1].as_string()); break;
      case 13: sink.new_event_listener(p.items()[0].as_u32(), p.items()[1].as_u16(), p.items()[2].as_bool()); break;
      case 14: sink.remove_event_listener(p.items()[0].as_u32(), p.items()[1].as_u16(), p.items()[2].as_bool()); break;
      case 15: sink.remove(p.as_u32()); break;
      case 16: sink.push_root(p.as_u32()); break;
    }
  }
}

}  // namespace cmhost::bench::boundary
