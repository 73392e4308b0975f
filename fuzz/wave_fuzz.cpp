// Fuzz target: WAVE text parsed as a value of one of a set of types (the
// first byte picks it), every kind of value among them. Text that parses
// must print and parse back to the same value; text that does not must be
// refused with a cmhost::Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cmhost/error.hpp"
#include "cmhost/wave.hpp"

namespace {

using cmhost::abi::Type;
using cmhost::abi::TypeRef;

std::vector<TypeRef> make_types() {
  const TypeRef point = Type::record({{"x", Type::s32()}, {"label", Type::string()}});
  const TypeRef shape = Type::variant({{"circle", Type::f64()}, {"named", Type::string()}, {"none", nullptr}});
  return {
      Type::bool_(), Type::s8(), Type::u8(), Type::s16(), Type::u16(), Type::s32(), Type::u32(), Type::s64(),
      Type::u64(), Type::f32(), Type::f64(), Type::char_(), Type::string(), Type::list(Type::u8()),
      Type::list(Type::string()), Type::fixed_list(Type::u16(), 3), point, Type::tuple({Type::u8(), Type::string()}),
      shape, Type::enum_({"red", "green", "blue"}), Type::option(Type::option(Type::u32())),
      Type::result(Type::string(), nullptr), Type::result(nullptr, Type::u8()), Type::flags({"read", "write", "x"}),
      Type::map(Type::string(), Type::list(point)), Type::list(shape),
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<TypeRef> types = make_types();
  if (size == 0) return 0;
  const Type& type = *types[data[0] % types.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  cmhost::abi::Val value;
  try {
    value = cmhost::parse_wave(type, text);
  } catch (const cmhost::Error&) {
    return 0;  // refused: fine
  }
  // Accepted: it prints, and the print parses back to the same value.
  const std::string printed = cmhost::to_wave(type, value);
  const cmhost::abi::Val again = cmhost::parse_wave(type, printed);
  if (!(again == value)) std::abort();
  return 0;
}
