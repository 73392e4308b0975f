// The boundary benchmark: a batch of DOM mutations taken from a guest by
// each lane, delivered to the same sink, timed round by round in one
// process. Lanes: bytes (hand-written decoder), dynamic (Vals), typed (C++
// structs by the typed lifts), visitor (operands read in place), floor (the
// typed lane's C++ objects alone, no ABI), and jco (the component
// transpiled to JS, run by a Node child that times each of its turns
// itself, in the same rounds as the others). Plus flat lanes: 1 MiB
// list<u8> each way against memcpy, and a u32 round trip.
//
// Before anything is timed, every lane must deliver the same digest (every
// number, text byte and float bit) of the guest's coverage batch and of
// each batch of the sweep. A lane that was asked for and cannot run fails
// the run.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <functional>
#include <poll.h>
#include <csignal>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
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
// The typed lane's types come from `cmhost bindgen --containers frame`.
using FrameOps = abi::typed::FrameVector<generated::Operation>;
using PmrOps = std::pmr::vector<wit::Operation<wit::Pmr>>;
using OperationView = wit::Operation<wit::Viewing>;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// One lane: delivers the prepared batch to the sink once.
struct Lane {
  std::string name;
  std::function<void(Sink&)> run;
  bool builds = false;  // builds a batch of the prepared size itself (so not the coverage batch)
};


class Boundary {
 public:
  explicit Boundary(const engine::EngineConfig& config = {})
      : engine_(config), component_(Component::from_file(engine_, component_path("boundary"))) {
    instance_.emplace(Linker().instantiate(store_, component_));
    take_typed_.emplace(instance_->func("take-typed"));
    take_bytes_.emplace(instance_->func("take-bytes"));
    build_typed_.emplace(instance_->func("build-typed"));
    build_bytes_.emplace(instance_->func("build-bytes"));
  }

  void prepare(uint32_t rows) {
    rows_ = rows;
    const Val n = Val::u32(rows);
    instance_->func("prepare").call(store_, {&n, 1});
    make_floor_source();
  }
  void prepare_coverage() {
    instance_->func("prepare-coverage").call(store_, {});
    make_floor_source();
  }
  // The number of operations the prepared batch holds.
  uint64_t prepared_operations() {
    uint64_t n = 0;
    take_typed_->call_reading(store_, {}, [&](const abi::typed::CallResult& r) {
      abi::typed::Reader reader(r.cx);
      n = abi::typed::load_result<abi::typed::ListView<OperationView>>(reader, r).size();
    });
    return n;
  }

  // The floor lane's objects: what the typed lane builds, made once here.
  void make_floor_source() {
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

  // End to end, named after the engine: `build-typed` read as the typed lane
  // reads `take-typed`, and `build-bytes` decoded as the bytes lane does.
  std::vector<Lane> build_lanes(const std::string& engine) {
    return {
        {"build-typed-" + engine,
         [this](Sink& sink) {
           arena_.run([&](std::pmr::monotonic_buffer_resource& arena) {
             const Val n = Val::u32(rows_);
             const FrameOps* ops = nullptr;
             build_typed_->call_reading(store_, {&n, 1}, [&](const abi::typed::CallResult& r) {
               ops = &abi::typed::load_result_into<FrameOps>(arena, r);
             });
             for (const auto& op : *ops) deliver(op, sink);
           });
         },
         true},
        {"build-bytes-" + engine,
         [this](Sink& sink) {
           const Val n = Val::u32(rows_);
           build_bytes_->call_reading(store_, {&n, 1}, [&](const abi::typed::CallResult& r) {
             abi::typed::Reader reader(r.cx);
             const auto bytes = abi::typed::load_result<abi::typed::ListView<uint8_t>>(reader, r);
             decode_bytes(bytes.empty() ? std::span<const uint8_t>() : std::span(reader.at(bytes.address(0)), bytes.size()),
                          sink);
           });
         },
         true},
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
  std::optional<Func> take_typed_, take_bytes_, build_typed_, build_bytes_;
  uint32_t rows_ = 0;
  std::optional<std::pmr::monotonic_buffer_resource> source_arena_;
  const FrameOps* floor_source_ = nullptr;
  BatchArena arena_;
};

// The jco lane: a Node child running jco_lane.mjs over the transpiled
// component, one request per line (see the script). It times its own turns
// with hrtime, so the pipe is not in the measurement.
class NodeLane {
 public:
  explicit NodeLane(const std::string& node) {
    int to_child[2] = {-1, -1}, from_child[2] = {-1, -1};
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) {
      for (int fd : {to_child[0], to_child[1]})
        if (fd >= 0) ::close(fd);
      throw std::runtime_error(std::string("jco lane: pipe: ") + std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) posix_spawn_file_actions_addclose(&actions, fd);
    std::string program = node, script = CMHOST_BOUNDARY_JCO_SCRIPT, dir = CMHOST_BOUNDARY_JS_DIR;
    char* argv[] = {program.data(), script.data(), dir.data(), nullptr};
    const int spawned = posix_spawnp(&pid_, node.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    to_ = to_child[1];
    from_ = from_child[0];
    if (spawned != 0) {
      pid_ = -1;
      close_pipes();
      throw std::runtime_error(fmt::format("jco lane: cannot start {}: {}", node, std::strerror(spawned)));
    }
  }
  NodeLane(const NodeLane&) = delete;
  NodeLane& operator=(const NodeLane&) = delete;
  ~NodeLane() {
    close_pipes();  // Node ends when its stdin does
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }

  void prepare(uint32_t rows) { expect_ok(fmt::format("prepare {}", rows)); }
  void prepare_coverage() { expect_ok("coverage"); }
  Digest digest(std::optional<Corruption> corrupt) {
    const auto j = request(!corrupt ? "digest" : *corrupt == Corruption::Text ? "digest text" : "digest float");
    Digest d;
    for (size_t i = 0; i < d.calls.size(); ++i) d.calls[i] = j.at("calls").at(i).get<uint64_t>();
    d.hash = std::stoull(j.at("hash").get<std::string>(), nullptr, 16);
    return d;
  }
  double time_ns(uint64_t reps) { return request(fmt::format("time {}", reps)).at("ns").get<double>(); }

 private:
  static constexpr int kAnswerTimeoutMs = 120'000;  // a turn takes well under a second

  void close_pipes() {
    if (to_ >= 0) ::close(to_);
    if (from_ >= 0) ::close(from_);
    to_ = from_ = -1;
  }
  void expect_ok(const std::string& line) {
    const auto j = request(line);
    if (!j.is_object() || !j.value("ok", false))
      throw std::runtime_error("jco lane: unexpected answer to `" + line + "`: " + j.dump());
  }
  // Sends one request line and reads one answer line; Node's death, silence
  // or an answer that is not JSON fail the run.
  nlohmann::json request(const std::string& line) {
    const std::string out = line + "\n";
    size_t sent = 0;
    while (sent < out.size()) {
      const ssize_t n = ::write(to_, out.data() + sent, out.size() - sent);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw stopped(line);
      sent += static_cast<size_t>(n);
    }
    const auto deadline = Clock::now() + std::chrono::milliseconds(kAnswerTimeoutMs);
    size_t newline;
    while ((newline = pending_.find('\n')) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{from_, POLLIN, 0};
      const int ready = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0)
        throw std::runtime_error(fmt::format("jco lane: node did not answer `{}` within {} s", line,
                                             kAnswerTimeoutMs / 1000));
      char buf[4096];
      const ssize_t n = ::read(from_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw stopped(line);
      pending_.append(buf, static_cast<size_t>(n));
    }
    const std::string answer = pending_.substr(0, newline);
    pending_.erase(0, newline + 1);
    const auto j = nlohmann::json::parse(answer, nullptr, false);
    if (j.is_discarded())
      throw std::runtime_error("jco lane: node's answer to `" + line + "` is not JSON: " + answer.substr(0, 200));
    return j;
  }
  std::runtime_error stopped(const std::string& line) {
    int status = 0;
    std::string how = "no exit status";
    if (pid_ > 0 && ::waitpid(pid_, &status, 0) == pid_) {
      pid_ = -1;
      how = WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                              : fmt::format("signal {}", WTERMSIG(status));
    }
    return std::runtime_error("jco lane: node stopped (" + how + ") before answering `" + line + "`");
  }

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string pending_;
};

struct Options {
  bool json = false;
  int rounds = 31;
  int runs = 3;
  std::vector<uint32_t> sweep;
  std::vector<std::string> only;  // empty: every lane
  bool with_jco = true;
  std::string node = "node";
  std::optional<std::pair<std::string, Corruption>> corrupt;  // a lane whose checked deliveries are corrupted
};

// Delivers the prepared batch of every lane (jco's too) into a digest sink;
// all must agree, and carry `operations` operations.
void check_lanes(const char* batch, std::vector<Lane>& lanes, NodeLane* node, uint64_t operations,
                 const Options& options) {
  auto corruption_of = [&](const std::string& lane) -> std::optional<Corruption> {
    if (options.corrupt && options.corrupt->first == lane) return options.corrupt->second;
    return std::nullopt;
  };
  std::optional<Digest> reference;
  std::string first;
  auto compare = [&](const std::string& name, const Digest& d) {
    if (d.operations() != operations)
      throw std::runtime_error(fmt::format("{}: lane {} delivered {} operations, expected {}", batch, name,
                                           d.operations(), operations));
    if (!reference) {
      reference = d;
      first = name;
    } else if (!(d == *reference)) {
      throw std::runtime_error(fmt::format("{}: lanes {} and {} delivered different values: {}; {}", batch, first, name,
                                           reference->to_string(), d.to_string()));
    }
  };
  for (Lane& lane : lanes) {
    DigestSink sink;
    if (const auto c = corruption_of(lane.name)) {
      CorruptingSink corrupting(sink, *c);
      lane.run(corrupting);
    } else {
      lane.run(sink);
    }
    compare(lane.name, sink.digest);
  }
  if (node) compare("jco", node->digest(corruption_of("jco")));
}

// `aot`: the same component on the ahead-of-time engine, for its end-to-end
// lanes (null: without them).
std::vector<Lane> selected_lanes(Boundary& boundary, Boundary* aot, const std::vector<std::string>& only) {
  std::vector<Lane> lanes = boundary.lanes();
  for (Lane& lane : boundary.build_lanes("interp")) lanes.push_back(std::move(lane));
  if (aot)
    for (Lane& lane : aot->build_lanes("aot")) lanes.push_back(std::move(lane));
  if (!only.empty())  // bytes always runs: it is what the others are measured against
    std::erase_if(lanes, [&](const Lane& l) {
      return l.name != "bytes" && std::find(only.begin(), only.end(), l.name) == only.end();
    });
  return lanes;
}

// The coverage batch through every lane, before any timing.
void check_coverage(NodeLane* node, const Options& options) {
  Boundary boundary;
  boundary.prepare_coverage();
  std::vector<Lane> lanes = selected_lanes(boundary, nullptr, options.only);
  std::erase_if(lanes, [](const Lane& l) { return l.builds; });
  if (node) node->prepare_coverage();
  check_lanes("coverage batch", lanes, node, boundary.prepared_operations(), options);
}

using LaneTimes = std::map<std::string, double>;  // lane -> median ns per element

// Times every lane at every batch size, interleaved: each round runs each
// size's lanes in turn, jco's last, so a change in machine speed during the
// run falls on all of them alike (lanes and sizes are compared with one
// another). Every size's batch is checked first.
std::map<uint32_t, LaneTimes> run_sweep(NodeLane* node, const Options& options) {
  struct Size {
    uint32_t rows;
    uint64_t elements, reps;
    std::unique_ptr<Boundary> boundary, aot;
    std::vector<Lane> lanes;
    std::map<std::string, std::vector<double>> samples;
  };
  std::vector<Size> sizes;
  for (uint32_t rows : options.sweep) {
    Size& s = sizes.emplace_back(Size{rows, 7 + uint64_t{8} * rows, 0, std::make_unique<Boundary>(),
                                      std::make_unique<Boundary>(engine_named("aot")), {}, {}});
    s.boundary->prepare(rows);
    s.aot->prepare(rows);
    s.lanes = selected_lanes(*s.boundary, s.aot.get(), options.only);
    if (node) node->prepare(rows);
    check_lanes(fmt::format("batch of {} rows", rows).c_str(), s.lanes, node, s.elements, options);
    s.reps = std::max<uint64_t>(3, 100000 / s.elements);  // about a millisecond per measurement
  }
  TallySink sink;
  for (int round = -2; round < options.rounds; ++round)  // rounds -2 and -1 warm up (V8 optimises in tiers)
    for (Size& s : sizes) {
      for (Lane& lane : s.lanes) {
        const auto t0 = Clock::now();
        for (uint64_t i = 0; i < s.reps; ++i) lane.run(sink);
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
        if (round >= 0) s.samples[lane.name].push_back(ns / double(s.reps * s.elements));
      }
      if (node) {
        node->prepare(s.rows);  // the JS instance holds one batch at a time; prepared outside the timing
        const double ns = node->time_ns(s.reps);
        if (round >= 0) s.samples["jco"].push_back(ns / double(s.reps * s.elements));
      }
    }
  std::map<uint32_t, LaneTimes> out;
  for (Size& s : sizes)
    for (auto& [name, v] : s.samples) out[s.rows][name] = median(v);
  return out;
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

// A lane's ratio to bytes over the runs: the median and the range.
struct Spread {
  double median = 0, low = 0, high = 0;
};
Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {median(v), v.front(), v.back()};
}

int run(const Options& options) {
  ::signal(SIGPIPE, SIG_IGN);  // a Node child that dies must show up as an error, not end the run
  std::optional<NodeLane> node;
  if (options.with_jco) node.emplace(options.node);
  NodeLane* jco = node ? &*node : nullptr;
  check_coverage(jco, options);

  std::vector<std::map<uint32_t, LaneTimes>> runs;
  for (int i = 0; i < options.runs; ++i) runs.push_back(run_sweep(jco, options));
  node.reset();
  const bool with_flat = options.only.empty() || std::find(options.only.begin(), options.only.end(), "flat") != options.only.end();
  const nlohmann::json flat = with_flat ? run_flat(options.rounds) : nlohmann::json::object();

  const std::vector<std::string> order = {"bytes",       "dynamic",  "typed",
                                          "visitor",     "floor",    "jco",
                                          "typed-pmr",   "typed-heap", "build-typed-interp",
                                          "build-bytes-interp", "build-typed-aot", "build-bytes-aot"};
  // Per size and lane: ns per element and ratio to bytes, median and range over the runs.
  nlohmann::json out = {{"runs", options.runs}, {"rounds", options.rounds}, {"rows", nlohmann::json::object()}};
  for (uint32_t rows : options.sweep) {
    nlohmann::json lanes = nlohmann::json::object();
    for (const auto& name : order) {
      if (!runs[0].at(rows).count(name)) continue;
      std::vector<double> ns, ratio;
      for (const auto& r : runs) {
        ns.push_back(r.at(rows).at(name));
        ratio.push_back(r.at(rows).at(name) / r.at(rows).at("bytes"));
      }
      const Spread n = spread(ns), q = spread(ratio);
      lanes[name] = {{"ns_per_element", n.median}, {"ns_per_element_range", {n.low, n.high}},
                     {"ratio", q.median},          {"ratio_range", {q.low, q.high}},
                     {"ratio_per_run", ratio}};
    }
    out["rows"][std::to_string(rows)] = {{"elements", 7 + uint64_t{8} * rows}, {"lanes", lanes}};
  }
  // Flatness: each lane's largest deviation from its mean across the sweep
  // (of the medians over the runs).
  nlohmann::json flatness = nlohmann::json::object();
  for (const auto& name : order) {
    std::vector<double> v;
    for (uint32_t rows : options.sweep)
      if (out["rows"][std::to_string(rows)]["lanes"].contains(name))
        v.push_back(out["rows"][std::to_string(rows)]["lanes"][name]["ns_per_element"].get<double>());
    if (v.size() < 2) continue;
    double mean = 0, worst = 0;
    for (double x : v) mean += x / double(v.size());
    for (double x : v) worst = std::max(worst, std::abs(x - mean) / mean);
    flatness[name] = {{"mean_ns_per_element", mean}, {"largest_deviation", worst}};
  }
  out["sweep_flatness"] = flatness;
  if (with_flat) out["flat"] = flat;
  if (options.json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("boundary benchmark: list<operation> of 7 + 8N elements; ns per element and ratio to bytes,\n"
             "median [range] over {} runs of {} rounds each (each run's figure is its median round)\n\n",
             options.runs, options.rounds);
  fmt::print("{:>6} {:>7}", "rows", "elems");
  for (const auto& name : order) fmt::print(" {:>22}", name);
  fmt::print("\n");
  for (uint32_t rows : options.sweep) {
    const auto& row = out["rows"][std::to_string(rows)];
    fmt::print("{:>6} {:>7}", rows, row["elements"].get<uint64_t>());
    for (const auto& name : order) {
      if (!row["lanes"].contains(name)) {
        fmt::print(" {:>22}", "-");
        continue;
      }
      const auto& l = row["lanes"][name];
      const auto& range = l["ratio_range"];
      fmt::print(" {:>22}", name == "bytes" ? fmt::format("{:.1f} ns", l["ns_per_element"].get<double>())
                                            : fmt::format("{:.2f}x [{:.2f}-{:.2f}]", l["ratio"].get<double>(),
                                                          range[0].get<double>(), range[1].get<double>()));
    }
    fmt::print("\n");
  }
  fmt::print("{:>14}", "flatness ±");
  for (const auto& name : order)
    fmt::print(" {:>22}", flatness.contains(name)
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

namespace {
const std::vector<std::string> kLaneNames = {"bytes", "dynamic", "typed", "typed-pmr", "typed-heap",
                                             "visitor", "floor", "jco", "flat", "build-typed-interp",
                                             "build-bytes-interp", "build-typed-aot", "build-bytes-aot"};
}  // namespace

int main(int argc, char** argv) {
  using namespace cmhost::bench::boundary;
  CLI::App app{"cmhost boundary benchmark"};
  Options options;
  options.sweep = {100, 500, 1000, 4000};
  bool no_jco = false;
  std::string corrupt;
  app.add_flag("--json", options.json, "Print the results as one JSON object");
  app.add_option("--rounds", options.rounds, "Measured rounds per lane in a run (its median reported)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--runs", options.runs, "Runs of the whole sweep (median and range reported)")->check(CLI::Range(1, 100));
  app.add_option("--rows", options.sweep, "The sweep of batch sizes");
  app.add_flag("--no-jco", no_jco, "Skip the jco lane");
  app.add_option("--node", options.node, "The Node.js that runs the jco lane")->capture_default_str();
  app.add_option("--lanes", options.only, "Run only these lanes (and bytes; \"flat\" for the flat lanes), e.g. for profiling")
      ->check(CLI::IsMember(kLaneNames));
  app.add_option("--corrupt", corrupt,
                 "LANE:text or LANE:float: that lane's checked deliveries get one text byte or float bit wrong "
                 "(the run must then fail; for testing the checks)");
  CLI11_PARSE(app, argc, argv);
  const auto asked = [&](const std::string& lane) {
    return options.only.empty() || lane == "bytes" || std::find(options.only.begin(), options.only.end(), lane) != options.only.end();
  };
  const bool jco_listed = std::find(options.only.begin(), options.only.end(), "jco") != options.only.end();
  if (jco_listed && no_jco) {  // a lane asked for is never dropped quietly
    fmt::print(stderr, "boundary: --lanes asks for jco, --no-jco leaves it out\n");
    return 2;
  }
  options.with_jco = !no_jco && asked("jco");
  if (!corrupt.empty()) {
    const auto colon = corrupt.rfind(':');
    const std::string what = colon == std::string::npos ? "" : corrupt.substr(colon + 1);
    if (what != "text" && what != "float") {
      fmt::print(stderr, "boundary: --corrupt takes LANE:text or LANE:float\n");
      return 2;
    }
    const std::string lane = corrupt.substr(0, colon);
    const bool runs = lane == "jco" ? options.with_jco
                                    : asked(lane) && lane != "flat" &&
                                          std::find(kLaneNames.begin(), kLaneNames.end(), lane) != kLaneNames.end();
    if (!runs) {
      fmt::print(stderr, "boundary: --corrupt names {}, which does not run\n", lane);
      return 2;
    }
    options.corrupt.emplace(lane, what == "text" ? Corruption::Text : Corruption::Float);
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "boundary: {}\n", e.what());
    return 1;
  }
}
