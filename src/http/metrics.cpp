#include "metrics.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace cmhost::http {

namespace {

constexpr double kRequestBounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
constexpr double kInstantiationBounds[] = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                           0.0025,  0.005,    0.01,    0.025,  0.05,    0.1};

}  // namespace

Histogram::Histogram(std::span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()), buckets_(bounds.size() + 1) {}

void Histogram::observe(std::chrono::nanoseconds duration) {
  const double seconds = std::chrono::duration<double>(duration).count();
  const size_t bucket = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(duration.count(), 0)), std::memory_order_relaxed);
}

void Histogram::write(std::string& out, const std::string& name, const std::string& help) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  cumulative += buckets_.back().load(std::memory_order_relaxed);
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, cumulative);
  out += fmt::format("{}_sum {}\n", name, static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9);
  out += fmt::format("{}_count {}\n", name, count_.load(std::memory_order_relaxed));
}

ServeMetrics::Counters::Counters() : request_seconds(kRequestBounds), instantiation_seconds(kInstantiationBounds) {}

void ServeMetrics::Counters::request_done(unsigned status, std::chrono::nanoseconds took) {
  requests_by_status[status < requests_by_status.size() ? status : 0].fetch_add(1, std::memory_order_relaxed);
  request_seconds.observe(took);
}

std::string ServeMetrics::Counters::text() const {
  std::string out = "# HELP cmhost_http_requests_total Requests answered, by status (0: none sent).\n"
                    "# TYPE cmhost_http_requests_total counter\n";
  for (size_t status = 0; status < requests_by_status.size(); ++status)
    if (const uint64_t n = requests_by_status[status].load(std::memory_order_relaxed))
      out += fmt::format("cmhost_http_requests_total{{status=\"{}\"}} {}\n", status, n);
  request_seconds.write(out, "cmhost_http_request_duration_seconds",
                        "From a request's head to its response's end.");
  instantiation_seconds.write(out, "cmhost_instantiation_duration_seconds", "Making an instance of the component.");
  out += fmt::format(
      "# HELP cmhost_instances_live Instances of the component alive.\n# TYPE cmhost_instances_live gauge\n"
      "cmhost_instances_live {}\n",
      instances_live.load(std::memory_order_relaxed));
  return out;
}

ServeMetrics::ServeMetrics() : counters_(std::make_unique<Counters>()) {}
ServeMetrics::~ServeMetrics() = default;
std::string ServeMetrics::text() const { return counters_->text(); }

}  // namespace cmhost::http
