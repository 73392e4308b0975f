// The non-template parts of typed lifts: strings, messages, type shapes.
#include "cmhost/abi/typed.hpp"

#include "cmhost/error.hpp"
#include "program.hpp"
#include "string_store.hpp"
#include "text.hpp"

namespace cmhost::abi::typed {

namespace internal = ::cmhost::abi::detail;

std::string Reader::string_general(uint64_t ptr, uint64_t tagged_units) const {
  const internal::StringSource s = internal::read_string(cx_, ptr, tagged_units, *Type::string());
  std::string out;
  switch (s.form) {
    case internal::TextForm::Utf8: out.assign(reinterpret_cast<const char*>(s.data), s.code_units); break;
    case internal::TextForm::Utf16: utf16le_to_utf8(s.data, s.code_units, out); break;
    case internal::TextForm::Latin1: latin1_to_utf8(s.data, s.code_units, out); break;
  }
  charge(out.size());
  return out;
}

std::string_view Reader::string_view_general(uint64_t ptr, uint64_t tagged_units) const {
  if (cx_.options().encoding != StringEncoding::Utf8)
    throw Error(ErrorKind::Usage, "string views need UTF-8 strings; read std::string instead");
  const internal::StringSource s = internal::read_string(cx_, ptr, tagged_units, *Type::string());
  return {reinterpret_cast<const char*>(s.data), s.code_units};
}

bool HandleTypes::bind(const void* tag, const Type& type) {
  for (const auto& b : bindings_) {
    if (b.tag != tag) continue;
    if (b.type->resource() != type.resource()) return false;  // one tag, one resource type
    if (b.type->kind() == type.kind()) return true;
  }
  bindings_.push_back({tag, &type});
  return true;
}

const Type& detail::handle_type(const AbiContext& cx, const void* tag, TypeKind kind) {
  const Type* type = cx.typed_handles() ? cx.typed_handles()->find(tag, kind) : nullptr;
  if (!type)
    throw Error(ErrorKind::Usage, "no resource type is bound to the typed handle's tag: typed handles move through typed calls");
  return *type;
}

uint32_t detail::lift_handle(const AbiContext& cx, const Type& type, uint32_t index) {
  return cx.hooks() ? cx.hooks()->lift_handle(type, index) : index;
}

uint32_t detail::lower_handle(const AbiContext& cx, const Type& type, uint32_t handle) {
  return cx.hooks() ? cx.hooks()->lower_handle(type, handle) : handle;
}

void Reader::fail(const std::string& reason) const { throw_trap(reason + " (typed lift)"); }

void Reader::fail_range(uint64_t ptr, uint64_t bytes, uint32_t align, const char* what) const {
  if (ptr % align != 0)
    fail(std::string(what) + " pointer " + std::to_string(ptr) + " is not aligned to " + std::to_string(align));
  fail(std::string(what) + " at " + std::to_string(ptr) + " with " + std::to_string(bytes) +
       " bytes is out of bounds of memory (" + std::to_string(size_) + " bytes)");
}

// A source in the callee's memory, which the realloc that follows may move,
// is copied out first.
bool detail::inside_memory(const AbiContext& cx, const void* data, uint64_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  return cx.has_memory() && n > 0 && p >= cx.base() && p < cx.base() + cx.size();
}

uint64_t detail::allocate(AbiContext& cx, uint32_t align, uint64_t bytes) {
  cx.require_memory("lowering a list");
  const uint64_t ptr = cx.realloc(0, 0, align, bytes);
  if (ptr % align != 0 || ptr > cx.size() || bytes > cx.size() - ptr)
    throw_trap("realloc returned " + std::to_string(ptr) + " for a list of " + std::to_string(bytes) +
               " bytes, out of bounds or misaligned");
  return ptr;
}

void detail::check_list_length(uint64_t count, uint32_t size) {
  if (size && count > kMaxListByteLength / size)
    throw_invalid_value("a list argument of " + std::to_string(count) + " elements is too long");
}

void detail::require_memory32(const AbiContext& cx) {
  if (cx.options().addr != AddrWidth::I32)
    throw Error(ErrorKind::Usage, "typed values in memory are read and written in 32-bit memories only");
}

void detail::check_utf8_argument(std::string_view text) {
  if (!is_valid_utf8(reinterpret_cast<const uint8_t*>(text.data()), text.size()))
    throw_invalid_value("a string argument is not valid UTF-8");
}

void detail::view_into_callee_memory() {
  throw Error(ErrorKind::Usage,
              "an argument views the callee's memory, which lowering the arguments may move: pass an owning copy");
}

void detail::bad_enum_value(uint32_t value, size_t count) {
  throw_invalid_value("enum value " + std::to_string(value) + " is out of range (" + std::to_string(count) +
                      " cases)");
}

std::pair<uint64_t, uint64_t> lower_string(AbiContext& cx, std::string_view utf8) {
  std::string copy;
  if (detail::inside_memory(cx, utf8.data(), utf8.size())) utf8 = copy.assign(utf8);
  const auto* bytes = reinterpret_cast<const uint8_t*>(utf8.data());
  if (!is_valid_utf8(bytes, utf8.size())) throw_invalid_value("a string argument is not valid UTF-8");
  const internal::StoredString stored =
      internal::store_string(cx, internal::StringSource{bytes, utf8.size(), internal::TextForm::Utf8, false},
                             *Type::string());
  return {stored.ptr, stored.tagged_code_units};
}

std::pair<uint64_t, uint64_t> lower_elements(AbiContext& cx, const void* data, uint64_t count, uint32_t size) {
  cx.require_memory("lowering a list");
  detail::check_list_length(count, size);
  const uint64_t bytes = count * size;
  std::vector<uint8_t> copy;
  if (detail::inside_memory(cx, data, bytes)) {
    copy.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
    data = copy.data();
  }
  const uint64_t ptr = detail::allocate(cx, size, bytes);
  if (bytes) std::memcpy(cx.base() + ptr, data, bytes);
  return {ptr, count};
}

namespace detail {

bool kind_is(const Type& t, TypeKind kind) { return t.kind() == kind; }
bool is_list(const Type& t) { return t.kind() == TypeKind::List; }
size_t field_count(const Type& t) { return t.is_record_like() ? t.fields().size() : SIZE_MAX; }
const Type* field_type(const Type& t, size_t i) { return t.fields()[i].type.get(); }
size_t case_count(const Type& t) { return t.is_variant_like() ? t.cases().size() : SIZE_MAX; }
const Type* case_type(const Type& t, size_t i) { return t.cases()[i].type.get(); }
const Type* element_type(const Type& t) { return t.element().get(); }
size_t label_count(const Type& t) { return t.labels().size(); }
uint32_t fixed_length(const Type& t) { return t.fixed_length(); }
uint32_t canonical_nan32() { return internal::kCanonicalNan32; }
uint64_t canonical_nan64() { return internal::kCanonicalNan64; }
bool is_nan32(uint32_t bits) { return internal::is_nan32(bits); }
bool is_nan64(uint64_t bits) { return internal::is_nan64(bits); }

void bad_char(const Reader& r, uint32_t c) {
  r.fail("char code point " + std::to_string(c) + (c >= 0x110000 ? " is above 0x10FFFF" : " is a surrogate"));
}

void bad_discriminant(const Reader& r, uint32_t disc, size_t cases) {
  r.fail("invalid discriminant " + std::to_string(disc) + " (" + std::to_string(cases) + " cases)");
}

}  // namespace detail
}  // namespace cmhost::abi::typed
