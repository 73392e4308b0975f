// Handles in typed values (cmhost/abi/typed.hpp): own<R> and borrow<R> as
// Own<Tag> and Borrow<Tag>, and error-context, with the binding of handle
// tags to resource types while a signature is checked (HandleTypes).
#pragma once

#include <cstdint>
#include <vector>

#include "cmhost/abi/typed/core.hpp"

namespace cmhost::abi::typed {

// ---- resource handles ----------------------------------------------------------
//
// own<R> and borrow<R> as the host holds them: a handle of the store's host
// table (what Val::own and Val::borrow carry). `Tag` names the resource type
// in C++, a host resource's class or any tag type for a guest's: within one
// signature a tag stands for one resource type, bound when the signature is
// checked (Instance::typed_func), so a load or lower finds the component
// type it moves the handle as.

template <class Tag>
struct Own {
  uint32_t handle = 0;
  bool operator==(const Own&) const = default;
};
template <class Tag>
struct Borrow {
  uint32_t handle = 0;
  bool operator==(const Borrow&) const = default;
};

namespace detail {
// A tag's identity (tags may be incomplete types, which typeid refuses).
template <class Tag>
struct TagId {
  static constexpr char id = 0;
};
template <class Tag>
constexpr const void* tag_id() {
  return &TagId<Tag>::id;
}
}  // namespace detail

// The own and borrow types the handle tags of one signature stand for.
class HandleTypes {
 public:
  // The type of kind Own or Borrow `tag` stands for; null when unbound.
  const Type* find(const void* tag, TypeKind kind) const {
    for (const auto& b : bindings_)
      if (b.tag == tag && b.type->kind() == kind) return b.type;
    return nullptr;
  }
  // Binds `tag` to the handle type `type` (kept by the caller); false when
  // the tag stands for another resource type already.
  bool bind(const void* tag, const Type& type);
  bool empty() const { return bindings_.empty(); }

 private:
  struct Binding {
    const void* tag;
    const Type* type;
  };
  std::vector<Binding> bindings_;
};

namespace detail {

// The handle type `tag` stands for in this call; Usage when none.
const Type& handle_type(const AbiContext& cx, const void* tag, TypeKind kind);
uint32_t lift_handle(const AbiContext& cx, const Type& type, uint32_t index);

template <class Tag, TypeKind K>
struct HandleLift {
  static constexpr uint32_t size = 4, align = 4;
  static bool matches(const Type& t, HandleTypes* found) {
    if (!kind_is(t, K)) return false;
    return !found || found->bind(detail::tag_id<Tag>(), t);
  }
  static uint32_t load_handle(const Reader& r, uint64_t p) {
    const AbiContext& cx = r.context();
    return lift_handle(cx, handle_type(cx, detail::tag_id<Tag>(), K), r.read<uint32_t>(p));
  }
};
}  // namespace detail

template <class Tag, AddrWidth W>
struct Lift<Own<Tag>, W> : detail::HandleLift<Tag, TypeKind::Own> {
  static Own<Tag> load(const Reader& r, uint64_t p) { return {Lift::load_handle(r, p)}; }
};
template <class Tag, AddrWidth W>
struct Lift<Borrow<Tag>, W> : detail::HandleLift<Tag, TypeKind::Borrow> {
  static Borrow<Tag> load(const Reader& r, uint64_t p) { return {Lift::load_handle(r, p)}; }
};

// error-context: the host's handle to an error context (its debug message
// stays where it was made); passed to a guest, the handle moves there.
struct ErrorContext {
  uint32_t handle = 0;
  bool operator==(const ErrorContext&) const = default;
};
template <AddrWidth W>
struct Lift<ErrorContext, W> : detail::HandleLift<ErrorContext, TypeKind::ErrorContext> {
  static ErrorContext load(const Reader& r, uint64_t p) { return {Lift::load_handle(r, p)}; }
};

// stream<T> and future<T>: the host's handle to a readable end (what
// Val::stream and Val::future carry). T is the element's C++ type, void for
// a stream or future without elements. A host function given one reads it
// with StreamReader<T> or FutureReader<T> (cmhost/streams.hpp), which take
// the end; one returned or passed to a guest moves there, and a writer's
// readable_handle() is such an end.
template <class T>
struct Stream {
  uint32_t handle = 0;
  bool operator==(const Stream&) const = default;
};
template <class T>
struct Future {
  uint32_t handle = 0;
  bool operator==(const Future&) const = default;
};

namespace detail {
// Whether a stream's or future's element type (null: none) is what T lifts.
template <class T>
bool element_matches(const Type* element, HandleTypes* found) {
  if constexpr (std::is_void_v<T>)
    return element == nullptr;
  else
    return element && Lift<T, AddrWidth::I32>::matches(*element, found);
}
// A stream or future handle: bound to its tag like a resource handle, so
// a load or lower finds the type the end moves as.
template <class Handle, TypeKind K, class T>
struct ChannelLift : HandleLift<Handle, K> {
  static bool matches(const Type& t, HandleTypes* found) {
    if (!kind_is(t, K) || !element_matches<T>(t.element().get(), found)) return false;
    return !found || found->bind(detail::tag_id<Handle>(), t);
  }
  static Handle load(const Reader& r, uint64_t p) { return {HandleLift<Handle, K>::load_handle(r, p)}; }
};
}  // namespace detail

template <class T, AddrWidth W>
struct Lift<Stream<T>, W> : detail::ChannelLift<Stream<T>, TypeKind::Stream, T> {};
template <class T, AddrWidth W>
struct Lift<Future<T>, W> : detail::ChannelLift<Future<T>, TypeKind::Future, T> {};

// ---- lowers ------------------------------------------------------------------------

namespace detail {
uint32_t lower_handle(const AbiContext& cx, const Type& type, uint32_t handle);
template <class Tag, TypeKind K, class Handle>
struct HandleLower {
  static constexpr uint32_t flat_count = 1;
  static uint32_t index(AbiContext& cx, Handle v) {
    return lower_handle(cx, handle_type(cx, detail::tag_id<Tag>(), K), v.handle);
  }
  static void lower_flat(AbiContext& cx, Handle v, uint64_t* out) { out[0] = index(cx, v); }
  static void store(AbiContext& cx, uint64_t p, Handle v) {
    const uint32_t i = index(cx, v);
    put<uint32_t>(cx, p, i);
  }
};
}  // namespace detail

template <class Tag, AddrWidth W>
struct Lower<Own<Tag>, W> : detail::HandleLower<Tag, TypeKind::Own, Own<Tag>> {};
template <class Tag, AddrWidth W>
struct Lower<Borrow<Tag>, W> : detail::HandleLower<Tag, TypeKind::Borrow, Borrow<Tag>> {};
template <AddrWidth W>
struct Lower<ErrorContext, W> : detail::HandleLower<ErrorContext, TypeKind::ErrorContext, ErrorContext> {};
template <class T, AddrWidth W>
struct Lower<Stream<T>, W> : detail::HandleLower<Stream<T>, TypeKind::Stream, Stream<T>> {};
template <class T, AddrWidth W>
struct Lower<Future<T>, W> : detail::HandleLower<Future<T>, TypeKind::Future, Future<T>> {};

// ---- flat lifts ----------------------------------------------------------------------

template <class Tag>
struct FlatLift<Own<Tag>> {
  static Own<Tag> lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<Tag>(), TypeKind::Own), static_cast<uint32_t>(in[0]))};
  }
};
template <class Tag>
struct FlatLift<Borrow<Tag>> {
  static Borrow<Tag> lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<Tag>(), TypeKind::Borrow), static_cast<uint32_t>(in[0]))};
  }
};
template <>
struct FlatLift<ErrorContext> {
  static ErrorContext lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<ErrorContext>(), TypeKind::ErrorContext),
                                static_cast<uint32_t>(in[0]))};
  }
};

template <class T>
struct FlatLift<Stream<T>> {
  static Stream<T> lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<Stream<T>>(), TypeKind::Stream),
                                static_cast<uint32_t>(in[0]))};
  }
};
template <class T>
struct FlatLift<Future<T>> {
  static Future<T> lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<Future<T>>(), TypeKind::Future),
                                static_cast<uint32_t>(in[0]))};
  }
};

}  // namespace cmhost::abi::typed
