// What ServeMetrics counts, from any thread (a 0.2 proxy's requests
// instantiate on threads of their own; workers share one ServeMetrics):
// requests by status, their latency, instantiation time and the instances
// alive, written out in Prometheus's text exposition format.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cmhost/http.hpp"

namespace cmhost::http {

class Histogram {
 public:
  // `bounds`: the buckets' upper bounds in seconds, ascending.
  explicit Histogram(std::span<const double> bounds);
  void observe(std::chrono::nanoseconds duration);
  void write(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<uint64_t>> buckets_;  // one per bound, then +Inf; not cumulative
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

struct ServeMetrics::Counters {
  Counters();
  std::array<std::atomic<uint64_t>, 600> requests_by_status{};  // 100 to 599; others at 0
  Histogram request_seconds;
  Histogram instantiation_seconds;
  std::atomic<int64_t> instances_live{0};

  void request_done(unsigned status, std::chrono::nanoseconds took);
  std::string text() const;
};

// What the servers count into (ServeMetrics keeps it from embedders).
struct MetricsAccess {
  static ServeMetrics::Counters& counters(ServeMetrics& metrics) { return *metrics.counters_; }
};

}  // namespace cmhost::http
