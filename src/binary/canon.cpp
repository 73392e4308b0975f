// Canonical definitions (section 8): lift, lower and the built-ins.
#include <array>
#include <iterator>

#include "decode.hpp"

namespace cmhost::binary::detail {
namespace {

CanonOption read_option(Reader& r) {
  CanonOption option;
  const uint8_t opcode = r.read_u8();
  switch (opcode) {
    case 0x00: option.kind = CanonOptionKind::StringUtf8; break;
    case 0x01: option.kind = CanonOptionKind::StringUtf16; break;
    case 0x02: option.kind = CanonOptionKind::StringLatin1Utf16; break;
    case 0x03: option.kind = CanonOptionKind::Memory; option.index = r.read_u32(); break;
    case 0x04: option.kind = CanonOptionKind::Realloc; option.index = r.read_u32(); break;
    case 0x05: option.kind = CanonOptionKind::PostReturn; option.index = r.read_u32(); break;
    case 0x06: option.kind = CanonOptionKind::Async; break;
    case 0x07: option.kind = CanonOptionKind::Callback; option.index = r.read_u32(); break;
    default: r.fail_unknown("canonical option", opcode);
  }
  return option;
}

std::vector<CanonOption> read_options(Reader& r) {
  return read_vec(r, "canonical options", read_option);
}

// The table's rows, each with its kind's index (binary/canon_table.def).
using namespace canon_immediates;
constexpr CanonInfo kCanonTable[] = {
#define CMHOST_CANON(kind, opcode, name, immediates, params, results, behaviour) \
  {CanonKind::kind, opcode, name, immediates},
#include "binary/canon_table.def"
#undef CMHOST_CANON
};
constexpr size_t kCanonCount = std::size(kCanonTable);

constexpr bool rows_in_kind_order() {
  for (size_t i = 0; i < kCanonCount; ++i)
    if (static_cast<size_t>(kCanonTable[i].kind) != i) return false;
  return true;
}
static_assert(rows_in_kind_order());

// Row index + 1 by opcode, 0 for opcodes that name no definition.
constexpr std::array<uint8_t, 256> kRowByOpcode = [] {
  std::array<uint8_t, 256> rows{};
  for (size_t i = 0; i < kCanonCount; ++i) {
    // Two rows with one opcode would make this a non-constant expression.
    if (rows[kCanonTable[i].opcode] != 0) throw "two canonical definitions share an opcode";
    rows[kCanonTable[i].opcode] = static_cast<uint8_t>(i + 1);
  }
  return rows;
}();
static_assert(kCanonCount < 256);

const CanonInfo* canon_by_opcode(uint8_t opcode) {
  const uint8_t row = kRowByOpcode[opcode];
  return row ? &kCanonTable[row - 1] : nullptr;
}

}  // namespace

Canon read_canon(Reader& r) {
  namespace imm = canon_immediates;
  const uint8_t opcode = r.read_u8();
  const CanonInfo* info = canon_by_opcode(opcode);
  if (!info) r.fail_unknown("canonical definition opcode", opcode);
  Canon canon;
  canon.kind = info->kind;
  const uint16_t immediates = info->immediates;
  if (immediates & imm::lift) {
    r.expect_byte(0x00, "sort of the lifted function (core func)");
    canon.func_index = r.read_u32();
    canon.options = read_options(r);
    canon.type_index = r.read_u32();
    return canon;
  }
  if (immediates & imm::lower) {
    r.expect_byte(0x00, "sort of the lowered function (func)");
    canon.func_index = r.read_u32();
    canon.options = read_options(r);
    return canon;
  }
  if (immediates & imm::shared) canon.shared = r.read_flag("shared");
  if (immediates & imm::context) {
    canon.context_type = read_core_val_type(r);
    canon.context_slot = r.read_u32();
  }
  if (immediates & imm::result) canon.result = read_result_list(r);
  if (immediates & (imm::resource_type | imm::stream_type | imm::future_type)) canon.type_index = r.read_u32();
  if (immediates & imm::options) canon.options = read_options(r);
  if (immediates & imm::async) canon.async = r.read_flag("async");
  if (immediates & imm::cancellable) canon.cancellable = r.read_flag("cancellable");
  if (immediates & imm::memory) canon.memory_index = r.read_u32();
  if (immediates & imm::core_type) canon.core_type_index = r.read_u32();
  if (immediates & imm::table) canon.table_index = r.read_u32();
  return canon;
}

}  // namespace cmhost::binary::detail

namespace cmhost::binary {

const CanonInfo& canon_info(CanonKind kind) noexcept { return detail::kCanonTable[static_cast<size_t>(kind)]; }

const char* to_string(CanonKind kind) noexcept {
  return static_cast<size_t>(kind) < detail::kCanonCount ? detail::kCanonTable[static_cast<size_t>(kind)].name : "?";
}

}  // namespace cmhost::binary
