// A C++ host reading a guest's streams (the guest: feed.c, world feed.wit):
// sensor readings as owned records (read), the same visited in place with
// no copy of their strings (read_visit), and a log as bytes taken where the
// guest wrote them (read_direct).
//
//   streams feed.wasm
#include <cmhost/cmhost.hpp>
#include <cmhost/streams.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

// record reading { sensor: string, celsius: f64, at: u64 }: owned, and
// viewed in the guest's memory.
struct Reading {
  std::string sensor;
  double celsius;
  uint64_t at;
};
struct ReadingView {
  std::string_view sensor;
  double celsius;
  uint64_t at;
};
template <>
struct cmhost::abi::typed::Record<Reading> {
  static constexpr auto fields = std::make_tuple(field("sensor", &Reading::sensor), field("celsius", &Reading::celsius),
                                                 field("at", &Reading::at));
};
template <>
struct cmhost::abi::typed::Record<ReadingView> {
  static constexpr auto fields = std::make_tuple(field("sensor", &ReadingView::sensor),
                                                 field("celsius", &ReadingView::celsius), field("at", &ReadingView::at));
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: streams FEED.wasm\n");
    return 2;
  }
  try {
    cmhost::Engine engine;
    cmhost::Store store(engine);
    const auto component = cmhost::Component::from_file(engine, argv[1]);
    const cmhost::Instance feed = cmhost::Linker().instantiate(store, component);
    const cmhost::Func readings = feed.func("readings");

    // Owned values, up to 32 at a time: the guest writes 16 at a time.
    const cmhost::Val forty = cmhost::Val::u32(40);
    cmhost::StreamReader<Reading> owned(store, readings.call(store, {&forty, 1}).at(0));
    std::vector<Reading> all;
    for (;;) {
      std::vector<Reading> batch = owned.read(store, 32);
      if (batch.empty() && owned.ended()) break;
      std::printf("read %zu readings\n", batch.size());
      all.insert(all.end(), batch.begin(), batch.end());
    }
    std::printf("%zu readings, the last from %s at %llu: %.1f C\n", all.size(), all.back().sensor.c_str(),
                static_cast<unsigned long long>(all.back().at), all.back().celsius);

    // In place: each reading seen where the guest wrote it; nothing is
    // built or allocated per reading.
    const cmhost::Val three_hundred = cmhost::Val::u32(300);
    cmhost::StreamReader<Reading> visited(store, readings.call(store, {&three_hundred, 1}).at(0));
    std::map<std::string, double, std::less<>> warmest;
    uint64_t seen = 0;
    for (;;) {
      const uint64_t n = visited.read_visit<ReadingView>(store, [&](const ReadingView& r) {
        auto it = warmest.find(r.sensor);  // a lookup by string_view: no string made
        if (it == warmest.end()) it = warmest.emplace(std::string(r.sensor), r.celsius).first;
        if (r.celsius > it->second) it->second = r.celsius;
      });
      seen += n;
      if (n == 0 && visited.ended()) break;
    }
    std::printf("visited %llu readings:", static_cast<unsigned long long>(seen));
    for (const auto& [sensor, celsius] : warmest) std::printf(" %s %.1f C", sensor.c_str(), celsius);
    std::printf("\n");

    // stream<u8>: the guest's bytes in place; this host copies them to stdout.
    const cmhost::Val lines = cmhost::Val::u32(3);
    cmhost::StreamReader<uint8_t> log(store, feed.func("log").call(store, {&lines, 1}).at(0));
    while (!(log.read_direct(store, [](std::span<const uint8_t> bytes) {
               return std::fwrite(bytes.data(), 1, bytes.size(), stdout);
             }) == 0 &&
             log.ended())) {
    }
    std::printf("log: %llu bytes\n", static_cast<unsigned long long>(log.transferred()));
    return 0;
  } catch (const cmhost::Error& e) {
    std::fprintf(stderr, "streams: %s\n", e.what());
    return 1;
  }
}
