#include "dom_batch.hpp"

#include <cstdint>
#include <string>

namespace cmhost::bench {

using abi::Type;
using abi::TypeRef;
using abi::Val;

TypeRef operation_type() {
  static const TypeRef op = [] {
    const auto str_ref = Type::u16();
    const auto element_id = Type::u32();
    const auto cache_string = Type::record({{"id", str_ref}, {"str", Type::string()}});
    const auto template_attr = Type::record(
        {{"name", str_ref}, {"ns", Type::option(str_ref)}, {"value", Type::string()}});
    const auto template_element = Type::record({{"tag", str_ref},
                                                {"ns", Type::option(str_ref)},
                                                {"attrs", Type::list(template_attr)},
                                                {"children", Type::list(Type::u32())}});
    const auto template_node = Type::variant(
        {{"element", template_element}, {"text", Type::string()}, {"dynamic", nullptr}});
    const auto register_template = Type::record({{"id", Type::u16()},
                                                 {"nodes", Type::list(template_node)},
                                                 {"roots", Type::list(Type::u32())}});
    const auto stack_op = Type::record({{"id", element_id}, {"m", Type::u32()}});
    const auto path_op = Type::record({{"path", Type::list(Type::u8())}, {"m", Type::u32()}});
    const auto assign_id = Type::record({{"path", Type::list(Type::u8())}, {"id", element_id}});
    const auto create_text_node = Type::record({{"id", element_id}, {"text", Type::string()}});
    const auto load_template =
        Type::record({{"id", element_id}, {"tmpl", Type::u16()}, {"root", Type::u16()}});
    const auto set_text = Type::record({{"id", element_id}, {"text", Type::string()}});
    const auto attr_value = Type::variant({{"text", Type::string()},
                                           {"float", Type::f64()},
                                           {"int", Type::s64()},
                                           {"boolean", Type::bool_()},
                                           {"none", nullptr}});
    const auto set_attribute = Type::record({{"id", element_id},
                                             {"name", str_ref},
                                             {"ns", Type::option(str_ref)},
                                             {"value", attr_value}});
    const auto event_listener =
        Type::record({{"id", element_id}, {"name", str_ref}, {"bubbles", Type::bool_()}});
    return Type::variant({
        {"cache-string", cache_string},
        {"register-template", register_template},
        {"append-children", stack_op},
        {"assign-id", assign_id},
        {"create-placeholder", element_id},
        {"create-text-node", create_text_node},
        {"load-template", load_template},
        {"replace-with", stack_op},
        {"replace-placeholder", path_op},
        {"insert-after", stack_op},
        {"insert-before", stack_op},
        {"set-attribute", set_attribute},
        {"set-text", set_text},
        {"new-event-listener", event_listener},
        {"remove-event-listener", event_listener},
        {"remove", element_id},
        {"push-root", element_id},
    });
  }();
  return op;
}

namespace {

enum Case : uint32_t {
  CacheString, RegisterTemplate, AppendChildren, AssignId, CreatePlaceholder, CreateTextNode,
  LoadTemplate, ReplaceWith, ReplacePlaceholder, InsertAfter, InsertBefore, SetAttribute, SetText,
  NewEventListener, RemoveEventListener, Remove, PushRoot,
};

const char* const kStrings[] = {"tr", "td", "a", "span", "class", "click"};
enum StrRef : uint16_t { Tr, Td, A, Span, Class, Click };

const char* const kAdjectives[] = {"pretty", "large", "big", "small", "tall", "short", "long",
                                   "handsome", "plain", "quaint", "clean", "elegant", "easy",
                                   "angry", "crazy", "helpful", "mushy", "odd", "unsightly",
                                   "adorable", "important", "inexpensive", "cheap", "expensive",
                                   "fancy"};
const char* const kColours[] = {"red", "yellow", "blue", "green", "pink", "brown",
                                "purple", "white", "black", "orange", "grey"};
const char* const kNouns[] = {"table", "chair", "house", "bbq", "desk", "car", "pony",
                              "cookie", "sandwich", "burger", "pizza", "mouse", "keyboard"};

Val op(Case c, Val payload) { return Val::variant(c, std::move(payload)); }
Val none() { return Val::none(); }
Val bytes(std::initializer_list<uint8_t> b) { return Val::bytes({b.begin(), b.size()}); }
Val u32s(std::initializer_list<uint32_t> v) {
  return Val::packed_list(abi::ValKind::U32, v.begin(), v.size());
}

Val element(StrRef tag, std::vector<Val> attrs, std::initializer_list<uint32_t> children) {
  return Val::variant(0, Val::record({Val::u16(tag), none(), Val::list(std::move(attrs)),
                                      u32s(children)}));
}

Val row_template() {
  // tr[td[text], td[a[dynamic]], td[span(class)[text]]], in pre-order.
  std::vector<Val> nodes;
  nodes.push_back(element(Tr, {}, {1, 3, 6}));
  nodes.push_back(element(Td, {}, {2}));
  nodes.push_back(Val::variant(1, Val::string("")));
  nodes.push_back(element(Td, {}, {4}));
  nodes.push_back(element(A, {}, {5}));
  nodes.push_back(Val::variant(2));
  nodes.push_back(element(Td, {}, {7}));
  std::vector<Val> attrs;
  attrs.push_back(Val::record({Val::u16(Class), none(), Val::string("glyphicon glyphicon-remove")}));
  nodes.push_back(element(Span, std::move(attrs), {8}));
  nodes.push_back(Val::variant(1, Val::string("x")));
  return Val::record({Val::u16(0), Val::list(std::move(nodes)), u32s({0})});
}

Val set_attribute(uint32_t id, Val ns, Val value) {
  return op(SetAttribute, Val::record({Val::u32(id), Val::u16(9), std::move(ns), std::move(value)}));
}

}  // namespace

Val build_coverage_operations() {
  std::string long_text;
  for (size_t i = 0; i < 70000 - 2; ++i) long_text += static_cast<char>('a' + i % 26);
  long_text += "\u00e9";
  std::vector<Val> nodes;
  std::vector<Val> attrs;
  attrs.push_back(Val::record({Val::u16(4), Val::some(Val::u16(0xfffe)), Val::string("\u00fc")}));
  attrs.push_back(Val::record({Val::u16(5), none(), Val::string("")}));
  nodes.push_back(Val::variant(0, Val::record({Val::u16(1), Val::some(Val::u16(2)), Val::list(std::move(attrs)),
                                               u32s({1, 2})})));
  nodes.push_back(Val::variant(1, Val::string("x\U0001F600")));
  nodes.push_back(Val::variant(2));
  nodes.push_back(Val::variant(0, Val::record({Val::u16(65535), none(), Val::list({}), u32s({})})));
  std::vector<Val> ops;
  ops.push_back(op(CacheString, Val::record({Val::u16(65535), Val::string("h\u00e9llo \u2603")})));
  ops.push_back(op(RegisterTemplate, Val::record({Val::u16(7), Val::list(std::move(nodes)), u32s({0, 3})})));
  ops.push_back(op(AppendChildren, Val::record({Val::u32(UINT32_MAX), Val::u32(1)})));
  ops.push_back(op(AssignId, Val::record({bytes({}), Val::u32(2)})));
  ops.push_back(op(AssignId, Val::record({bytes({0, 255, 7}), Val::u32(3)})));
  ops.push_back(op(CreatePlaceholder, Val::u32(123456789)));
  ops.push_back(op(CreateTextNode, Val::record({Val::u32(5), Val::string("")})));
  ops.push_back(op(CreateTextNode, Val::record({Val::u32(6), Val::string(std::move(long_text))})));
  ops.push_back(op(LoadTemplate, Val::record({Val::u32(9), Val::u16(65535), Val::u16(1)})));
  ops.push_back(op(ReplaceWith, Val::record({Val::u32(1), Val::u32(2)})));
  ops.push_back(op(ReplacePlaceholder, Val::record({bytes({3, 1, 4, 1, 5}), Val::u32(9)})));
  ops.push_back(op(InsertAfter, Val::record({Val::u32(3), Val::u32(4)})));
  ops.push_back(op(InsertBefore, Val::record({Val::u32(5), Val::u32(6)})));
  ops.push_back(set_attribute(10, Val::some(Val::u16(7)), Val::variant(0, Val::string("Gr\u00fc\u00dfe"))));
  ops.push_back(set_attribute(11, none(), Val::variant(1, Val::f64(-2.75))));
  ops.push_back(set_attribute(12, none(), Val::variant(1, Val::f64(0x1.0000000000001p-1000))));
  ops.push_back(set_attribute(13, none(), Val::variant(1, Val::f64(-0.0))));
  ops.push_back(set_attribute(14, none(), Val::variant(2, Val::s64(INT64_MIN))));
  ops.push_back(set_attribute(15, none(), Val::variant(2, Val::s64(123456789012345))));
  ops.push_back(set_attribute(16, none(), Val::variant(3, Val::bool_(true))));
  ops.push_back(set_attribute(17, none(), Val::variant(3, Val::bool_(false))));
  ops.push_back(set_attribute(18, Val::some(Val::u16(0)), Val::variant(4)));
  ops.push_back(op(SetText, Val::record({Val::u32(19), Val::string("\uFB01x \u2028")})));
  ops.push_back(op(NewEventListener, Val::record({Val::u32(20), Val::u16(8), Val::bool_(false)})));
  ops.push_back(op(RemoveEventListener, Val::record({Val::u32(20), Val::u16(8), Val::bool_(true)})));
  ops.push_back(op(Remove, Val::u32(21)));
  ops.push_back(op(PushRoot, Val::u32(0)));
  return Val::list(std::move(ops));
}

Val build_operations(uint32_t rows) {
  std::vector<Val> ops;
  ops.reserve(7 + size_t{8} * rows);
  for (uint16_t i = 0; i < 6; ++i)
    ops.push_back(op(CacheString, Val::record({Val::u16(i), Val::string(kStrings[i])})));
  ops.push_back(op(RegisterTemplate, row_template()));
  for (uint32_t row = 0; row < rows; ++row) {
    const uint32_t id = 1 + 3 * row;
    std::string label = std::string(kAdjectives[(row * 7) % 25]) + " " +
                        kColours[(row * 3) % 11] + " " + kNouns[(row * 5) % 13];
    ops.push_back(op(LoadTemplate, Val::record({Val::u32(id), Val::u16(0), Val::u16(0)})));
    ops.push_back(op(AssignId, Val::record({bytes({0, 0}), Val::u32(id + 1)})));
    ops.push_back(op(AssignId, Val::record({bytes({1, 0}), Val::u32(id + 2)})));
    ops.push_back(op(SetText, Val::record({Val::u32(id + 1), Val::string(std::to_string(row + 1))})));
    ops.push_back(op(SetText, Val::record({Val::u32(id + 2), Val::string(std::move(label))})));
    Val value = row % 10 == 0 ? Val::variant(0, Val::string("danger")) : Val::variant(4);
    ops.push_back(op(SetAttribute, Val::record({Val::u32(id), Val::u16(Class), none(), std::move(value)})));
    ops.push_back(op(NewEventListener, Val::record({Val::u32(id + 2), Val::u16(Click), Val::bool_(true)})));
    ops.push_back(op(AppendChildren, Val::record({Val::u32(0), Val::u32(1)})));
  }
  return Val::list(std::move(ops));
}

}  // namespace cmhost::bench
