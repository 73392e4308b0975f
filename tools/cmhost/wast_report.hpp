// Results of `cmhost wast`: one per top-level command, their printing (text
// or JSON) and the expectations file of commands known not to pass.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace cmhost::tools::wast {

enum class Status { Passed, Failed, Skipped };
const char* to_string(Status status);

struct Result {
  int line = 0;
  std::string command;  // `assert_return`, `component definition`, ...
  Status status = Status::Passed;
  std::string detail;   // failures: expected and actual; skips: the reason; passes: cmhost's own reason, if any
  std::string expected_message;  // assert_trap/invalid/...: the suite's wording, shown next to cmhost's with --verbose
};

struct FileReport {
  std::string file;  // as shown: relative to the directory given, or as given
  std::vector<Result> results;
  size_t count(Status status) const;
};

// `file:line status reason` per command known not to pass; `#` comments.
struct Expectation {
  Status status = Status::Failed;
  std::string reason;
};
using Expectations = std::map<std::string, Expectation>;  // keyed by `file:line`

// Throws cmhost::Error (Usage) when the file cannot be read or a line is not
// an entry.
Expectations read_expectations(const std::string& path);
void write_expectations(const std::string& path, const std::vector<FileReport>& reports);

struct PrintOptions {
  bool json = false;
  bool verbose = false;
  const Expectations* expect = nullptr;  // compare against these when set
};

// Prints every report and the totals; returns the exit status: 1 when a
// command failed (with expectations: when a result differs from them), else 0.
int print_reports(const std::vector<FileReport>& reports, const PrintOptions& options);

}  // namespace cmhost::tools::wast
