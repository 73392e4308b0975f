// The host's ends of streams and futures.
//
//   auto ops = instance.func("take-stream").call(store, {});      // a stream<operation>
//   cmhost::StreamReader<Operation> reader(store, ops[0]);
//   while (auto batch = reader.read(store, 256); !batch.empty()) ...   // lifted values
//   reader.read_visit<OperationView>(store, [&](auto index, const auto& payload) { ... });  // in place
//
// A host end never parks a buffer of its own: a read waits (running the
// store's event loop) until the guest's write is pending, then lifts,
// visits or views the elements in place in the guest's memory; a write
// lowers straight into the guest's pending read. So the only copy is the
// one the host makes. Blocking calls run the loop; the start_* forms return
// at once and finish from the loop (Store::run_until). One copy may be in
// flight per end. Element types are abi::typed's C++ types, or Val for the
// dynamic forms (which also read 64-bit guest memories).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "cmhost/cmhost.hpp"

namespace cmhost {

// How a copy ended (cmhost/abi/canon.hpp).
using abi::CopyStatus;
using abi::CopyOutcome;

// One step of a copy in place: `count` elements at `ptr` in the guest's
// memory as `cx` sees it (its options: encoding, address width, realloc).
// A step returns how many it read or wrote, at most `count`.
using InPlaceStep = FunctionRef<uint64_t(abi::AbiContext& cx, uint64_t ptr, uint64_t count)>;
using OwnedInPlaceStep = std::function<uint64_t(abi::AbiContext& cx, uint64_t ptr, uint64_t count)>;

// A step's `n` bytes at `ptr` in the guest's memory (a stream<u8>'s
// elements, read or written in place): a trap when they are not all there.
inline uint8_t* guest_bytes(abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
  if (ptr > cx.size() || n > cx.size() - ptr) throw_trap("stream buffer out of bounds");
  return cx.base() + ptr;
}

// What every host end does, whatever its element type.
class ChannelEnd {
 public:
  ChannelEnd(ChannelEnd&&) noexcept;
  ChannelEnd& operator=(ChannelEnd&&) noexcept;
  // Drops the end unless closed: the guest's pending copy sees DROPPED.
  ~ChannelEnd();

  // The element type (null for a stream or future without one).
  const abi::TypeRef& element_type() const;
  // The other end is gone, a future's value has moved, or the end is closed.
  bool ended() const;
  // A copy is in flight (started and not yet finished).
  bool busy() const;
  // Elements moved through this end so far.
  uint64_t transferred() const;
  // Whether `other` is an end of the same stream or future: the host holds
  // both when a guest hands back an end the host made (a body it was given,
  // passed on), and then only the host can move what goes through.
  bool same_channel(const ChannelEnd& other) const;

  // Runs one copy in place, running the store's event loop until it ends:
  // for a reader, once the guest's write is pending, `step` sees up to
  // `max` of its elements; for a writer, `step` fills the guest's pending
  // reads until `max` elements are written. Error (Usage) while another
  // copy is in flight, on an ended end, or inside a guest's call (start
  // one instead); a trap in the loop is an Error (Trap) saying how many
  // elements this end had moved.
  CopyOutcome copy_in_place(Store& store, uint64_t max, InPlaceStep step);
  // The same, returning at once; `done` runs from the event loop.
  void start_in_place(Store& store, uint64_t max, OwnedInPlaceStep step, std::function<void(CopyOutcome)> done);
  // A step of a copy that also waits on a descriptor (start_when_ready):
  // how many elements it moved; 0 when the descriptor would block (the step
  // runs again once it is ready); none when the host's side is over (end
  // of input, an error noted by the caller): the end is dropped at once,
  // so the guest's pending copy sees DROPPED within the same step, and
  // the copy ends (ended() holds).
  using ReadyStep = std::function<std::optional<uint64_t>(abi::AbiContext& cx, uint64_t ptr, uint64_t count)>;
  // Starts a copy in place whose step runs once the guest's side is
  // pending and, after a step that would have blocked, once `fd` has one of
  // `events` (poll(2)'s POLLIN, POLLOUT): a socket's or a pipe's
  // would-block waits in the store's reactor, no thread per copy, and the
  // guest dropping its end meanwhile ends the copy (Dropped) at once. It
  // ends after a step that moved elements (or ended it); `done` runs from
  // the event loop.
  void start_when_ready(Store& store, int fd, short events, uint64_t max, ReadyStep step,
                        std::function<void(CopyOutcome)> done);
  // Cancels the copy in flight: what it moved before. Error (Usage) when none is.
  CopyOutcome cancel();
  // Drops the end now. Error (Usage) while a copy is in flight, or for a
  // future's writable end before its value is written.
  void close();

  class Impl;

 protected:
  explicit ChannelEnd(std::unique_ptr<Impl> impl);  // defined where Impl is
  // How an end checks its element type against the C++ type it reads or
  // writes (Error InvalidValue naming both).
  struct ElementCheck {
    bool (*matches)(const abi::Type&);
    const std::type_info& cpp;
  };
  void check_element(bool (*matches)(const abi::Type&), const std::type_info& cpp) const;
  // The compiled lift and lower of the element type for `width` (dynamic
  // forms), by the Impl, which stays put when the end moves.
  static const abi::ValueAbi& value_abi(const Impl* impl, abi::AddrWidth width);
  // Error (Usage) unless `store` is the end's (a store destroyed since
  // counts as none).
  void check_store(const Store& store) const;
  // The same for list<element>, to lift a run of elements as one list.
  static const abi::ValueAbi& list_abi(const Impl* impl, abi::AddrWidth width);
  const Impl* impl() const { return impl_.get(); }
  // Typed ends whose elements hold handles (stream<own<r>>, say) bind the
  // handles' tags to the element type once, here; element_handles is
  // what a typed load or lower of an element sets in its context (null:
  // no handles).
  void bind_element_handles(bool (*bind)(const abi::Type& element, abi::typed::HandleTypes& found));
  static const abi::typed::HandleTypes* element_handles(const Impl* impl);
  // Takes the readable end out of the store's handle table once its
  // element type passed `check` (a refused end stays where it was).
  static ChannelEnd take_readable(Store& store, const Val& end, bool stream, ElementCheck check);
  // A new stream or future: the host keeps the writable end, the readable
  // one is readable_end() in the store's handle table.
  static ChannelEnd make_writable(Store& store, abi::TypeRef element, bool stream, ElementCheck check);
  const Val& readable_end() const;
  // Puts this readable end back into the store's handle table (its new
  // handle), for a guest to receive again; the end is closed then. Error
  // (Usage) while a copy is in flight, or once closed.
  Val release_readable(Store& store);

  std::unique_ptr<Impl> impl_;
};

namespace streams_detail {

// Whether the elements of type `t` can be read or written as Ts: the check
// of typed calls (cmhost/abi/typed_signature.hpp) for one value. Handle tags
// are not bound (ends move no typed handles).
template <class T>
bool element_fits(const abi::Type& t) {
  return abi::typed::fits<T>(t, nullptr);
}

// Binds the handle tags T holds to `element`'s handle types.
template <class T>
bool bind_element(const abi::Type& element, abi::typed::HandleTypes& found) {
  return abi::typed::fits<T>(element, &found);
}

template <class T>
inline constexpr bool binds_handles_v = !std::is_same_v<T, Val> && abi::typed::holds_handle_v<T>;

template <class T>
inline constexpr bool is_byte_v = std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>;

template <class V>
inline constexpr bool is_variant_v = false;
template <class... C>
inline constexpr bool is_variant_v<std::variant<C...>> = true;

// Calls f with the address width of `cx` as a constant: typed elements are
// laid out for a 32-bit memory (their views, ListView, are), so a 64-bit
// one is read through Val.
template <class F>
decltype(auto) with_width(const abi::AbiContext& cx, F&& f) {
  if (cx.options().addr == abi::AddrWidth::I64)
    throw Error(ErrorKind::Usage, "typed stream and future ends read 32-bit guest memories: use Val for a 64-bit one");
  return f(std::integral_constant<abi::AddrWidth, abi::AddrWidth::I32>{});
}

}  // namespace streams_detail

// The readable end of a stream<T> the host holds.
template <class T>
class StreamReader : public ChannelEnd {
 public:
  // Takes the readable end `stream` (Val::stream of a handle the host
  // holds: a guest's result, or an argument of a host function) out of the
  // store's handle table. Error (InvalidValue) when it is no readable
  // stream end, or when its elements are not Ts.
  StreamReader(Store& store, const Val& stream)
      : ChannelEnd(take_readable(store, stream, true, {&streams_detail::element_fits<T>, typeid(T)})) {
    if constexpr (streams_detail::binds_handles_v<T>) bind_element_handles(&streams_detail::bind_element<T>);
  }
  // The same for a typed handle (a typed host function's argument).
  StreamReader(Store& store, abi::typed::Stream<T> stream) : StreamReader(store, Val::stream(stream.handle)) {}
  // Gives the end back as a handle the host holds (to return to a guest:
  // a body handed on, say); this reader is closed then.
  abi::typed::Stream<T> into_handle(Store& store) { return {release_readable(store).as_handle()}; }

  // Up to `max` elements, lifted; empty once the writer is gone (ended()).
  std::vector<T> read(Store& store, size_t max) {
    std::vector<T> out;
    copy_in_place(store, max, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
      out.reserve(n);
      load_into(impl(), cx, ptr, n, out);
      return n;
    });
    return out;
  }

  // The dynamic form's fastest read: up to `max` elements as one list Val
  // (its items share one arena; numbers come packed: read them with
  // list_element); an empty list once the writer is gone.
  Val read_list(Store& store, size_t max)
    requires std::is_same_v<T, Val>
  {
    std::optional<Val> out;
    copy_in_place(store, max, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
      const uint64_t where[2] = {ptr, n};
      out.emplace(list_abi(impl(), cx.options().addr).lift_flat(cx, where));
      return n;
    });
    if (!out) return Val::list({});
    return std::move(*out);
  }

  // Appends up to `max` elements to `out` (a vector of T: std, pmr or
  // frame), built in place; pmr containers inside them allocate from
  // `resource`. Returns how many, 0 once the writer is gone.
  template <class Container>
  uint64_t read_into(Store& store, Container& out, uint64_t max = std::numeric_limits<uint64_t>::max(),
                     std::pmr::memory_resource* resource = std::pmr::get_default_resource()) {
    return copy_in_place(store, max, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
             append(cx, ptr, n, out, resource);
             return n;
           })
        .count;
  }
  // The same for frame containers (abi/frame_arena.hpp): `arena` is their
  // frame arena while elements are loaded (not while the loop runs guests).
  template <class Container>
  uint64_t read_into(Store& store, Container& out, std::pmr::monotonic_buffer_resource& arena,
                     uint64_t max = std::numeric_limits<uint64_t>::max()) {
    return copy_in_place(store, max, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
             const abi::typed::FrameScope frame(arena, abi::typed::FrameScope::windowed);
             append(cx, ptr, n, out, &arena);
             return n;
           })
        .count;
  }

  // Hands each of up to `max` elements to `visit` where the guest wrote it:
  // `visit(std::in_place_index<I>, payload)` per case when View is a
  // variant, `visit(element)` otherwise, with View's views (string_view,
  // ListView) pointing into the guest's memory for the call. No value is
  // built, nothing is allocated per element. View defaults to T; it must
  // have T's shape. Returns how many it visited, 0 once the writer is gone.
  template <class View = T, class Visit>
  uint64_t read_visit(Store& store, Visit&& visit, uint64_t max = std::numeric_limits<uint64_t>::max()) {
    check_view<View>();
    return copy_in_place(store, max, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
             return streams_detail::with_width(cx, [&](auto width) {
               constexpr abi::AddrWidth W = decltype(width)::value;
               cx.set_typed_handles(element_handles(impl()));
               const abi::typed::Reader reader(cx);
               constexpr uint64_t size = abi::typed::Lift<View, W>::size;
               reader.check(ptr, n * size, abi::typed::Lift<View, W>::align, "stream elements");
               for (uint64_t i = 0; i < n; ++i) {
                 if constexpr (streams_detail::is_variant_v<View>)
                   abi::typed::visit_variant<View, W>(reader, ptr + i * size, visit);
                 else
                   visit(static_cast<const View&>(abi::typed::Lift<View, W>::load(reader, ptr + i * size)));
               }
               return n;
             });
           })
        .count;
  }

  // stream<u8> (and s8): `consume` sees the writer's bytes in place and
  // returns how many it took (the rest stay for the next read). Returns
  // that count, 0 once the writer is gone.
  uint64_t read_direct(Store& store, FunctionRef<size_t(std::span<const uint8_t>)> consume,
                       uint64_t max = std::numeric_limits<uint64_t>::max())
    requires streams_detail::is_byte_v<T>
  {
    return copy_in_place(store, max, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> uint64_t {
             return consume(std::span<const uint8_t>(cx.base() + ptr, n));
           })
        .count;
  }

  // Starts a read of up to `max` elements; `done` gets them (empty at the
  // end of the stream, or when cancelled) from the event loop.
  void start_read(Store& store, size_t max, std::function<void(std::vector<T> values, CopyOutcome)> done) {
    auto values = std::make_shared<std::vector<T>>();
    start_in_place(
        store, max,
        [impl = impl(), values](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
          load_into(impl, cx, ptr, n, *values);
          return n;
        },
        [values, done = std::move(done)](CopyOutcome outcome) { done(std::move(*values), outcome); });
  }

 private:
  static void load_into(const Impl* impl, abi::AbiContext& cx, uint64_t ptr, uint64_t n, std::vector<T>& out) {
    if constexpr (std::is_same_v<T, Val>) {
      // Lifted as one list, so the values share one arena, then moved out.
      const uint64_t where[2] = {ptr, n};
      Val list = list_abi(impl, cx.options().addr).lift_flat(cx, where);
      out.reserve(out.size() + n);
      if (list.is_packed()) {
        for (uint64_t i = 0; i < n; ++i) out.push_back(list.list_element(i));
      } else {
        for (Val& v : list.items_mut()) out.push_back(std::move(v));
      }
    } else {
      streams_detail::with_width(cx, [&](auto width) {
        constexpr abi::AddrWidth W = decltype(width)::value;
        cx.set_typed_handles(element_handles(impl));
        const abi::typed::Reader reader(cx);
        constexpr uint64_t size = abi::typed::Lift<T, W>::size;
        reader.check(ptr, n * size, abi::typed::Lift<T, W>::align, "stream elements");
        for (uint64_t i = 0; i < n; ++i) out.push_back(abi::typed::Lift<T, W>::load(reader, ptr + i * size));
      });
    }
  }
  template <class Container>
  void append(abi::AbiContext& cx, uint64_t ptr, uint64_t n, Container& out,
              std::pmr::memory_resource* resource) const {
    streams_detail::with_width(cx, [&](auto width) {
      constexpr abi::AddrWidth W = decltype(width)::value;
      cx.set_typed_handles(element_handles(impl()));
      const abi::typed::Reader reader(cx, resource);
      constexpr uint64_t size = abi::typed::Lift<T, W>::size;
      reader.check(ptr, n * size, abi::typed::Lift<T, W>::align, "stream elements");
      out.reserve(out.size() + n);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t at = ptr + i * size;
        if constexpr (requires { abi::typed::Lift<T, W>::emplace_back(reader, at, out); })
          abi::typed::Lift<T, W>::emplace_back(reader, at, out);  // a variant's case built in its slot
        else if constexpr (std::is_default_constructible_v<T>)
          abi::typed::detail::load_into<T, W>(reader, at, out.emplace_back());
        else
          out.push_back(abi::typed::Lift<T, W>::load(reader, at));
      }
    });
  }
  template <class View>
  void check_view() {
    if (checked_view_ == &typeid(View)) return;
    check_element(&streams_detail::element_fits<View>, typeid(View));
    checked_view_ = &typeid(View);
  }
  const std::type_info* checked_view_ = nullptr;
};

// The writable end of a stream<T> the host made.
template <class T>
class StreamWriter : public ChannelEnd {
 public:
  // A new stream of `element` (T must match it): readable() is the end to
  // pass to a guest (as an argument or a result), the writer stays here.
  StreamWriter(Store& store, abi::TypeRef element)
      : ChannelEnd(make_writable(store, std::move(element), true, {&streams_detail::element_fits<T>, typeid(T)})) {
    if constexpr (streams_detail::binds_handles_v<T>) bind_element_handles(&streams_detail::bind_element<T>);
  }
  // The same with the element type T stands for (abi::typed::wit_type).
  explicit StreamWriter(Store& store)
    requires abi::typed::has_wit_type_v<T>
      : StreamWriter(store, abi::typed::wit_type<T>()) {}
  const Val& readable() const { return readable_end(); }
  // The readable end as a typed handle (a typed host function's result).
  abi::typed::Stream<T> readable_handle() const { return {readable_end().as_handle()}; }

  // Writes every value, lowering them straight into the guest's reads and
  // running the event loop until the guest took them all (Completed) or
  // dropped its end (Dropped); `count` says how many it took.
  CopyOutcome write(Store& store, std::span<const T> values) {
    uint64_t offset = 0;
    return copy_in_place(store, values.size(), [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
      const uint64_t wrote = store_values(impl(), cx, ptr, n, values.subspan(offset));
      offset += wrote;
      return wrote;
    });
  }
  // stream<u8>: the bytes copied into the guest's reads with memcpy.
  CopyOutcome write_direct(Store& store, std::span<const uint8_t> bytes)
    requires streams_detail::is_byte_v<T>
  {
    uint64_t offset = 0;
    return copy_in_place(store, bytes.size(), [&](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
      std::memcpy(guest_bytes(cx, ptr, n), bytes.data() + offset, n);
      offset += n;
      return n;
    });
  }
  // Inside a step of this writer's copy in place: lowers `values` into the
  // guest's buffer at `ptr` (room for at least that many), as write() does;
  // returns how many, for the step to return.
  uint64_t put(abi::AbiContext& cx, uint64_t ptr, std::span<const T> values) const {
    return store_values(impl(), cx, ptr, values.size(), values);
  }
  // Starts writing `values` (kept until done); `done` runs from the loop.
  void start_write(Store& store, std::vector<T> values, std::function<void(CopyOutcome)> done) {
    auto kept = std::make_shared<std::vector<T>>(std::move(values));
    auto offset = std::make_shared<uint64_t>(0);
    start_in_place(
        store, kept->size(),
        [impl = impl(), kept, offset](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
          const uint64_t wrote = store_values(impl, cx, ptr, n, std::span<const T>(*kept).subspan(*offset));
          *offset += wrote;
          return wrote;
        },
        [kept, done = std::move(done)](CopyOutcome outcome) { done(outcome); });
  }

 private:
  static uint64_t store_values(const Impl* impl, abi::AbiContext& cx, uint64_t ptr, uint64_t n,
                               std::span<const T> values) {
    if constexpr (std::is_same_v<T, Val>) {
      const abi::ValueAbi& abi = value_abi(impl, cx.options().addr);
      const uint64_t size = abi.layout().size;
      for (uint64_t i = 0; i < n; ++i) abi.store(cx, values[i], ptr + i * size);
    } else {
      cx.set_typed_handles(element_handles(impl));
      streams_detail::with_width(cx, [&](auto width) {
        constexpr abi::AddrWidth W = decltype(width)::value;
        constexpr uint64_t size = abi::typed::Lift<T, W>::size;
        for (uint64_t i = 0; i < n; ++i) abi::typed::Lower<T, W>::store(cx, ptr + i * size, values[i]);
      });
    }
    return n;
  }
};

// The readable end of a future<T> the host holds.
template <class T>
class FutureReader : public ChannelEnd {
 public:
  FutureReader(Store& store, const Val& future)
      : ChannelEnd(take_readable(store, future, false, {&streams_detail::element_fits<T>, typeid(T)})) {
    if constexpr (streams_detail::binds_handles_v<T>) bind_element_handles(&streams_detail::bind_element<T>);
  }
  FutureReader(Store& store, abi::typed::Future<T> future) : FutureReader(store, Val::future(future.handle)) {}
  // Gives the end back as a handle the host holds; this reader is closed then.
  abi::typed::Future<T> into_handle(Store& store) { return {release_readable(store).as_handle()}; }
  // The value, once the guest wrote it (running the event loop until then);
  // none when the writer is gone without writing.
  std::optional<T> read(Store& store) {
    std::optional<T> out;
    copy_in_place(store, 1, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t) -> uint64_t {
      out.emplace(load_value(impl(), cx, ptr));
      return 1;
    });
    return out;
  }
  // Starts reading the value and returns: `done` runs from the event loop
  // with it once the guest wrote it, or with none when the writer went
  // without writing. Safe from inside a host function or a loop callback.
  void start_read(Store& store, std::function<void(std::optional<T>)> done) {
    auto out = std::make_shared<std::optional<T>>();
    start_in_place(
        store, 1,
        [impl = impl(), out](abi::AbiContext& cx, uint64_t ptr, uint64_t) -> uint64_t {
          out->emplace(load_value(impl, cx, ptr));
          return 1;
        },
        [out, done = std::move(done)](CopyOutcome) { done(std::move(*out)); });
  }

 private:
  static T load_value(const Impl* impl, abi::AbiContext& cx, uint64_t ptr) {
    if constexpr (std::is_same_v<T, Val>) {
      return value_abi(impl, cx.options().addr).load(cx, ptr);
    } else {
      return streams_detail::with_width(cx, [&](auto width) {
        cx.set_typed_handles(element_handles(impl));
        return abi::typed::load<T, decltype(width)::value>(abi::typed::Reader(cx), ptr);
      });
    }
  }
};

// The writable end of a future<T> the host made.
template <class T>
class FutureWriter : public ChannelEnd {
 public:
  FutureWriter(Store& store, abi::TypeRef element)
      : ChannelEnd(make_writable(store, std::move(element), false, {&streams_detail::element_fits<T>, typeid(T)})) {
    if constexpr (streams_detail::binds_handles_v<T>) bind_element_handles(&streams_detail::bind_element<T>);
  }
  explicit FutureWriter(Store& store)
    requires abi::typed::has_wit_type_v<T>
      : FutureWriter(store, abi::typed::wit_type<T>()) {}
  const Val& readable() const { return readable_end(); }
  abi::typed::Future<T> readable_handle() const { return {readable_end().as_handle()}; }
  // Writes the value into the guest's read, running the event loop until
  // the guest reads it: false when the reader is gone instead.
  bool write(Store& store, const T& value) {
    return copy_in_place(store, 1, [&](abi::AbiContext& cx, uint64_t ptr, uint64_t) -> uint64_t {
             store_value(impl(), cx, ptr, value);
             return 1;
           })
               .status == CopyStatus::Completed;
  }
  // Starts writing the value (kept until done) and returns: the guest's
  // read gets it from the event loop, and `done` runs there, Completed, or
  // Dropped when the reader went first. Safe from inside a host function
  // or a loop callback, where write() may not run the loop.
  void start_write(Store& store, T value, std::function<void(CopyOutcome)> done) {
    auto kept = std::make_shared<T>(std::move(value));
    start_in_place(
        store, 1,
        [impl = impl(), kept](abi::AbiContext& cx, uint64_t ptr, uint64_t) -> uint64_t {
          store_value(impl, cx, ptr, *kept);
          return 1;
        },
        [kept, done = std::move(done)](CopyOutcome outcome) { done(outcome); });
  }

 private:
  static void store_value(const Impl* impl, abi::AbiContext& cx, uint64_t ptr, const T& value) {
    if constexpr (std::is_same_v<T, Val>) {
      value_abi(impl, cx.options().addr).store(cx, value, ptr);
    } else {
      cx.set_typed_handles(element_handles(impl));
      streams_detail::with_width(cx, [&](auto width) {
        abi::typed::Lower<T, decltype(width)::value>::store(cx, ptr, value);
      });
    }
  }
};

}  // namespace cmhost
