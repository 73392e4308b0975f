// A Google Benchmark reporter that also keeps each run's time, so a
// benchmark binary can end with ratios measured in the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace cmhost::bench {

// Real time per iteration and per item (ns) of each run, the median when
// repetitions are aggregated; also CPU time per iteration, which other load
// on the machine disturbs less.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ns_per_iteration, ns_per_item, cpu_ns_per_iteration;

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration && run.aggregate_name != "median") continue;
      const std::string name = run.run_name.str();
      const double to_ns = 1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit);
      ns_per_iteration[name] = run.GetAdjustedRealTime() * to_ns;
      cpu_ns_per_iteration[name] = run.GetAdjustedCPUTime() * to_ns;
      if (auto it = run.counters.find("items_per_second"); it != run.counters.end() && it->second.value > 0)
        ns_per_item[name] = 1e9 / it->second.value;
    }
  }
};

}  // namespace cmhost::bench
