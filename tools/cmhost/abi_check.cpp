// `cmhost abi-check`: runs the canonical ABI reference vectors
// (shared/abi-vectors/README.md) against the ABI stage, strictly.
#include "abi_check.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "cmhost/abi.hpp"
#include "vector_json.hpp"

namespace cmhost::tools {
namespace {

using nlohmann::json;

enum class VectorKind { Layout, Store, Load, LoadTrap, Flat };

// The kind is the file name's stem, or a prefix of it followed by '-', '_'
// or '.', so files can be renamed or split ("store-part2.jsonl").
std::optional<VectorKind> kind_of(const std::filesystem::path& file) {
  const std::string stem = file.stem().string();
  static const std::pair<const char*, VectorKind> kinds[] = {
      {"load-trap", VectorKind::LoadTrap}, {"layout", VectorKind::Layout},
      {"store", VectorKind::Store},        {"load", VectorKind::Load},
      {"flat", VectorKind::Flat}};
  for (auto& [name, kind] : kinds) {
    const std::string n = name;
    if (stem == n) return kind;
    if (stem.size() > n.size() && stem.compare(0, n.size(), n) == 0 &&
        (stem[n.size()] == '-' || stem[n.size()] == '_' || stem[n.size()] == '.') &&
        !(kind == VectorKind::Load && stem.compare(0, 9, "load-trap") == 0))
      return kind;
  }
  return std::nullopt;
}

abi::CanonOptions options_of(const json& v) {
  abi::CanonOptions o;
  o.addr = width_from_json(v.at("ptr"));
  if (v.contains("encoding")) o.encoding = encoding_from_json(v["encoding"]);
  o.canonicalize_nan = v.value("deterministic_nan", true);
  return o;
}

json allocations_json(const abi::HostMemory& m) {
  json out = json::array();
  for (const auto& a : m.allocations()) out.push_back(json(a));
  return out;
}

std::string compare_memory(const std::string& expected_hex, const abi::HostMemory& m) {
  const auto expected = bytes_from_hex(expected_hex);
  const auto& actual = m.data();
  if (expected.size() != actual.size())
    return fmt::format("memory size: expected {}, got {}", expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i)
    if (expected[i] != actual[i])
      return fmt::format("memory byte {}: expected {:02x}, got {:02x}", i, expected[i], actual[i]);
  return {};
}

json flat_json(const abi::Layout& layout, const std::vector<uint64_t>& flat) {
  json out = json::array();
  for (size_t i = 0; i < flat.size(); ++i) {
    const abi::CoreType t = i < layout.flat.size() ? layout.flat[i] : abi::CoreType::I64;
    std::string v;
    switch (t) {
      case abi::CoreType::I32:
      case abi::CoreType::I64: v = std::to_string(flat[i]); break;
      case abi::CoreType::F32: v = fmt::format("0x{:08x}", flat[i]); break;
      case abi::CoreType::F64: v = fmt::format("0x{:016x}", flat[i]); break;
      case abi::CoreType::V128:
      case abi::CoreType::FuncRef:
      case abi::CoreType::ExternRef:  // the ABI flattens to numbers only
        throw Error(ErrorKind::Usage, std::string("no flat ") + abi::to_string(t) + " value");
    }
    out.push_back(json{{"t", abi::to_string(t)}, {"v", v}});
  }
  return out;
}

uint64_t parse_flat_value(const json& slot) {
  const auto t = slot.at("t").get<std::string>();
  const auto v = slot.at("v").get<std::string>();
  if (t == "f32" || t == "f64") return std::stoull(v.substr(2), nullptr, 16);
  return std::stoull(v);
}

// Returns the first difference, or an empty string when the vector passes.
std::string check_vector(VectorKind kind, const json& v, std::string& note) {
  const auto type = type_from_json(v.at("type"));
  const auto options = options_of(v);
  abi::ValueAbi program(type, options.addr);
  switch (kind) {
    case VectorKind::Layout: {
      const auto& l = type->layout(options.addr);
      if (l.size != v.at("size").get<uint64_t>())
        return fmt::format("size: expected {}, got {}", v["size"].get<uint64_t>(), l.size);
      if (l.align != v.at("align").get<uint64_t>())
        return fmt::format("align: expected {}, got {}", v["align"].get<uint64_t>(), l.align);
      json flat = json::array();
      for (auto c : l.flat) flat.push_back(abi::to_string(c));
      if (l.flat_count != v.at("flat").size())
        return fmt::format("flat count: expected {}, got {}", v["flat"].size(), l.flat_count);
      return first_difference(v["flat"], flat, "flat");
    }
    case VectorKind::Store: {
      abi::HostMemory memory(v.at("memory_size").get<size_t>(), v.at("heap_base").get<uint64_t>());
      abi::AbiContext cx(&memory, options);
      const auto value = val_from_json(*type, v.at("value"));
      const auto& l = type->layout(options.addr);
      const uint64_t addr = cx.realloc(0, 0, l.align, l.size);
      if (addr != v.at("addr").get<uint64_t>())
        return fmt::format("addr: expected {}, got {}", v["addr"].get<uint64_t>(), addr);
      program.store(cx, value, addr);
      auto d = first_difference(v.at("allocs"), allocations_json(memory), "allocs");
      if (!d.empty()) return d;
      return compare_memory(v.at("memory").get<std::string>(), memory);
    }
    case VectorKind::Load: {
      abi::HostMemory memory(bytes_from_hex(v.at("memory").get<std::string>()));
      abi::AbiContext cx(&memory, options);
      const auto value = program.load(cx, v.at("addr").get<uint64_t>());
      return first_difference(v.at("value"), val_to_json(*type, value), "value");
    }
    case VectorKind::LoadTrap: {
      abi::HostMemory memory(bytes_from_hex(v.at("memory").get<std::string>()));
      abi::AbiContext cx(&memory, options);
      try {
        const auto value = program.load(cx, v.at("addr").get<uint64_t>());
        return "expected a trap (" + v.value("why", std::string("?")) + "), got " +
               val_to_json(*type, value).dump().substr(0, 160);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Trap)
          return std::string("expected a trap, got ") + to_string(e.kind()) + ": " + e.what();
        note = std::string("trapped: ") + e.what() + " | expected: " + v.value("why", std::string("?"));
        return {};
      }
    }
    case VectorKind::Flat: {
      abi::HostMemory memory(v.at("memory_size").get<size_t>(), v.at("heap_base").get<uint64_t>());
      abi::AbiContext cx(&memory, options);
      const auto value = val_from_json(*type, v.at("value"));
      std::vector<uint64_t> flat;
      program.lower_flat(cx, value, flat);
      auto d = first_difference(v.at("flat"), flat_json(type->layout(options.addr), flat), "flat");
      if (d.empty()) d = first_difference(v.at("allocs"), allocations_json(memory), "allocs");
      if (d.empty()) d = compare_memory(v.at("memory").get<std::string>(), memory);
      if (!d.empty()) return d;
      // Lift the reference's flat values back from the reference's memory.
      std::vector<uint64_t> ref_flat;
      for (const auto& slot : v["flat"]) ref_flat.push_back(parse_flat_value(slot));
      abi::HostMemory ref_memory(bytes_from_hex(v["memory"].get<std::string>()));
      abi::AbiContext lift_cx(&ref_memory, options);
      const auto lifted = program.lift_flat(lift_cx, ref_flat);
      return first_difference(val_to_json(*type, value, options.canonicalize_nan),
                              val_to_json(*type, lifted), "lifted");
    }
  }
  return {};
}

}  // namespace

int run_abi_check(const std::vector<std::string>& files, bool verbose) {
  size_t total_passed = 0, total_failed = 0;
  bool usage_error = false;
  for (const auto& file : files) {
    const auto kind = kind_of(file);
    if (!kind) {
      fmt::print(stderr,
                 "{}: cannot tell the vector kind from the file name (expected a stem of layout, "
                 "store, load, load-trap or flat)\n",
                 file);
      usage_error = true;
      continue;
    }
    std::ifstream in(file);
    if (!in) {
      fmt::print(stderr, "{}: cannot open\n", file);
      usage_error = true;
      continue;
    }
    size_t passed = 0, failed = 0, line_no = 0;
    std::string line;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty()) continue;
      std::string id = fmt::format("{}:{}", file, line_no);
      std::string difference, note;
      try {
        const json v = json::parse(line);
        id = v.value("id", id);
        difference = check_vector(*kind, v, note);
      } catch (const Error& e) {
        difference = std::string(to_string(e.kind())) + ": " + e.what();
      } catch (const std::exception& e) {
        difference = std::string("malformed vector: ") + e.what();
      }
      if (difference.empty()) {
        ++passed;
        if (verbose && !note.empty()) fmt::print("ok {}: {}\n", id, note);
      } else {
        ++failed;
        fmt::print("FAIL {}: {}\n", id, difference);
      }
    }
    fmt::print("{}: {} passed, {} failed\n", file, passed, failed);
    total_passed += passed;
    total_failed += failed;
  }
  fmt::print("{} passed, {} failed\n", total_passed, total_failed);
  if (usage_error) return 2;
  return total_failed == 0 ? 0 : 1;
}

}  // namespace cmhost::tools
