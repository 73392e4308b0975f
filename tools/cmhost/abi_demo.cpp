#include "abi_demo.hpp"

#include <fmt/core.h>

#include "cmhost/abi.hpp"
#include "cmhost/wave.hpp"

namespace cmhost::tools {

using abi::Type;
using abi::Val;

namespace {

void dump(const std::vector<uint8_t>& bytes, uint64_t from, uint64_t to) {
  for (uint64_t row = from & ~uint64_t{15}; row < to; row += 16) {
    fmt::print("  {:04x}:", row);
    for (uint64_t i = row; i < row + 16; ++i) {
      if (i < from || i >= to)
        fmt::print("   ");
      else
        fmt::print(" {:02x}", bytes[i]);
    }
    fmt::print("  ");
    for (uint64_t i = row; i < row + 16 && i < to; ++i)
      fmt::print("{}", i >= from && bytes[i] >= 0x20 && bytes[i] < 0x7f ? char(bytes[i]) : '.');
    fmt::print("\n");
  }
}

}  // namespace

int run_abi_demo() {
  const auto shape = Type::variant({{"circle", Type::f32()},
                                    {"rect", Type::tuple({Type::u32(), Type::u32()})},
                                    {"point", nullptr}});
  const auto type = Type::record({{"name", Type::string()},
                                  {"tags", Type::list(Type::string())},
                                  {"port", Type::option(Type::u16())},
                                  {"shape", shape},
                                  {"perms", Type::flags({"read", "write", "exec"})}});
  const Val value = Val::record({
      Val::string("héllo wörld"),
      Val::list({Val::string("a"), Val::string("☃ snow")}),
      Val::some(Val::u16(8080)),
      Val::variant(1, Val::tuple({Val::u32(640), Val::u32(480)})),
      Val::flags(0b101),
  });

  fmt::print("type: {}\n", type->to_wit());
  fmt::print("value (WAVE): {}\n\n", to_wave(*type, value));

  for (auto encoding : {abi::StringEncoding::Utf8, abi::StringEncoding::Utf16,
                        abi::StringEncoding::Latin1Utf16}) {
    const abi::CanonOptions options{abi::AddrWidth::I32, encoding, true};
    const auto& layout = type->layout(options.addr);
    abi::ValueAbi program(type, options.addr);
    abi::HostMemory memory(256, 8);
    abi::AbiContext cx(&memory, options);

    fmt::print("== string-encoding={} (32-bit memory)\n", abi::to_string(encoding));
    fmt::print("size {} align {}; field offsets:", layout.size, layout.align);
    for (size_t i = 0; i < type->fields().size(); ++i)
      fmt::print(" {}@{}", type->fields()[i].name, layout.offsets[i]);
    fmt::print("\n");

    const uint64_t addr = cx.realloc(0, 0, layout.align, layout.size);
    program.store(cx, value, addr);
    fmt::print("stored at {} ({} realloc calls); memory:\n", addr, memory.allocations().size());
    uint64_t end = 0;
    for (const auto& a : memory.allocations()) end = std::max(end, a[4] + a[3]);
    dump(memory.data(), addr, end);

    memory.reset(end);
    std::vector<uint64_t> flat;
    program.lower_flat(cx, value, flat);
    fmt::print("flattened to {} core values:", flat.size());
    for (size_t i = 0; i < flat.size(); ++i)
      fmt::print(" {}:{}", abi::to_string(layout.flat[i]), flat[i]);
    fmt::print("\n");

    const Val loaded = program.load(cx, addr);
    const Val lifted = program.lift_flat(cx, flat);
    fmt::print("loaded back:  {}\n", to_wave(*type, loaded));
    fmt::print("lifted back:  {}\n\n", to_wave(*type, lifted));
    if (!(loaded == value) || !(lifted == value)) {
      fmt::print(stderr, "round trip changed the value\n");
      return 1;
    }
  }
  return 0;
}

}  // namespace cmhost::tools
