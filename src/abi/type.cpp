#include "cmhost/abi/type.hpp"

#include <algorithm>
#include <string>

#include "cmhost/error.hpp"

namespace cmhost::abi {
namespace {

[[noreturn]] void invalid_type(const std::string& message) {
  throw Error(ErrorKind::Validate, "invalid type: " + message);
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

CoreType join(CoreType a, CoreType b) {
  if (a == b) return a;
  if ((a == CoreType::I32 && b == CoreType::F32) || (a == CoreType::F32 && b == CoreType::I32))
    return CoreType::I32;
  return CoreType::I64;
}

uint32_t discriminant_size(size_t case_count) {
  if (case_count <= (size_t{1} << 8)) return 1;
  if (case_count <= (size_t{1} << 16)) return 2;
  return 4;
}

uint32_t flags_size(size_t label_count) {
  if (label_count <= 8) return 1;
  if (label_count <= 16) return 2;
  return 4;
}

std::shared_ptr<Type> make(TypeKind kind) { return std::make_shared<Type>(kind); }

}  // namespace

const char* to_string(TypeKind kind) noexcept {
  switch (kind) {
    case TypeKind::Bool: return "bool";
    case TypeKind::S8: return "s8";
    case TypeKind::U8: return "u8";
    case TypeKind::S16: return "s16";
    case TypeKind::U16: return "u16";
    case TypeKind::S32: return "s32";
    case TypeKind::U32: return "u32";
    case TypeKind::S64: return "s64";
    case TypeKind::U64: return "u64";
    case TypeKind::F32: return "f32";
    case TypeKind::F64: return "f64";
    case TypeKind::Char: return "char";
    case TypeKind::String: return "string";
    case TypeKind::List: return "list";
    case TypeKind::FixedList: return "fixed-length list";
    case TypeKind::Record: return "record";
    case TypeKind::Tuple: return "tuple";
    case TypeKind::Variant: return "variant";
    case TypeKind::Enum: return "enum";
    case TypeKind::Option: return "option";
    case TypeKind::Result: return "result";
    case TypeKind::Flags: return "flags";
    case TypeKind::Map: return "map";
    case TypeKind::Own: return "own";
    case TypeKind::Borrow: return "borrow";
    case TypeKind::Stream: return "stream";
    case TypeKind::Future: return "future";
    case TypeKind::ErrorContext: return "error-context";
  }
  return "?";
}

Type::Type(TypeKind kind) : kind_(kind) {}

TypeRef Type::primitive(TypeKind kind) {
  static const auto table = [] {
    std::vector<TypeRef> t;
    for (int k = 0; k <= static_cast<int>(TypeKind::ErrorContext); ++k) {
      auto kind = static_cast<TypeKind>(k);
      if (kind <= TypeKind::String || kind == TypeKind::ErrorContext) {
        auto p = make(kind);
        p->compute_layouts();
        t.push_back(p);
      } else {
        t.push_back(nullptr);
      }
    }
    return t;
  }();
  const auto& t = table.at(static_cast<size_t>(kind));
  if (!t) invalid_type(std::string(to_string(kind)) + " is not a primitive type");
  return t;
}

TypeRef Type::bool_() { return primitive(TypeKind::Bool); }
TypeRef Type::s8() { return primitive(TypeKind::S8); }
TypeRef Type::u8() { return primitive(TypeKind::U8); }
TypeRef Type::s16() { return primitive(TypeKind::S16); }
TypeRef Type::u16() { return primitive(TypeKind::U16); }
TypeRef Type::s32() { return primitive(TypeKind::S32); }
TypeRef Type::u32() { return primitive(TypeKind::U32); }
TypeRef Type::s64() { return primitive(TypeKind::S64); }
TypeRef Type::u64() { return primitive(TypeKind::U64); }
TypeRef Type::f32() { return primitive(TypeKind::F32); }
TypeRef Type::f64() { return primitive(TypeKind::F64); }
TypeRef Type::char_() { return primitive(TypeKind::Char); }
TypeRef Type::string() { return primitive(TypeKind::String); }
TypeRef Type::error_context() { return primitive(TypeKind::ErrorContext); }

static void require(const TypeRef& t, const char* what) {
  if (!t) invalid_type(std::string(what) + " needs a type");
}

TypeRef Type::list(TypeRef element) {
  require(element, "list element");
  auto t = make(TypeKind::List);
  t->element_ = std::move(element);
  t->compute_layouts();
  return t;
}

TypeRef Type::fixed_list(TypeRef element, uint32_t length) {
  require(element, "list element");
  if (length == 0) invalid_type("fixed-length list must have a length above 0");
  auto t = make(TypeKind::FixedList);
  t->element_ = std::move(element);
  t->fixed_length_ = length;
  t->compute_layouts();
  return t;
}

TypeRef Type::record(std::vector<Field> fields) {
  if (fields.empty()) invalid_type("record must have at least one field");
  for (auto& f : fields) require(f.type, "record field");
  auto t = make(TypeKind::Record);
  t->fields_ = std::move(fields);
  t->compute_layouts();
  return t;
}

TypeRef Type::tuple(std::vector<TypeRef> types) {
  if (types.empty()) invalid_type("tuple must have at least one element");
  auto t = make(TypeKind::Tuple);
  for (size_t i = 0; i < types.size(); ++i) {
    require(types[i], "tuple element");
    t->fields_.push_back(Field{std::to_string(i), std::move(types[i])});
  }
  t->compute_layouts();
  return t;
}

TypeRef Type::variant(std::vector<Case> cases) {
  if (cases.empty()) invalid_type("variant must have at least one case");
  auto t = make(TypeKind::Variant);
  t->cases_ = std::move(cases);
  t->compute_layouts();
  return t;
}

TypeRef Type::enum_(std::vector<std::string> labels) {
  if (labels.empty()) invalid_type("enum must have at least one case");
  auto t = make(TypeKind::Enum);
  for (auto& l : labels) t->cases_.push_back(Case{l, nullptr});
  t->labels_ = std::move(labels);
  t->compute_layouts();
  return t;
}

TypeRef Type::option(TypeRef payload) {
  require(payload, "option payload");
  auto t = make(TypeKind::Option);
  t->cases_ = {Case{"none", nullptr}, Case{"some", std::move(payload)}};
  t->compute_layouts();
  return t;
}

TypeRef Type::result(TypeRef ok, TypeRef error) {
  auto t = make(TypeKind::Result);
  t->cases_ = {Case{"ok", std::move(ok)}, Case{"error", std::move(error)}};
  t->compute_layouts();
  return t;
}

TypeRef Type::flags(std::vector<std::string> labels) {
  if (labels.empty() || labels.size() > 32)
    invalid_type("flags must have between 1 and 32 labels, not " + std::to_string(labels.size()));
  auto t = make(TypeKind::Flags);
  t->labels_ = std::move(labels);
  t->compute_layouts();
  return t;
}

TypeRef Type::map(TypeRef key, TypeRef value) {
  require(key, "map key");
  require(value, "map value");
  auto t = make(TypeKind::Map);
  t->element_ = tuple({std::move(key), std::move(value)});
  t->compute_layouts();
  return t;
}

TypeRef Type::own(ResourceTypeRef resource) {
  if (!resource) invalid_type("own needs a resource type");
  auto t = make(TypeKind::Own);
  t->resource_ = std::move(resource);
  t->compute_layouts();
  return t;
}

TypeRef Type::borrow(ResourceTypeRef resource) {
  if (!resource) invalid_type("borrow needs a resource type");
  auto t = make(TypeKind::Borrow);
  t->resource_ = std::move(resource);
  t->compute_layouts();
  return t;
}

const char* invalid_stream_element(const Type* element) noexcept {
  if (element && element->kind() == TypeKind::Char)
    return "`stream<char>` is not valid: the Component Model rejects it for now (a char element is 4 bytes, so "
           "the stream would carry UTF-32); stream `string`, `u8` (UTF-8 bytes) or `u32` instead";
  return nullptr;
}

TypeRef Type::stream(TypeRef element) {
  if (const char* why = invalid_stream_element(element.get())) invalid_type(why);
  auto t = make(TypeKind::Stream);
  t->element_ = std::move(element);
  t->compute_layouts();
  return t;
}

TypeRef Type::future(TypeRef element) {
  auto t = make(TypeKind::Future);
  t->element_ = std::move(element);
  t->compute_layouts();
  return t;
}

bool Type::is_variant_like() const {
  return kind_ == TypeKind::Variant || kind_ == TypeKind::Enum || kind_ == TypeKind::Option ||
         kind_ == TypeKind::Result;
}
bool Type::is_record_like() const { return kind_ == TypeKind::Record || kind_ == TypeKind::Tuple; }
bool Type::is_list_like() const {
  return kind_ == TypeKind::List || kind_ == TypeKind::FixedList || kind_ == TypeKind::Map;
}
bool Type::is_handle() const {
  return kind_ == TypeKind::Own || kind_ == TypeKind::Borrow || kind_ == TypeKind::Stream ||
         kind_ == TypeKind::Future || kind_ == TypeKind::ErrorContext;
}

void Type::compute_layouts() {
  layouts_[0] = compute_layout(AddrWidth::I32);
  layouts_[1] = compute_layout(AddrWidth::I64);
}

Layout Type::compute_layout(AddrWidth width) const {
  const uint32_t ptr = ptr_size(width);
  const CoreType ptr_core = width == AddrWidth::I32 ? CoreType::I32 : CoreType::I64;
  Layout out;
  uint64_t size = 0;
  uint64_t flat_count = 0;
  auto scalar = [&](uint32_t bytes, CoreType core) {
    size = bytes;
    out.align = bytes;
    flat_count = 1;
    out.flat = {core};
  };
  switch (kind_) {
    case TypeKind::Bool:
    case TypeKind::S8:
    case TypeKind::U8: scalar(1, CoreType::I32); break;
    case TypeKind::S16:
    case TypeKind::U16: scalar(2, CoreType::I32); break;
    case TypeKind::S32:
    case TypeKind::U32:
    case TypeKind::Char:
    case TypeKind::Own:
    case TypeKind::Borrow:
    case TypeKind::Stream:
    case TypeKind::Future:
    case TypeKind::ErrorContext: scalar(4, CoreType::I32); break;
    case TypeKind::S64:
    case TypeKind::U64: scalar(8, CoreType::I64); break;
    case TypeKind::F32: scalar(4, CoreType::F32); break;
    case TypeKind::F64: scalar(8, CoreType::F64); break;
    case TypeKind::String:
    case TypeKind::List:
    case TypeKind::Map:
      size = 2 * ptr;
      out.align = ptr;
      flat_count = 2;
      out.flat = {ptr_core, ptr_core};
      break;
    case TypeKind::FixedList: {
      const Layout& e = element_->layout(width);
      size = uint64_t{fixed_length_} * e.size;
      out.align = e.align;
      flat_count = uint64_t{fixed_length_} * e.flat_count;
      if (flat_count <= kMaxListedFlat)
        for (uint32_t i = 0; i < fixed_length_; ++i)
          out.flat.insert(out.flat.end(), e.flat.begin(), e.flat.end());
      break;
    }
    case TypeKind::Record:
    case TypeKind::Tuple: {
      for (const Field& f : fields_) {
        const Layout& fl = f.type->layout(width);
        size = align_up(size, fl.align);
        out.offsets.push_back(static_cast<uint32_t>(size));
        size += fl.size;
        out.align = std::max(out.align, fl.align);
        flat_count += fl.flat_count;
      }
      size = align_up(size, out.align);
      if (flat_count <= kMaxListedFlat)
        for (const Field& f : fields_) {
          const Layout& fl = f.type->layout(width);
          out.flat.insert(out.flat.end(), fl.flat.begin(), fl.flat.end());
        }
      break;
    }
    case TypeKind::Variant:
    case TypeKind::Enum:
    case TypeKind::Option:
    case TypeKind::Result: {
      const uint32_t disc = discriminant_size(cases_.size());
      out.discriminant_size = static_cast<uint8_t>(disc);
      uint32_t max_case_align = 1;
      uint64_t max_case_size = 0;
      uint64_t max_case_flat = 0;
      for (const Case& c : cases_) {
        if (!c.type) continue;
        const Layout& cl = c.type->layout(width);
        max_case_align = std::max(max_case_align, cl.align);
        max_case_size = std::max<uint64_t>(max_case_size, cl.size);
        max_case_flat = std::max<uint64_t>(max_case_flat, cl.flat_count);
      }
      out.align = std::max(disc, max_case_align);
      out.payload_offset = static_cast<uint32_t>(align_up(disc, max_case_align));
      size = align_up(out.payload_offset + max_case_size, out.align);
      flat_count = 1 + max_case_flat;
      if (flat_count <= kMaxListedFlat) {
        std::vector<CoreType> joined;
        for (const Case& c : cases_) {
          if (!c.type) continue;
          const auto& cf = c.type->layout(width).flat;
          for (size_t i = 0; i < cf.size(); ++i) {
            if (i < joined.size())
              joined[i] = join(joined[i], cf[i]);
            else
              joined.push_back(cf[i]);
          }
        }
        out.flat.push_back(CoreType::I32);
        out.flat.insert(out.flat.end(), joined.begin(), joined.end());
      }
      break;
    }
    case TypeKind::Flags:
      size = flags_size(labels_.size());
      out.align = static_cast<uint32_t>(size);
      flat_count = 1;
      out.flat = {CoreType::I32};
      break;
  }
  if (size > kMaxStaticSize)
    invalid_type(to_wit() + " has a size of " + std::to_string(size) +
                 " bytes, above the limit of 2^28-1");
  out.size = static_cast<uint32_t>(size);
  out.flat_count = static_cast<uint32_t>(flat_count);
  return out;
}

static void append_wit(std::string& out, const TypeRef& t) {
  if (t)
    out += t->to_wit();
  else
    out += "_";
}

std::string Type::to_wit() const {
  std::string out;
  auto names = [&](const char* head) {
    out += head;
    out += " { ";
    for (size_t i = 0; i < labels_.size(); ++i) {
      if (i) out += ", ";
      out += labels_[i];
    }
    out += " }";
  };
  switch (kind_) {
    case TypeKind::List:
      out = "list<" + element_->to_wit() + ">";
      break;
    case TypeKind::FixedList:
      out = "list<" + element_->to_wit() + ", " + std::to_string(fixed_length_) + ">";
      break;
    case TypeKind::Map:
      out = "map<" + element_->fields_[0].type->to_wit() + ", " +
            element_->fields_[1].type->to_wit() + ">";
      break;
    case TypeKind::Record:
      out = "record { ";
      for (size_t i = 0; i < fields_.size(); ++i) {
        if (i) out += ", ";
        out += fields_[i].name + ": " + fields_[i].type->to_wit();
      }
      out += " }";
      break;
    case TypeKind::Tuple:
      out = "tuple<";
      for (size_t i = 0; i < fields_.size(); ++i) {
        if (i) out += ", ";
        out += fields_[i].type->to_wit();
      }
      out += ">";
      break;
    case TypeKind::Variant:
      out = "variant { ";
      for (size_t i = 0; i < cases_.size(); ++i) {
        if (i) out += ", ";
        out += cases_[i].name;
        if (cases_[i].type) out += "(" + cases_[i].type->to_wit() + ")";
      }
      out += " }";
      break;
    case TypeKind::Enum: names("enum"); break;
    case TypeKind::Flags: names("flags"); break;
    case TypeKind::Option: out = "option<" + cases_[1].type->to_wit() + ">"; break;
    case TypeKind::Result:
      out = "result";
      if (cases_[0].type || cases_[1].type) {
        out += "<";
        append_wit(out, cases_[0].type);
        if (cases_[1].type) {
          out += ", ";
          out += cases_[1].type->to_wit();
        }
        out += ">";
      }
      break;
    case TypeKind::Own: out = "own<" + resource_->name + ">"; break;
    case TypeKind::Borrow: out = "borrow<" + resource_->name + ">"; break;
    case TypeKind::Stream:
    case TypeKind::Future:
      out = to_string(kind_);
      if (element_) out += "<" + element_->to_wit() + ">";
      break;
    default: out = to_string(kind_); break;
  }
  return out;
}

bool equal(const Type& a, const Type& b, const SameResource& same_resource) {
  if (&a == &b) return true;
  if (a.kind() != b.kind() || a.fixed_length() != b.fixed_length()) return false;
  if (a.resource() != b.resource() &&
      (!a.resource() || !b.resource() || !same_resource || !same_resource(*a.resource(), *b.resource())))
    return false;
  auto same = [&](const TypeRef& x, const TypeRef& y) {
    if (!x || !y) return x == y;
    return equal(*x, *y, same_resource);
  };
  if (!same(a.element(), b.element())) return false;
  if (a.fields().size() != b.fields().size() || a.cases().size() != b.cases().size() ||
      a.labels().size() != b.labels().size())
    return false;
  for (size_t i = 0; i < a.fields().size(); ++i)
    if (a.fields()[i].name != b.fields()[i].name || !same(a.fields()[i].type, b.fields()[i].type))
      return false;
  for (size_t i = 0; i < a.cases().size(); ++i)
    if (a.cases()[i].name != b.cases()[i].name || !same(a.cases()[i].type, b.cases()[i].type))
      return false;
  for (size_t i = 0; i < a.labels().size(); ++i)
    if (a.labels()[i] != b.labels()[i]) return false;
  return true;
}

}  // namespace cmhost::abi
