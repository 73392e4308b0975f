// The boundary benchmark: a batch of DOM mutations taken from a guest by
// each lane, delivered to the same sink, timed round by round in one
// process. Lanes: bytes (hand-written decoder), dynamic (Vals), typed (C++
// structs by the typed lifts), visitor (operands read in place), floor (the
// typed lane's C++ objects alone, no ABI), and jco (the component
// transpiled to JS, run by a Node child that times each of its turns
// itself, in the same rounds as the others). Stream lanes take the same
// batch as a stream<operation> (or a stream<u8> of frames) written K
// operations at a time, read by the host's stream ends: bytes-stream
// (read_direct, the same decoder), visitor-stream (read_visit), typed-stream
// (read_into frame containers), dynamic-stream (Vals), timed beside the
// bytes, visitor, typed and dynamic list lanes they are compared with (in
// sweeps of their own once jco's are done). Plus flat lanes:
// 1 MiB list<u8> each way against memcpy, stream<u8> each way in 64 KiB
// chunks against memcpy (the guest on the stream lanes' engine), and a u32
// round trip.
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
#include <limits>
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
#include <thread>
#include <vector>

#include "arena.hpp"
#include "../common/components.hpp"
#include "byte_decoder.hpp"
#include "cmhost/cmhost.hpp"
#include "cmhost/streams.hpp"
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

// The bytes of the whole frames at the start of `bytes` (PROTOCOL.md).
size_t whole_frames(std::span<const uint8_t> bytes) {
  size_t at = 0;
  while (bytes.size() - at >= 8) {
    uint32_t frame_len;
    std::memcpy(&frame_len, bytes.data() + at, 4);
    if (frame_len < 8 || frame_len > bytes.size() - at) break;
    at += frame_len;
  }
  return at;
}

// The chunk sizes of the stream lanes (operations per guest write; 0: the
// whole batch in one write), and their names.
const std::vector<uint32_t> kChunks = {64, 1024, 0};
std::string chunk_name(uint32_t chunk) { return chunk ? std::to_string(chunk) : "all"; }
// Each stream lane's list form, its "vs list" reference.
const std::map<std::string, std::string> kListForm = {
    {"bytes-stream", "bytes"}, {"visitor-stream", "visitor"}, {"typed-stream", "typed"}, {"dynamic-stream", "dynamic"}};
// "visitor-stream/64" is the lane "visitor-stream" on chunks of 64.
std::string lane_base(const std::string& name) { return name.substr(0, name.find('/')); }

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
    take_stream_.emplace(instance_->func("take-stream"));
    take_byte_stream_.emplace(instance_->func("take-byte-stream"));
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
             const abi::typed::FrameScope frame(arena, abi::typed::FrameScope::windowed);
             void* slot = arena.allocate(sizeof(FrameOps), alignof(FrameOps));
             const FrameOps& ops = *std::construct_at(static_cast<FrameOps*>(slot), *floor_source_);
             for (const auto& op : ops) deliver(op, sink);
           });
         }},
    };
  }

  // The stream lanes on chunks of `chunk` operations, which this instance's
  // guest is set to (one chunk size per instance).
  std::vector<Lane> stream_lanes(uint32_t chunk) {
    const Val k = Val::u32(chunk);
    instance_->func("set-chunk").call(store_, {&k, 1});
    const std::string suffix = "/" + chunk_name(chunk);
    return {
        {"bytes-stream" + suffix,
         [this](Sink& sink) {
           StreamReader<uint8_t> reader(store_, take_byte_stream_->call(store_, {}).at(0));
           for (;;) {
             const uint64_t took = reader.read_direct(store_, [&](std::span<const uint8_t> bytes) {
               const size_t whole = whole_frames(bytes);
               if (whole == 0 && !bytes.empty()) throw std::runtime_error("bytes-stream: a write split a frame");
               decode_bytes(bytes.first(whole), sink);
               return whole;
             });
             if (took == 0 && reader.ended()) break;
           }
         }},
        {"visitor-stream" + suffix,
         [this](Sink& sink) {
           StreamReader<OperationView> reader(store_, take_stream_->call(store_, {}).at(0));
           const auto visit = [&]<size_t I>(std::in_place_index_t<I>, const auto& payload) { deliver<I>(payload, sink); };
           while (!(reader.read_visit(store_, visit) == 0 && reader.ended())) {
           }
         }},
        {"typed-stream" + suffix,
         [this](Sink& sink) {
           // Each chunk loaded into frame containers of its own, delivered,
           // and left in the arena (as the typed lane leaves its list):
           // nothing is destroyed one by one.
           arena_.run([&](std::pmr::monotonic_buffer_resource& arena) {
             StreamReader<generated::Operation> reader(store_, take_stream_->call(store_, {}).at(0));
             for (;;) {
               FrameOps& ops = *std::construct_at(static_cast<FrameOps*>(arena.allocate(sizeof(FrameOps), alignof(FrameOps))));
               if (reader.read_into(store_, ops, arena) == 0 && reader.ended()) break;
               for (const auto& op : ops) deliver(op, sink);
             }
           });
         }},
        {"dynamic-stream" + suffix,
         [this](Sink& sink) {
           StreamReader<Val> reader(store_, take_stream_->call(store_, {}).at(0));
           for (;;) {
             const Val ops = reader.read_list(store_, std::numeric_limits<size_t>::max());
             if (ops.list_size() == 0 && reader.ended()) break;
             for (const Val& op : ops.items()) deliver_val(op, sink);
           }
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
  std::optional<Func> take_typed_, take_bytes_, build_typed_, build_bytes_, take_stream_, take_byte_stream_;
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
  // jco's lift alone: the same calls without the walk.
  double lift_ns(uint64_t reps) { return request(fmt::format("lift {}", reps)).at("ns").get<double>(); }

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
  // The engine of the stream lanes' guests (a stream has guest work per
  // chunk: its callback and its write, which the interpreter runs at
  // about 1.5 us a chunk against 0.3 ahead of time).
  std::string stream_engine = "aot";
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

// The stream lanes of one chunk size (bytes-stream always: the stream
// lanes' ratios are to it).
std::vector<Lane> selected_stream_lanes(Boundary& boundary, uint32_t chunk, const std::vector<std::string>& only) {
  std::vector<Lane> lanes = boundary.stream_lanes(chunk);
  if (!only.empty())
    std::erase_if(lanes, [&](const Lane& l) {
      const std::string base = lane_base(l.name);
      return base != "bytes-stream" && std::find(only.begin(), only.end(), base) == only.end();
    });
  return lanes;
}

bool wants_streams(const std::vector<std::string>& only) {
  if (only.empty()) return true;
  for (const char* lane : {"bytes-stream", "visitor-stream", "typed-stream", "dynamic-stream"})
    if (std::find(only.begin(), only.end(), lane) != only.end()) return true;
  return false;
}

// The coverage batch through every lane, before any timing.
void check_coverage(NodeLane* node, const Options& options) {
  Boundary boundary;
  boundary.prepare_coverage();
  std::vector<Lane> lanes = selected_lanes(boundary, nullptr, options.only);
  std::erase_if(lanes, [](const Lane& l) { return l.builds; });
  // Streams in chunks of 4 operations: several writes, the long text in one.
  Boundary streaming;
  if (wants_streams(options.only)) {
    streaming.prepare_coverage();
    for (Lane& lane : selected_stream_lanes(streaming, 4, options.only)) lanes.push_back(std::move(lane));
  }
  if (node) node->prepare_coverage();
  check_lanes("coverage batch", lanes, node, boundary.prepared_operations(), options);
}

using LaneTimes = std::map<std::string, double>;  // lane -> median ns per element

// Which lanes a sweep times: the list lanes (with jco's), the stream lanes
// with the list forms they are compared with, or all of them.
enum class Pass { Lists, Streams, All };

// Times every lane at every batch size, interleaved: each round runs each
// size's lanes in turn, jco's last, so a change in machine speed during the
// run falls on all of them alike (lanes and sizes are compared with one
// another). Every size's batch is checked first.
std::map<uint32_t, LaneTimes> run_sweep(NodeLane* node, const Options& options, Pass pass) {
  struct Size {
    uint32_t rows;
    uint64_t elements, reps;
    std::unique_ptr<Boundary> boundary, aot;
    std::vector<std::unique_ptr<Boundary>> streaming;  // one per chunk size
    std::vector<Lane> lanes;
    std::map<std::string, std::vector<double>> samples;
  };
  std::vector<Size> sizes;
  for (uint32_t rows : options.sweep) {
    Size& s = sizes.emplace_back(Size{rows, 7 + uint64_t{8} * rows, 0, std::make_unique<Boundary>(),
                                      std::make_unique<Boundary>(engine_named("aot")), {}, {}, {}});
    s.boundary->prepare(rows);
    s.aot->prepare(rows);
    s.lanes = selected_lanes(*s.boundary, s.aot.get(), options.only);
    if (pass == Pass::Streams)
      std::erase_if(s.lanes, [](const Lane& l) {
        return std::none_of(kListForm.begin(), kListForm.end(), [&](const auto& f) { return f.second == l.name; });
      });
    if (pass != Pass::Lists && wants_streams(options.only))
      for (uint32_t chunk : kChunks) {
        Boundary& b = *s.streaming.emplace_back(std::make_unique<Boundary>(engine_named(options.stream_engine)));
        b.prepare(rows);
        for (Lane& lane : selected_stream_lanes(b, chunk, options.only)) s.lanes.push_back(std::move(lane));
      }
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
        const double lift = node->lift_ns(s.reps);
        // V8 collects a timed run's garbage on threads of its own, which
        // would run beside the next lanes on the other core: let them end.
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        if (round >= 0) {
          s.samples["jco"].push_back(ns / double(s.reps * s.elements));
          s.samples["jco-lift"].push_back(lift / double(s.reps * s.elements));
        }
      }
    }
  std::map<uint32_t, LaneTimes> out;
  for (Size& s : sizes)
    for (auto& [name, v] : s.samples) out[s.rows][name] = median(v);
  return out;
}

// Flat lanes: 1 MiB list<u8> each way against memcpy, and a u32 round trip.
nlohmann::json run_flat(int rounds, const std::string& stream_engine) {
  Engine engine;
  Component component = Component::from_file(engine, component_path("flat"));
  Store store(engine);
  Instance instance = Linker().instantiate(store, component);
  const Func get = instance.func("get-bytes"), put = instance.func("put-bytes"), add = instance.func("add-one");
  // The stream lanes' guest runs on the stream lanes' engine: it does work per chunk.
  Engine streaming_engine(engine_named(stream_engine));
  Component streaming_component = Component::from_file(streaming_engine, component_path("flat"));
  Store streaming_store(streaming_engine);
  Instance streaming = Linker().instantiate(streaming_store, streaming_component);
  const Func stream_out = streaming.func("stream-out"), stream_in = streaming.func("stream-in");
  constexpr uint32_t kMiB = 1 << 20;
  const Val n = Val::u32(kMiB);
  std::vector<uint8_t> src(kMiB, 7), dst(kMiB);
  const Val bytes = Val::bytes(src);
  std::vector<double> memcpy_new_ns, memcpy_ns, out_ns, in_ns, call_ns, stream_out_ns, stream_in_ns;
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
    // stream<u8>, 64 KiB per guest copy: read in place into the host's
    // buffer, and written from it straight into the guest's reads.
    const double so = time([&] {
      StreamReader<uint8_t> reader(streaming_store, stream_out.call(streaming_store, {&n, 1}).at(0));
      size_t at = 0;
      for (;;) {
        const uint64_t took = reader.read_direct(streaming_store, [&](std::span<const uint8_t> b) {
          std::memcpy(dst.data() + at, b.data(), b.size());
          at += b.size();
          return b.size();
        });
        if (took == 0 && reader.ended()) break;
      }
      if (at != kMiB) throw std::runtime_error("stream-out");
    }, 50);
    const double si = time([&] {
      StreamWriter<uint8_t> writer(streaming_store, abi::Type::u8());
      PendingCall in = stream_in.call_async(streaming_store, std::vector<Val>{writer.readable()});
      writer.write_direct(streaming_store, src);
      writer.close();
      if (in.wait(streaming_store).at(0).as_u32() != kMiB) throw std::runtime_error("stream-in");
    }, 50);
    const Val x = Val::u32(41);
    const double c = time([&] { if (add.call(store, {&x, 1})[0].as_u32() != 42) throw std::runtime_error("add-one"); }, 20000);
    if (round < 0) continue;
    memcpy_new_ns.push_back(m_new), memcpy_ns.push_back(m), out_ns.push_back(o), in_ns.push_back(i), call_ns.push_back(c);
    stream_out_ns.push_back(so), stream_in_ns.push_back(si);
  }
  const double m = median(memcpy_ns), m_new = median(memcpy_new_ns);
  return {{"memcpy_1mib_ns", m},
          {"memcpy_1mib_new_buffer_ns", m_new},
          {"list_u8_1mib_guest_to_host_ns", median(out_ns)},
          {"list_u8_1mib_guest_to_host_vs_memcpy", median(out_ns) / m_new},
          {"list_u8_1mib_host_to_guest_ns", median(in_ns)},
          {"list_u8_1mib_host_to_guest_vs_memcpy", median(in_ns) / m},
          {"stream_u8_1mib_guest_to_host_ns", median(stream_out_ns)},
          {"stream_u8_1mib_guest_to_host_vs_memcpy", median(stream_out_ns) / m},
          {"stream_u8_1mib_host_to_guest_ns", median(stream_in_ns)},
          {"stream_u8_1mib_host_to_guest_vs_memcpy", median(stream_in_ns) / m},
          {"stream_u8_engine", stream_engine},
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

  // The stream lanes have no jco counterpart, and V8's threads beside them
  // on the other core moved their figures by up to a tenth: with jco in the
  // run, they are timed in sweeps of their own once the Node child is gone.
  const bool streams_apart = jco && wants_streams(options.only);
  std::vector<std::map<uint32_t, LaneTimes>> runs, stream_runs;
  for (int i = 0; i < options.runs; ++i)
    runs.push_back(run_sweep(jco, options, streams_apart ? Pass::Lists : Pass::All));
  node.reset();
  if (streams_apart)
    for (int i = 0; i < options.runs; ++i) stream_runs.push_back(run_sweep(nullptr, options, Pass::Streams));
  const auto& streamed = streams_apart ? stream_runs : runs;
  const bool with_flat = options.only.empty() || std::find(options.only.begin(), options.only.end(), "flat") != options.only.end();
  const nlohmann::json flat = with_flat ? run_flat(options.rounds, options.stream_engine) : nlohmann::json::object();

  const std::vector<std::string> order = {"bytes",       "dynamic",  "typed",
                                          "visitor",     "floor",    "jco", "jco-lift",
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

  // Stream lanes, per size and chunk: ns per element, the ratio to
  // bytes-stream of the same chunk, and to the lane's list form (vs_list).
  const std::vector<std::string> stream_order = {"bytes-stream", "visitor-stream", "typed-stream", "dynamic-stream"};
  nlohmann::json stream = nlohmann::json::object();
  for (uint32_t rows : options.sweep)
    for (uint32_t chunk : kChunks)
      for (const auto& lane : stream_order) {
        const std::string name = lane + "/" + chunk_name(chunk);
        if (!streamed[0].at(rows).count(name)) continue;
        const std::string bytes = "bytes-stream/" + chunk_name(chunk);
        const std::string list = kListForm.at(lane);
        std::vector<double> ns, ratio, vs_list;
        for (const auto& r : streamed) {
          ns.push_back(r.at(rows).at(name));
          ratio.push_back(r.at(rows).at(name) / r.at(rows).at(bytes));
          if (r.at(rows).count(list)) vs_list.push_back(r.at(rows).at(name) / r.at(rows).at(list));
        }
        const Spread n = spread(ns), q = spread(ratio);
        nlohmann::json entry = {{"ns_per_element", n.median}, {"ns_per_element_range", {n.low, n.high}},
                                {"ratio", q.median},          {"ratio_range", {q.low, q.high}},
                                {"ratio_per_run", ratio}};
        if (!vs_list.empty()) entry["vs_list"] = spread(vs_list).median;
        stream[std::to_string(rows)][chunk_name(chunk)][lane] = entry;
      }
  nlohmann::json stream_flatness = nlohmann::json::object();
  for (uint32_t chunk : kChunks)
    for (const auto& lane : stream_order) {
      std::vector<double> v;
      for (uint32_t rows : options.sweep) {
        const auto& by_rows = stream[std::to_string(rows)];
        if (by_rows.contains(chunk_name(chunk)) && by_rows[chunk_name(chunk)].contains(lane))
          v.push_back(by_rows[chunk_name(chunk)][lane]["ns_per_element"].get<double>());
      }
      if (v.size() < 2) continue;
      double mean = 0, worst = 0;
      for (double x : v) mean += x / double(v.size());
      for (double x : v) worst = std::max(worst, std::abs(x - mean) / mean);
      stream_flatness[chunk_name(chunk)][lane] = {{"mean_ns_per_element", mean}, {"largest_deviation", worst}};
    }
  if (!stream.empty()) {
    out["stream_engine"] = options.stream_engine;
    out["stream"] = stream;
    out["stream_sweep_flatness"] = stream_flatness;
  }
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
  if (!stream.empty()) {
    fmt::print("\nstream lanes ({} guests): the same batch as a stream written K operations at a time; ns per\n"
               "element and ratio to bytes-stream of the same K, median [range]; (xN.NN: to the lane's list form)\n\n",
               options.stream_engine);
    fmt::print("{:>6} {:>5}", "rows", "K");
    for (const auto& lane : stream_order) fmt::print(" {:>30}", lane);
    fmt::print("\n");
    for (uint32_t rows : options.sweep)
      for (uint32_t chunk : kChunks) {
        const auto& by_rows = stream[std::to_string(rows)];
        if (!by_rows.contains(chunk_name(chunk))) continue;
        const auto& lanes = by_rows[chunk_name(chunk)];
        fmt::print("{:>6} {:>5}", rows, chunk_name(chunk));
        for (const auto& lane : stream_order) {
          if (!lanes.contains(lane)) {
            fmt::print(" {:>30}", "-");
            continue;
          }
          const auto& l = lanes[lane];
          const std::string vs = l.contains("vs_list") ? fmt::format(" (x{:.2f})", l["vs_list"].get<double>()) : "";
          fmt::print(" {:>30}", lane == "bytes-stream"
                                    ? fmt::format("{:.1f} ns{}", l["ns_per_element"].get<double>(), vs)
                                    : fmt::format("{:.2f}x [{:.2f}-{:.2f}]{}", l["ratio"].get<double>(),
                                                  l["ratio_range"][0].get<double>(), l["ratio_range"][1].get<double>(), vs));
        }
        fmt::print("\n");
      }
    for (uint32_t chunk : kChunks) {
      if (!stream_flatness.contains(chunk_name(chunk))) continue;
      fmt::print("{:>6} {:>5}", "flat ±", chunk_name(chunk));
      for (const auto& lane : stream_order)
        fmt::print(" {:>30}", stream_flatness[chunk_name(chunk)].contains(lane)
                                  ? fmt::format("{:.0f}%", 100 * stream_flatness[chunk_name(chunk)][lane]["largest_deviation"].get<double>())
                                  : "-");
      fmt::print("\n");
    }
  }
  if (!with_flat) return 0;
  fmt::print("\nflat lanes:\n");
  fmt::print("  1 MiB list<u8> guest->host: {:.0f} ns = {:.2f}x memcpy into a new buffer ({:.0f} ns)\n",
             flat["list_u8_1mib_guest_to_host_ns"].get<double>(), flat["list_u8_1mib_guest_to_host_vs_memcpy"].get<double>(),
             flat["memcpy_1mib_new_buffer_ns"].get<double>());
  fmt::print("  1 MiB list<u8> host->guest: {:.0f} ns = {:.2f}x memcpy ({:.0f} ns)\n",
             flat["list_u8_1mib_host_to_guest_ns"].get<double>(), flat["list_u8_1mib_host_to_guest_vs_memcpy"].get<double>(),
             flat["memcpy_1mib_ns"].get<double>());
  fmt::print("  1 MiB stream<u8> guest->host, 64 KiB writes ({} guest): {:.0f} ns = {:.2f}x memcpy ({:.0f} ns)\n",
             options.stream_engine,
             flat["stream_u8_1mib_guest_to_host_ns"].get<double>(),
             flat["stream_u8_1mib_guest_to_host_vs_memcpy"].get<double>(), flat["memcpy_1mib_ns"].get<double>());
  fmt::print("  1 MiB stream<u8> host->guest, 64 KiB reads ({} guest): {:.0f} ns = {:.2f}x memcpy ({:.0f} ns)\n",
             options.stream_engine,
             flat["stream_u8_1mib_host_to_guest_ns"].get<double>(),
             flat["stream_u8_1mib_host_to_guest_vs_memcpy"].get<double>(), flat["memcpy_1mib_ns"].get<double>());
  fmt::print("  u32 round trip: {:.0f} ns/call\n", flat["u32_round_trip_ns_per_call"].get<double>());
  return 0;
}

}  // namespace
}  // namespace cmhost::bench::boundary

namespace {
const std::vector<std::string> kLaneNames = {"bytes", "dynamic", "typed", "typed-pmr", "typed-heap",
                                             "visitor", "floor", "jco", "flat", "build-typed-interp",
                                             "build-bytes-interp", "build-typed-aot", "build-bytes-aot",
                                             "bytes-stream", "visitor-stream", "typed-stream", "dynamic-stream"};
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
  app.add_option("--stream-engine", options.stream_engine, "The engine of the stream lanes' guests")
      ->check(CLI::IsMember({"interp", "aot"}))
      ->capture_default_str();
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
    // A stream lane is named with its chunk size: visitor-stream/4 is the
    // coverage check's.
    const std::string lane = corrupt.substr(0, colon);
    const std::string base = lane_base(lane);
    const bool runs = lane == "jco" ? options.with_jco
                                    : asked(base) && base != "flat" &&
                                          std::find(kLaneNames.begin(), kLaneNames.end(), base) != kLaneNames.end();
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
