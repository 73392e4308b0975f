// The boundary benchmark: a batch of DOM mutations taken from a guest by
// each lane, delivered to the same sink, timed round by round in one
// process. Lanes: bytes (hand-written decoder), dynamic (Vals), typed (C++
// structs by the typed lifts), visitor (operands read in place), floor (the
// typed lane's C++ objects alone, no ABI), and jco (the component
// transpiled to JS, timed inside Node). Plus flat lanes: 1 MiB list<u8>
// each way against memcpy, and a u32 round trip.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "arena.hpp"
#include "../common/components.hpp"
#include "byte_decoder.hpp"
#include "cmhost/cmhost.hpp"
#include "deliver.hpp"
#include "val_walker.hpp"

namespace cmhost::bench::boundary {
namespace {

using abi::Val;
using Clock = std::chrono::steady_clock;
using OwnedOps = std::vector<wit::Operation<wit::Owning>>;
using FrameOps = abi::typed::FrameVector<wit::Operation<wit::Frame>>;
using PmrOps = std::pmr::vector<wit::Operation<wit::Pmr>>;
using OperationView = wit::Operation<wit::Viewing>;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One lane: delivers the prepared batch to the sink once.
struct Lane {
  std::string name;
  std::function<void(Sink&)> run;
};

class Boundary {
 public:
  Boundary() : component_(Component::from_file(engine_, component_path("boundary"))) {
    instance_.emplace(Linker().instantiate(store_, component_));
    take_typed_.emplace(instance_->func("take-typed"));
    take_bytes_.emplace(instance_->func("take-bytes"));
  }

  void prepare(uint32_t rows) {
    const Val n = Val::u32(rows);
    instance_->func("prepare").call(store_, {&n, 1});
    // The floor lane's objects: what the typed lane builds, made once here.
    source_arena_.emplace();
    take_typed_->call_reading(store_, {}, [&](const abi::typed::CallResult& r) {
      floor_source_ = &abi::typed::load_result_into<FrameOps>(*source_arena_, r);
    });
  }

  std::vector<Lane> lanes() {
    return {
        {"bytes",
         [this](Sink& sink) {
           take_bytes_->call_reading(store_, {}, [&](const abi::typed::CallResult& r) {
             abi::typed::Reader reader(r.cx);
             const auto bytes = abi::typed::load_result<abi::typed::ListView<uint8_t>>(reader, r);
             decode_bytes(bytes.empty() ? std::span<const uint8_t>() : std::span(reader.at(bytes.address(0)), bytes.size()),
                          sink);
           });
         }},
        {"dynamic",
         [this](Sink& sink) {
           const auto results = take_typed_->call(store_, {});
           deliver_vals(results[0], sink);
         }},
        {"typed", [this](Sink& sink) { typed_lane<FrameOps>(sink); }},
        {"typed-pmr", [this](Sink& sink) { typed_lane<PmrOps>(sink); }},  // std::pmr containers
        {"typed-heap",  // the typed lane with std::string and std::vector on the heap
         [this](Sink& sink) {
           OwnedOps ops;
           take_typed_->call_reading(store_, {}, [&](const abi::typed::CallResult& r) {
             abi::typed::Reader reader(r.cx);
             ops = abi::typed::load_result<OwnedOps>(reader, r);
           });
           for (const auto& op : ops) deliver(op, sink);
         }},
        {"visitor",
         [this](Sink& sink) {
           take_typed_->call_reading(store_, {}, [&](const abi::typed::CallResult& r) {
             abi::typed::Reader reader(r.cx);
             const auto ops = abi::typed::load_result<abi::typed::ListView<OperationView>>(reader, r);
             for (uint64_t i = 0; i < ops.size(); ++i)
               abi::typed::visit_variant<OperationView>(
                   reader, ops.address(i),
                   [&]<size_t I>(std::in_place_index_t<I>, const auto& payload) { deliver<I>(payload, sink); });
           });
         }},
        {"floor",
         [this](Sink& sink) {
           arena_.run([&](std::pmr::monotonic_buffer_resource& arena) {
             // The objects the typed lane builds, copied in place into the
             // arena and left there as the typed lane leaves them.
             const abi::typed::FrameScope frame(arena);
             void* slot = arena.allocate(sizeof(FrameOps), alignof(FrameOps));
             const FrameOps& ops = *std::construct_at(static_cast<FrameOps*>(slot), *floor_source_);
             for (const auto& op : ops) deliver(op, sink);
           });
         }},
    };
  }

 private:
  // `take-typed` loaded as Ops into the batch arena, walked, and freed with
  // the arena.
  template <class Ops>
  void typed_lane(Sink& sink) {
    arena_.run([&](std::pmr::monotonic_buffer_resource& arena) {
      const Ops* ops = nullptr;
      take_typed_->call_reading(store_, {}, [&](const abi::typed::CallResult& r) {
        ops = &abi::typed::load_result_into<Ops>(arena, r);
      });
      for (const auto& op : *ops) deliver(op, sink);
    });
  }

  Engine engine_;
  Component component_;
  Store store_{engine_};
  std::optional<Instance> instance_;
  std::optional<Func> take_typed_, take_bytes_;
  std::optional<std::pmr::monotonic_buffer_resource> source_arena_;
  const FrameOps* floor_source_ = nullptr;
  BatchArena arena_;
};

struct RowResult {
  uint64_t elements = 0;
  std::map<std::string, double> ns_per_element;
};

// Runs every lane once into a checksum sink; they must agree.
Checksum check_lanes(std::vector<Lane>& lanes, uint64_t elements) {
  std::optional<Checksum> reference;
  std::string first;
  for (Lane& lane : lanes) {
    ChecksumSink sink;
    lane.run(sink);
    uint64_t calls = 0;
    for (uint64_t c : sink.sum.calls) calls += c;
    if (calls != elements)
      throw std::runtime_error(fmt::format("lane {} delivered {} operations, expected {}", lane.name, calls, elements));
    if (!reference) {
      reference = sink.sum;
      first = lane.name;
    } else if (!(sink.sum == *reference)) {
      throw std::runtime_error(fmt::format("checksums differ: {}: {}; {}: {}", first, reference->to_string(), lane.name,
                                           sink.sum.to_string()));
    }
  }
  return *reference;
}

// Times every lane at every batch size, interleaved: each round runs each
// size's lanes in turn, so a change in machine speed during the run falls
// on all of them alike (lanes and sizes are compared with one another).
std::map<uint32_t, RowResult> run_sweep(const std::vector<uint32_t>& sweep, int rounds,
                                        const std::vector<std::string>& only, std::map<uint32_t, Checksum>& checksums) {
  struct Size {
    uint32_t rows;
    uint64_t elements, reps;
    std::unique_ptr<Boundary> boundary;
    std::vector<Lane> lanes;
    std::map<std::string, std::vector<double>> samples;
  };
  std::vector<Size> sizes;
  for (uint32_t rows : sweep) {
    Size& s = sizes.emplace_back(Size{rows, 7 + uint64_t{8} * rows, 0, std::make_unique<Boundary>(), {}, {}});
    s.boundary->prepare(rows);
    s.lanes = s.boundary->lanes();
    if (!only.empty())  // bytes always runs: it is what the others are measured against
      std::erase_if(s.lanes, [&](const Lane& l) {
        return l.name != "bytes" && std::find(only.begin(), only.end(), l.name) == only.end();
      });
    checksums[rows] = check_lanes(s.lanes, s.elements);
    s.reps = std::max<uint64_t>(3, 100000 / s.elements);  // about a millisecond per measurement
  }
  ChecksumSink sink;
  for (int round = -1; round < rounds; ++round)  // round -1 warms up
    for (Size& s : sizes)
      for (Lane& lane : s.lanes) {
        const auto t0 = Clock::now();
        for (uint64_t i = 0; i < s.reps; ++i) lane.run(sink);
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
        if (round >= 0) s.samples[lane.name].push_back(ns / double(s.reps * s.elements));
      }
  std::map<uint32_t, RowResult> out;
  for (Size& s : sizes) {
    RowResult& r = out[s.rows];
    r.elements = s.elements;
    for (auto& [name, v] : s.samples) r.ns_per_element[name] = median(v);
  }
  return out;
}

// The jco lane: Node times the transpiled component itself.
std::optional<nlohmann::json> run_jco(const std::vector<uint32_t>& rows, int rounds, std::string& why) {
  std::string rows_arg;
  for (uint32_t r : rows) rows_arg += (rows_arg.empty() ? "" : ",") + std::to_string(r);
  const std::string cmd = fmt::format("node '{}' '{}' {} {} 2>&1", CMHOST_BOUNDARY_JCO_SCRIPT, CMHOST_BOUNDARY_JS_DIR,
                                      rows_arg, rounds);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    why = "cannot start node";
    return std::nullopt;
  }
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  if (status != 0) {
    why = "node failed: " + output;
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(output);
  } catch (const std::exception& e) {
    why = std::string("node printed no JSON: ") + e.what() + ": " + output.substr(0, 200);
    return std::nullopt;
  }
}

Checksum checksum_from_json(const nlohmann::json& j) {
  Checksum c;
  for (size_t i = 0; i < c.calls.size(); ++i) c.calls[i] = j.at("calls").at(i).get<uint64_t>();
  c.numbers = j.at("numbers").get<uint64_t>();
  c.text_bytes = j.at("text_bytes").get<uint64_t>();
  return c;
}

// Flat lanes: 1 MiB list<u8> each way against memcpy, and a u32 round trip.
nlohmann::json run_flat(int rounds) {
  Engine engine;
  Component component = Component::from_file(engine, component_path("flat"));
  Store store(engine);
  Instance instance = Linker().instantiate(store, component);
  const Func get = instance.func("get-bytes"), put = instance.func("put-bytes"), add = instance.func("add-one");
  constexpr uint32_t kMiB = 1 << 20;
  const Val n = Val::u32(kMiB);
  std::vector<uint8_t> src(kMiB, 7), dst(kMiB);
  const Val bytes = Val::bytes(src);
  std::vector<double> memcpy_new_ns, memcpy_ns, out_ns, in_ns, call_ns;
  auto time = [](auto&& f, int reps) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) f();
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / reps;
  };
  for (int round = -1; round < rounds; ++round) {
    // Lifting produces a new host buffer, so its baseline allocates one too.
    const double m_new = time([&] {
      std::unique_ptr<uint8_t[]> fresh(new uint8_t[kMiB]);
      std::memcpy(fresh.get(), src.data(), kMiB);
      asm volatile("" ::"r"(fresh.get()) : "memory");
    }, 50);
    const double m = time([&] {
      std::memcpy(dst.data(), src.data(), kMiB);
      asm volatile("" ::"r"(dst.data()) : "memory");
    }, 50);
    const double o = time([&] { if (get.call(store, {&n, 1})[0].list_size() != kMiB) throw std::runtime_error("get-bytes"); }, 50);
    const double i = time([&] { if (put.call(store, {&bytes, 1})[0].as_u32() != kMiB) throw std::runtime_error("put-bytes"); }, 50);
    const Val x = Val::u32(41);
    const double c = time([&] { if (add.call(store, {&x, 1})[0].as_u32() != 42) throw std::runtime_error("add-one"); }, 20000);
    if (round < 0) continue;
    memcpy_new_ns.push_back(m_new), memcpy_ns.push_back(m), out_ns.push_back(o), in_ns.push_back(i), call_ns.push_back(c);
  }
  const double m = median(memcpy_ns), m_new = median(memcpy_new_ns);
  return {{"memcpy_1mib_ns", m},
          {"memcpy_1mib_new_buffer_ns", m_new},
          {"list_u8_1mib_guest_to_host_ns", median(out_ns)},
          {"list_u8_1mib_guest_to_host_vs_memcpy", median(out_ns) / m_new},
          {"list_u8_1mib_host_to_guest_ns", median(in_ns)},
          {"list_u8_1mib_host_to_guest_vs_memcpy", median(in_ns) / m},
          {"u32_round_trip_ns_per_call", median(call_ns)}};
}

int run(bool json, int rounds, const std::vector<uint32_t>& sweep, bool with_jco, const std::vector<std::string>& only) {
  nlohmann::json out = {{"rows", nlohmann::json::object()}};
  std::map<uint32_t, Checksum> checksums;
  std::map<uint32_t, RowResult> results = run_sweep(sweep, rounds, only, checksums);
  std::string jco_why = "not requested (--no-jco)";
  std::optional<nlohmann::json> jco;
  if (with_jco) jco = run_jco(sweep, rounds, jco_why);
  for (uint32_t rows : sweep) {
    RowResult& r = results[rows];
    if (jco) {
      const auto& j = (*jco)["rows"][std::to_string(rows)];
      if (!(checksum_from_json(j.at("checksum")) == checksums[rows]))
        throw std::runtime_error(fmt::format("jco lane checksum differs at {} rows: {} vs {}", rows,
                                             checksum_from_json(j.at("checksum")).to_string(),
                                             checksums[rows].to_string()));
      r.ns_per_element["jco"] = j.at("ns_per_element").get<double>();
    }
  }
  if (!jco) fmt::print(stderr, "jco lane omitted: {}\n", jco_why);
  const bool with_flat = only.empty() || std::find(only.begin(), only.end(), "flat") != only.end();
  const nlohmann::json flat = with_flat ? run_flat(rounds) : nlohmann::json::object();

  const std::vector<std::string> order = {"bytes", "dynamic", "typed", "visitor", "floor", "jco", "typed-pmr", "typed-heap"};
  for (uint32_t rows : sweep) {
    const RowResult& r = results[rows];
    nlohmann::json lanes = nlohmann::json::object();
    const double bytes_ns = r.ns_per_element.at("bytes");
    for (const auto& name : order)
      if (r.ns_per_element.count(name))
        lanes[name] = {{"ns_per_element", r.ns_per_element.at(name)}, {"ratio", r.ns_per_element.at(name) / bytes_ns}};
    out["rows"][std::to_string(rows)] = {{"elements", r.elements}, {"lanes", lanes}};
  }
  // Flatness: each lane's largest deviation from its mean across the sweep.
  nlohmann::json flatness = nlohmann::json::object();
  for (const auto& name : order) {
    std::vector<double> v;
    for (uint32_t rows : sweep)
      if (results[rows].ns_per_element.count(name)) v.push_back(results[rows].ns_per_element.at(name));
    if (v.size() < 2) continue;
    double mean = 0, worst = 0;
    for (double x : v) mean += x / double(v.size());
    for (double x : v) worst = std::max(worst, std::abs(x - mean) / mean);
    flatness[name] = {{"mean_ns_per_element", mean}, {"largest_deviation", worst}};
  }
  out["sweep_flatness"] = flatness;
  if (with_flat) out["flat"] = flat;
  if (json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("boundary benchmark: list<operation> of 7 + 8N elements, ns per element (ratio to bytes), median of {} rounds\n\n",
             rounds);
  fmt::print("{:>6} {:>7}", "rows", "elems");
  for (const auto& name : order) fmt::print(" {:>17}", name);
  fmt::print("\n");
  for (uint32_t rows : sweep) {
    const auto& row = out["rows"][std::to_string(rows)];
    fmt::print("{:>6} {:>7}", rows, row["elements"].get<uint64_t>());
    for (const auto& name : order) {
      if (!row["lanes"].contains(name)) {
        fmt::print(" {:>17}", "-");
        continue;
      }
      const auto& l = row["lanes"][name];
      fmt::print(" {:>17}", fmt::format("{:.1f} ({:.2f}x)", l["ns_per_element"].get<double>(), l["ratio"].get<double>()));
    }
    fmt::print("\n");
  }
  fmt::print("{:>14}", "flatness ±");
  for (const auto& name : order)
    fmt::print(" {:>17}", flatness.contains(name)
                              ? fmt::format("{:.0f}%", 100 * flatness[name]["largest_deviation"].get<double>())
                              : "-");
  fmt::print("\n");
  if (!with_flat) return 0;
  fmt::print("\nflat lanes:\n");
  fmt::print("  1 MiB list<u8> guest->host: {:.0f} ns = {:.2f}x memcpy into a new buffer ({:.0f} ns)\n",
             flat["list_u8_1mib_guest_to_host_ns"].get<double>(), flat["list_u8_1mib_guest_to_host_vs_memcpy"].get<double>(),
             flat["memcpy_1mib_new_buffer_ns"].get<double>());
  fmt::print("  1 MiB list<u8> host->guest: {:.0f} ns = {:.2f}x memcpy ({:.0f} ns)\n",
             flat["list_u8_1mib_host_to_guest_ns"].get<double>(), flat["list_u8_1mib_host_to_guest_vs_memcpy"].get<double>(),
             flat["memcpy_1mib_ns"].get<double>());
  fmt::print("  u32 round trip: {:.0f} ns/call\n", flat["u32_round_trip_ns_per_call"].get<double>());
  return 0;
}

}  // namespace
}  // namespace cmhost::bench::boundary

int main(int argc, char** argv) {
  CLI::App app{"cmhost boundary benchmark"};
  bool json = false, no_jco = false;
  std::vector<std::string> only;
  int rounds = 31;
  std::vector<uint32_t> rows = {100, 500, 1000, 4000};
  app.add_flag("--json", json, "Print the results as one JSON object");
  app.add_option("--rounds", rounds, "Measured rounds per lane (median reported)")->check(CLI::Range(1, 1000));
  app.add_option("--rows", rows, "The sweep of batch sizes");
  app.add_flag("--no-jco", no_jco, "Skip the jco lane");
  app.add_option("--lanes", only, "Run only these lanes (and bytes; \"flat\" for the flat lanes), e.g. for profiling")
      ->check(CLI::IsMember({"bytes", "dynamic", "typed", "typed-pmr", "typed-heap", "visitor", "floor", "jco", "flat"}));
  CLI11_PARSE(app, argc, argv);
  try {
    return cmhost::bench::boundary::run(json, rounds, rows, !no_jco && (only.empty() || std::find(only.begin(), only.end(), "jco") != only.end()), only);
  } catch (const std::exception& e) {
    fmt::print(stderr, "boundary: {}\n", e.what());
    return 1;
  }
}
