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
    switch (t->kind()) {
      case TypeKind::Bool: op.code = OpCode::Bool; break;
      case TypeKind::S8: op.code = OpCode::S8; break;
      case TypeKind::U8: op.code = OpCode::U8; break;
      case TypeKind::S16: op.code = OpCode::S16; break;
      case TypeKind::U16: op.code = OpCode::U16; break;
      case TypeKind::S32: op.code = OpCode::S32; break;
      case TypeKind::U32: op.code = OpCode::U32; break;
      case TypeKind::S64: op.code = OpCode::S64; break;
      case TypeKind::U64: op.code = OpCode::U64; break;
      case TypeKind::F32: op.code = OpCode::F32; break;
      case TypeKind::F64: op.code = OpCode::F64; break;
      case TypeKind::Char: op.code = OpCode::Char; break;
      case TypeKind::String: op.code = OpCode::String; break;
      case TypeKind::Own:
      case TypeKind::Borrow:
      case TypeKind::Stream:
      case TypeKind::Future:
      case TypeKind::ErrorContext: op.code = OpCode::Handle; break;
      case TypeKind::Flags: {
        op.code = OpCode::Flags;
        op.count = static_cast<uint32_t>(t->labels().size());
        op.flags_mask = op.count >= 32 ? 0xFFFFFFFFu : ((1u << op.count) - 1);
        break;
      }
      case TypeKind::List:
      case TypeKind::Map:
      case TypeKind::FixedList: {
        op.code = t->kind() == TypeKind::FixedList ? OpCode::FixedList : OpCode::List;
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
        op.code = OpCode::Record;
        op.count = static_cast<uint32_t>(t->fields().size());
        std::vector<Child> fields;
        for (size_t i = 0; i < t->fields().size(); ++i)
          fields.push_back(Child{compile(t->fields()[i].type), l.offsets[i]});
        op.children = static_cast<uint32_t>(p_.children.size());
        p_.children.insert(p_.children.end(), fields.begin(), fields.end());
        break;
      }
      case TypeKind::Variant:
      case TypeKind::Enum:
      case TypeKind::Option:
      case TypeKind::Result: {
        op.code = OpCode::Variant;
        op.count = static_cast<uint32_t>(t->cases().size());
        op.discriminant_size = l.discriminant_size;
        op.payload_offset = l.payload_offset;
        std::vector<Child> cases;
        for (const Case& c : t->cases()) cases.push_back(Child{c.type ? compile(c.type) : kNoOp, 0});
        op.children = static_cast<uint32_t>(p_.children.size());
        p_.children.insert(p_.children.end(), cases.begin(), cases.end());
        break;
      }
    }
    const auto index = static_cast<uint32_t>(p_.ops.size());
    p_.ops.push_back(op);
    memo_.emplace(t.get(), index);
    return index;
  }

 private:
  Program& p_;
  std::unordered_map<const Type*, uint32_t> memo_;
};

}  // namespace

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

void check_range(const AbiContext& cx, uint64_t ptr, uint64_t size, uint32_t align,
                 const char* what, const Type& type) {
  if (ptr % align != 0)
    trap_in(type, std::string(what) + " pointer " + std::to_string(ptr) +
                      " is not aligned to " + std::to_string(align));
  if (ptr > cx.size() || size > cx.size() - ptr)
    trap_in(type, std::string(what) + " at " + std::to_string(ptr) + " with " +
                      std::to_string(size) + " bytes is out of bounds of memory (" +
                      std::to_string(cx.size()) + " bytes)");
}

}  // namespace cmhost::abi::detail
