// The `operation` variant as C++ types, in four families: owning
// (std::string, std::vector: a bindings generator's output), the same over
// a frame allocator (the typed lane: a batch's objects come from one
// arena), the same with std::pmr containers (the arena again, with an
// allocator pointer in every container) and viewing (std::string_view,
// ListView: the visitor lane, read in place). Record<> tells the typed
// lifts each record's fields.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cmhost/abi/typed.hpp"

namespace cmhost::bench::boundary::wit {

struct Owning {
  using Str = std::string;
  template <class T>
  using List = std::vector<T>;
};
struct Frame {
  using Str = abi::typed::FrameString;
  template <class T>
  using List = abi::typed::FrameVector<T>;
};
struct Pmr {
  using Str = std::pmr::string;
  template <class T>
  using List = std::pmr::vector<T>;
};
struct Viewing {
  using Str = std::string_view;
  template <class T>
  using List = abi::typed::ListView<T>;
};

template <class F> struct CacheString { uint16_t id; typename F::Str str; };
template <class F> struct TemplateAttr { uint16_t name; std::optional<uint16_t> ns; typename F::Str value; };
template <class F> struct TemplateElement {
  uint16_t tag;
  std::optional<uint16_t> ns;
  typename F::template List<TemplateAttr<F>> attrs;
  typename F::template List<uint32_t> children;
};
template <class F> using TemplateNode = std::variant<TemplateElement<F>, typename F::Str, std::monostate>;
template <class F> struct RegisterTemplate {
  uint16_t id;
  typename F::template List<TemplateNode<F>> nodes;
  typename F::template List<uint32_t> roots;
};
struct StackOp { uint32_t id; uint32_t m; };
template <class F> struct PathOp { typename F::template List<uint8_t> path; uint32_t m; };
template <class F> struct AssignId { typename F::template List<uint8_t> path; uint32_t id; };
template <class F> struct CreateTextNode { uint32_t id; typename F::Str text; };
struct LoadTemplate { uint32_t id; uint16_t tmpl; uint16_t root; };
template <class F> struct SetText { uint32_t id; typename F::Str text; };
template <class F> using AttrValue = std::variant<typename F::Str, double, int64_t, bool, std::monostate>;
template <class F> struct SetAttribute { uint32_t id; uint16_t name; std::optional<uint16_t> ns; AttrValue<F> value; };
struct EventListener { uint32_t id; uint16_t name; bool bubbles; };

template <class F>
using Operation = std::variant<CacheString<F>, RegisterTemplate<F>, StackOp, AssignId<F>, uint32_t,
                               CreateTextNode<F>, LoadTemplate, StackOp, PathOp<F>, StackOp, StackOp,
                               SetAttribute<F>, SetText<F>, EventListener, EventListener, uint32_t, uint32_t>;

}  // namespace cmhost::bench::boundary::wit

namespace cmhost::abi::typed {

namespace b = cmhost::bench::boundary::wit;

template <class F> struct Record<b::CacheString<F>> {
  using T = b::CacheString<F>;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("str", &T::str));
};
template <class F> struct Record<b::TemplateAttr<F>> {
  using T = b::TemplateAttr<F>;
  static constexpr auto fields = std::make_tuple(field("name", &T::name), field("ns", &T::ns), field("value", &T::value));
};
template <class F> struct Record<b::TemplateElement<F>> {
  using T = b::TemplateElement<F>;
  static constexpr auto fields = std::make_tuple(field("tag", &T::tag), field("ns", &T::ns), field("attrs", &T::attrs),
                                                 field("children", &T::children));
};
template <class F> struct Record<b::RegisterTemplate<F>> {
  using T = b::RegisterTemplate<F>;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("nodes", &T::nodes), field("roots", &T::roots));
};
template <> struct Record<b::StackOp> {
  using T = b::StackOp;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("m", &T::m));
};
template <class F> struct Record<b::PathOp<F>> {
  using T = b::PathOp<F>;
  static constexpr auto fields = std::make_tuple(field("path", &T::path), field("m", &T::m));
};
template <class F> struct Record<b::AssignId<F>> {
  using T = b::AssignId<F>;
  static constexpr auto fields = std::make_tuple(field("path", &T::path), field("id", &T::id));
};
template <class F> struct Record<b::CreateTextNode<F>> {
  using T = b::CreateTextNode<F>;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("text", &T::text));
};
template <> struct Record<b::LoadTemplate> {
  using T = b::LoadTemplate;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("tmpl", &T::tmpl), field("root", &T::root));
};
template <class F> struct Record<b::SetText<F>> {
  using T = b::SetText<F>;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("text", &T::text));
};
template <class F> struct Record<b::SetAttribute<F>> {
  using T = b::SetAttribute<F>;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("name", &T::name), field("ns", &T::ns),
                                                 field("value", &T::value));
};
template <> struct Record<b::EventListener> {
  using T = b::EventListener;
  static constexpr auto fields = std::make_tuple(field("id", &T::id), field("name", &T::name), field("bubbles", &T::bubbles));
};

}  // namespace cmhost::abi::typed
