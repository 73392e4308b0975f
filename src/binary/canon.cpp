// Canonical definitions (section 8): lift, lower and the built-ins.
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

}  // namespace

Canon read_canon(Reader& r) {
  Canon canon;
  const uint8_t opcode = r.read_u8();
  auto kind = [&](CanonKind k) { canon.kind = k; };
  auto type_only = [&](CanonKind k) { kind(k); canon.type_index = r.read_u32(); };
  auto type_and_options = [&](CanonKind k) { type_only(k); canon.options = read_options(r); };
  auto type_and_async = [&](CanonKind k) { type_only(k); canon.async = r.read_flag("async"); };
  auto cancellable = [&](CanonKind k) { kind(k); canon.cancellable = r.read_flag("cancellable"); };
  switch (opcode) {
    case 0x00:
      r.expect_byte(0x00, "sort of the lifted function (core func)");
      kind(CanonKind::Lift);
      canon.func_index = r.read_u32();
      canon.options = read_options(r);
      canon.type_index = r.read_u32();
      break;
    case 0x01:
      r.expect_byte(0x00, "sort of the lowered function (func)");
      kind(CanonKind::Lower);
      canon.func_index = r.read_u32();
      canon.options = read_options(r);
      break;
    case 0x02: type_only(CanonKind::ResourceNew); break;
    case 0x03: type_only(CanonKind::ResourceDrop); break;
    case 0x04: type_only(CanonKind::ResourceRep); break;
    case 0x24: kind(CanonKind::BackpressureInc); break;
    case 0x25: kind(CanonKind::BackpressureDec); break;
    case 0x09:
      kind(CanonKind::TaskReturn);
      canon.result = read_result_list(r);
      canon.options = read_options(r);
      break;
    case 0x05: kind(CanonKind::TaskCancel); break;
    case 0x0a:
    case 0x0b:
      kind(opcode == 0x0a ? CanonKind::ContextGet : CanonKind::ContextSet);
      canon.context_type = read_core_val_type(r);
      canon.context_slot = r.read_u32();
      break;
    case 0x06: kind(CanonKind::SubtaskCancel); canon.async = r.read_flag("async"); break;
    case 0x0d: kind(CanonKind::SubtaskDrop); break;
    case 0x0e: type_only(CanonKind::StreamNew); break;
    case 0x0f: type_and_options(CanonKind::StreamRead); break;
    case 0x10: type_and_options(CanonKind::StreamWrite); break;
    case 0x11: type_and_async(CanonKind::StreamCancelRead); break;
    case 0x12: type_and_async(CanonKind::StreamCancelWrite); break;
    case 0x13: type_only(CanonKind::StreamDropReadable); break;
    case 0x14: type_only(CanonKind::StreamDropWritable); break;
    case 0x15: type_only(CanonKind::FutureNew); break;
    case 0x16: type_and_options(CanonKind::FutureRead); break;
    case 0x17: type_and_options(CanonKind::FutureWrite); break;
    case 0x18: type_and_async(CanonKind::FutureCancelRead); break;
    case 0x19: type_and_async(CanonKind::FutureCancelWrite); break;
    case 0x1a: type_only(CanonKind::FutureDropReadable); break;
    case 0x1b: type_only(CanonKind::FutureDropWritable); break;
    case 0x1c: kind(CanonKind::ErrorContextNew); canon.options = read_options(r); break;
    case 0x1d: kind(CanonKind::ErrorContextDebugMessage); canon.options = read_options(r); break;
    case 0x1e: kind(CanonKind::ErrorContextDrop); break;
    case 0x1f: kind(CanonKind::WaitableSetNew); break;
    case 0x20:
    case 0x21:
      cancellable(opcode == 0x20 ? CanonKind::WaitableSetWait : CanonKind::WaitableSetPoll);
      canon.memory_index = r.read_u32();
      break;
    case 0x22: kind(CanonKind::WaitableSetDrop); break;
    case 0x23: kind(CanonKind::WaitableJoin); break;
    case 0x26: kind(CanonKind::ThreadIndex); break;
    case 0x27:
      kind(CanonKind::ThreadNewIndirect);
      canon.core_type_index = r.read_u32();
      canon.table_index = r.read_u32();
      break;
    case 0x28: kind(CanonKind::ThreadResumeLater); break;
    case 0x29: cancellable(CanonKind::ThreadSuspend); break;
    case 0x0c: cancellable(CanonKind::ThreadYield); break;
    case 0x2a: cancellable(CanonKind::ThreadSuspendThenResume); break;
    case 0x2b: cancellable(CanonKind::ThreadYieldThenResume); break;
    case 0x2c: cancellable(CanonKind::ThreadSuspendThenPromote); break;
    case 0x2d: cancellable(CanonKind::ThreadYieldThenPromote); break;
    case 0x40:
      kind(CanonKind::ThreadSpawnRef);
      canon.shared = r.read_flag("shared");
      canon.core_type_index = r.read_u32();
      break;
    case 0x41:
      kind(CanonKind::ThreadSpawnIndirect);
      canon.shared = r.read_flag("shared");
      canon.core_type_index = r.read_u32();
      canon.table_index = r.read_u32();
      break;
    case 0x42:
      kind(CanonKind::ThreadAvailableParallelism);
      canon.shared = r.read_flag("shared");
      break;
    default:
      r.fail_unknown("canonical definition opcode", opcode);
  }
  return canon;
}

}  // namespace cmhost::binary::detail
