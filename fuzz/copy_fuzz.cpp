// Fuzz target: a value of a random type copied from one guest memory
// (filled with the input's bytes) into another with abi::ValueCopy, between
// string encodings and address widths the input picks, checked against
// lifting it from the source and lowering it into the destination: both
// trap, or the destination holds the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cmhost/error.hpp"
#include "generators.hpp"

namespace {

using namespace cmhost::abi;
using cmhost::fuzzing::gen_type;

constexpr uint64_t kLiftLimit = 4 << 20;  // inputs whose value is bigger are skipped

StringEncoding pick_encoding(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: return StringEncoding::Utf8;
    case 1: return StringEncoding::Utf16;
    default: return StringEncoding::Latin1Utf16;
  }
}

HostMemory destination() {
  HostMemory memory(1 << 12);
  memory.set_grow_on_demand(true);
  memory.set_log_allocations(false);
  return memory;
}

bool is_trap(const cmhost::Error& e) {
  if (e.kind() != cmhost::ErrorKind::Trap) std::abort();  // only traps are the guest's doing
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const TypeRef type = gen_type(in, 0);
  const CanonOptions from_options{in.ConsumeBool() ? AddrWidth::I64 : AddrWidth::I32, pick_encoding(in), false};
  const CanonOptions to_options{in.ConsumeBool() ? AddrWidth::I64 : AddrWidth::I32, pick_encoding(in), false};
  const auto ptr = in.ConsumeIntegralInRange<uint64_t>(0, 300);
  std::vector<uint8_t> bytes = in.ConsumeRemainingBytes<uint8_t>();
  bytes.resize(4096);

  HostMemory source(bytes);
  AbiContext from(&source, from_options);
  const ValueAbi from_abi(type, from_options.addr);
  const ValueAbi to_abi(type, to_options.addr);

  // Lift, then lower into a fresh destination.
  std::optional<Val> lifted;
  try {
    from.set_lift_limit(kLiftLimit);
    lifted = from_abi.load(from, ptr);
  } catch (const cmhost::Error& e) {
    if (e.kind() == cmhost::ErrorKind::Trap && std::string_view(e.what()).starts_with("lift limit")) return 0;
    is_trap(e);
  }
  std::optional<Val> expected;
  if (lifted) {
    HostMemory memory = destination();
    AbiContext to(&memory, to_options);
    const uint64_t at = to.realloc(0, 0, to_abi.layout().align, to_abi.layout().size);
    to_abi.store(to, *lifted, at);
    expected = to_abi.load(to, at);
  }

  // The copy.
  from.set_lift_limit(UINT64_MAX);
  HostMemory memory = destination();
  AbiContext to(&memory, to_options);
  std::optional<Val> copied;
  try {
    const ValueCopy copy(type, from_options.addr, type, to_options.addr);
    const uint64_t at = copy.copy_to_new(from, ptr, to);
    copied = to_abi.load(to, at);
  } catch (const cmhost::Error& e) {
    is_trap(e);
  }
  if (expected.has_value() != copied.has_value()) std::abort();  // one trapped, the other did not
  if (expected && !(*expected == *copied)) std::abort();
  return 0;
}
