// Fuzz target: component bytes (seeded with every component the tests
// build, then mutated) decoded, instantiated with stub imports and every
// exported function called with arguments drawn from the same bytes, in a
// store under tight limits and fuel on the interpreter. Anything but a
// cmhost::Error, a sanitizer report, a hang or memory past the limits is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "generators.hpp"

namespace {

using namespace cmhost;
using abi::TypeKind;

// Values the generator can make: no handles, streams, futures or errors.
bool generatable(const abi::Type& t) {
  switch (t.kind()) {
    case TypeKind::Own:
    case TypeKind::Borrow:
    case TypeKind::Stream:
    case TypeKind::Future:
    case TypeKind::ErrorContext: return false;
    default: break;
  }
  for (const auto& f : t.fields())
    if (!generatable(*f.type)) return false;
  for (const auto& c : t.cases())
    if (c.type && !generatable(*c.type)) return false;
  return !t.element() || generatable(*t.element());
}

StoreLimits tight_limits() {
  StoreLimits limits;
  limits.memory_bytes = 16 << 20;
  limits.total_memory_bytes = 32 << 20;
  limits.table_elements = 10'000;
  limits.instances = 100;
  limits.table_entries = 10'000;
  limits.waitables = 1'000;
  limits.call_depth = 16;
  limits.lift_bytes = 8 << 20;
  return limits;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Engine engine(engine::EngineConfig{.metering = true});
  try {
    const Component component = Component::from_bytes(engine, std::vector<uint8_t>(data, data + size));
    Linker linker;
    linker.allow_stub_imports(true);
    Store store(engine);
    store.set_limits(tight_limits());
    store.set_fuel(2'000'000);
    const Instance instance = linker.instantiate(store, component);
    FuzzedDataProvider in(data, size);
    for (const Func& func : instance.funcs()) {
      std::vector<Val> args;
      bool callable = true;
      for (const auto& param : func.type().params) {
        if (!generatable(*param)) {
          callable = false;
          break;
        }
        args.push_back(fuzzing::gen_val(in, *param));
      }
      if (!callable) continue;
      try {
        (void)func.call(store, args);
      } catch (const Error&) {
        // A trap, a deadlock, a poisoned instance: the guest's doing.
      }
    }
  } catch (const Error&) {
    // Refused bytes, a failed link or instantiation.
  }
  return 0;
}
