// Fuzz target: a random value of a random type (both drawn from the input)
// lowered into memory and lifted back, in each string encoding and address
// width, and through core values when the type flattens to few enough: the
// value must come back equal (NaN bits kept: canonicalisation is off).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "generators.hpp"

namespace {

using namespace cmhost::abi;
using cmhost::fuzzing::gen_type;
using cmhost::fuzzing::gen_val;

void round_trip(const TypeRef& type, const Val& value, CanonOptions options) {
  HostMemory memory(1 << 16);
  memory.set_grow_on_demand(true);
  memory.set_log_allocations(false);
  AbiContext cx(&memory, options);
  const ValueAbi abi(type, options.addr);
  const uint64_t ptr = cx.realloc(0, 0, abi.layout().align, abi.layout().size);
  abi.store(cx, value, ptr);
  if (!(abi.load(cx, ptr) == value)) std::abort();
  if (abi.layout().flat_listed()) {
    std::vector<uint64_t> flat;
    abi.lower_flat(cx, value, flat);
    if (!(abi.lift_flat(cx, flat) == value)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const TypeRef type = gen_type(in, 0);
  const Val value = gen_val(in, *type);
  for (StringEncoding encoding : {StringEncoding::Utf8, StringEncoding::Utf16, StringEncoding::Latin1Utf16})
    for (AddrWidth width : {AddrWidth::I32, AddrWidth::I64}) round_trip(type, value, {width, encoding, false});
  return 0;
}
