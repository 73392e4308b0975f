// Typed values: canonical ABI lifts and lowers specialised at compile time
// for C++ types, the code a bindings generator would emit. A C++ type
// stands for a WIT type:
//
//   bool, (u)int8..64_t, float, double, char32_t   the primitives
//   std::string / std::string_view                  string (a view reads in place)
//   std::vector<T> / ListView<T>                    list<T> (a view loads on access)
//   std::pmr::string / std::pmr::vector<T>          string, list<T> allocated from the
//                                                   reader's memory resource (an arena)
//   FrameString / FrameVector<T>                    string, list<T> allocated from the
//                                                   thread's frame arena (frame_arena.hpp)
//   std::optional<T>                                option<T>
//   std::variant<Cs...>                             variant (std::monostate: no payload;
//                                                   also result<T, E> and enum shapes)
//   std::tuple<Ts...>                               tuple
//   a struct with a Record<T> specialisation        record
//   an enum class with an Enum<E> specialisation    enum
//   std::bitset<N>                                  flags with N labels
//   std::array<T, N>                                list<T, N>
//   std::map<K, V>                                  map<K, V>
//   Own<R>, Borrow<R>, ErrorContext                 own<r>, borrow<r>, error-context
//   Stream<T>, Future<T>                            stream<t>, future<t> (void: no element)
//
// The lowers write the same types into guest memory and into flat core
// values (the canonical ABI's store and lower_flat), and the flat lifts read
// them back from core values (lift_flat): what a typed call does with its
// arguments and results (Instance::typed_func), with no Val built.
//
// Strings, lists and maps are allocated in the callee's memory with its
// realloc (which may move memory: nothing here keeps a pointer into it
// across a call). Values the ABI forbids are refused as the dynamic lower
// refuses them: a char that is no Unicode scalar value, ill-formed UTF-8, an
// enum value out of range, a list too long (Error InvalidValue). Floats are
// lowered with canonical NaNs when the options say so.
//
// Sizes, alignments, offsets and discriminant widths are constants of the
// instantiated templates; loading reads guest memory directly with the
// spec's checks (bounds, alignment, UTF-8, discriminants, chars) and builds
// no Val. Views (string_view, ListView) point into guest memory: they are
// valid until the guest runs again, and need UTF-8 strings. std::pmr
// containers take the Reader's memory resource, so a batch of values can
// come from one arena and be dropped at once:
//
//   std::pmr::monotonic_buffer_resource arena(buffer, sizeof buffer);
//   typed::Reader reader(cx, &arena);
//   auto ops = typed::load<std::pmr::vector<Op>>(reader, ptr);
//
// load_result_into goes one step further for a call's result: the value is
// left in the arena and freed with it, without a destructor walk.
//
//   struct Point { uint32_t x; std::string label; };
//   template <> struct cmhost::abi::typed::Record<Point> {
//     static constexpr auto fields = std::make_tuple(field("x", &Point::x), field("label", &Point::label));
//   };
//   Point p = typed::load<Point>(cx, ptr);
//
// The parts, by shape, each with its lifts and lowers:
//   typed/core.hpp        Reader, the traits (Lift, Lower, FlatLift) and what they share
//   typed/scalar.hpp      bool, integers, floats, char
//   typed/string.hpp      strings
//   typed/list.hpp        lists, fixed-length lists, maps
//   typed/record.hpp      records, tuples
//   typed/variant.hpp     variants, options, results, enums, flags
//   typed/handle.hpp      own, borrow, error-context, stream and future handles
//   typed/adapt.hpp       adapted types (Adapt<T>)
//   typed/properties.hpp  arena_releasable_v, holds_view_v, is_flat_liftable_v
//   typed/call.hpp        load, matches, load_result(_into), a typed call's arguments and result
//   typed/wit_type.hpp    wit_type<T>(): the component type a C++ type stands for
//   typed/val_bridge.hpp  typed values to and from Vals (async calls; not included here)
#pragma once

#include "cmhost/abi/typed/adapt.hpp"
#include "cmhost/abi/typed/call.hpp"
#include "cmhost/abi/typed/core.hpp"
#include "cmhost/abi/typed/handle.hpp"
#include "cmhost/abi/typed/list.hpp"
#include "cmhost/abi/typed/properties.hpp"
#include "cmhost/abi/typed/record.hpp"
#include "cmhost/abi/typed/scalar.hpp"
#include "cmhost/abi/typed/string.hpp"
#include "cmhost/abi/typed/variant.hpp"
#include "cmhost/abi/typed/wit_type.hpp"
