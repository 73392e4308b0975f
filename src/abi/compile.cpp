#include <unordered_map>

#include "cmhost/error.hpp"
#include "program.hpp"

namespace cmhost::abi::detail {
namespace {

class Compiler {
 public:
  Compiler(Program& p) : p_(p) {}

  uint32_t compile(const TypeRef& t) {
    if (auto it = memo_.find(t.get()); it != memo_.end()) return it->second;
    const Layout& l = t->layout(p_.width);
    Op op{};
    op.val_kind = t->kind() == TypeKind::FixedList ? ValKind::List : t->kind();
    op.size = l.size;
    op.align = l.align;
    op.flat_count = l.flat_count;
    op.type = t.get();
    op.elem = kNoOp;
    op.code = opcode_of(t->kind());
    switch (t->kind()) {
      case TypeKind::Flags: {
        op.count = static_cast<uint32_t>(t->labels().size());
        op.flags_mask = op.count >= 32 ? 0xFFFFFFFFu : ((1u << op.count) - 1);
        break;
      }
      case TypeKind::List:
      case TypeKind::Map:
      case TypeKind::FixedList: {
        op.count = t->fixed_length();
        const ValKind ek = t->element()->kind();
        op.bulk = scalar_size(ek) != 0;
        op.bulk_kind = ek;
        const uint32_t elem = compile(t->element());
        op.elem = elem;
        break;
      }
      case TypeKind::Record:
      case TypeKind::Tuple: {
        op.count = static_cast<uint32_t>(t->fields().size());
        std::vector<Child> fields;
        for (size_t i = 0; i < t->fields().size(); ++i) fields.push_back(child(compile(t->fields()[i].type), l.offsets[i]));
        op.children = static_cast<uint32_t>(p_.children.size());
        p_.children.insert(p_.children.end(), fields.begin(), fields.end());
        break;
      }
      case TypeKind::Variant:
      case TypeKind::Enum:
      case TypeKind::Option:
      case TypeKind::Result: {
        op.count = static_cast<uint32_t>(t->cases().size());
        op.discriminant_size = l.discriminant_size;
        op.payload_offset = l.payload_offset;
        std::vector<Child> cases;
        for (const Case& c : t->cases()) cases.push_back(c.type ? child(compile(c.type), 0) : Child{kNoOp, 0, {}, {}});
        op.children = static_cast<uint32_t>(p_.children.size());
        p_.children.insert(p_.children.end(), cases.begin(), cases.end());
        break;
      }
      default: break;
    }
    const auto index = static_cast<uint32_t>(p_.ops.size());
    p_.ops.push_back(op);
    memo_.emplace(t.get(), index);
    return index;
  }

 private:
  Child child(uint32_t op, uint32_t offset) const { return Child{op, offset, p_.ops[op].code, p_.ops[op].val_kind}; }

  Program& p_;
  std::unordered_map<const Type*, uint32_t> memo_;
};

}  // namespace

OpCode opcode_of(TypeKind kind) {
  switch (kind) {
    case TypeKind::Bool: return OpCode::Bool;
    case TypeKind::S8: return OpCode::S8;
    case TypeKind::U8: return OpCode::U8;
    case TypeKind::S16: return OpCode::S16;
    case TypeKind::U16: return OpCode::U16;
    case TypeKind::S32: return OpCode::S32;
    case TypeKind::U32: return OpCode::U32;
    case TypeKind::S64: return OpCode::S64;
    case TypeKind::U64: return OpCode::U64;
    case TypeKind::F32: return OpCode::F32;
    case TypeKind::F64: return OpCode::F64;
    case TypeKind::Char: return OpCode::Char;
    case TypeKind::String: return OpCode::String;
    case TypeKind::Own:
    case TypeKind::Borrow:
    case TypeKind::Stream:
    case TypeKind::Future:
    case TypeKind::ErrorContext: return OpCode::Handle;
    case TypeKind::Flags: return OpCode::Flags;
    case TypeKind::List:
    case TypeKind::Map: return OpCode::List;
    case TypeKind::FixedList: return OpCode::FixedList;
    case TypeKind::Record:
    case TypeKind::Tuple: return OpCode::Record;
    case TypeKind::Variant:
    case TypeKind::Enum:
    case TypeKind::Option:
    case TypeKind::Result: return OpCode::Variant;
  }
  return OpCode::Bool;
}

Program compile(const TypeRef& type, AddrWidth width) {
  if (!type) throw Error(ErrorKind::Usage, "cannot compile a null type");
  Program p;
  p.root_type = type;
  p.width = width;
  Compiler c(p);
  p.root = c.compile(type);
  return p;
}

void trap_in(const Type& type, const std::string& reason) {
  throw_trap(reason + " (lifting or lowering " + type.to_wit() + ")");
}

void range_trap(const AbiContext& cx, uint64_t ptr, uint64_t size, uint32_t align,
                const char* what, const Type& type) {
  if ((ptr & (align - 1)) != 0)
    trap_in(type, std::string(what) + " pointer " + std::to_string(ptr) +
                      " is not aligned to " + std::to_string(align));
  trap_in(type, std::string(what) + " at " + std::to_string(ptr) + " with " + std::to_string(size) +
                    " bytes is out of bounds of memory (" + std::to_string(cx.size()) + " bytes)");
}

}  // namespace cmhost::abi::detail
