// Results of `cmhost wast`: one per top-level command, their printing (text
// or JSON) and the expectations file of commands known not to pass.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cmhost::tools::wast {

// Unconfirmed: an assert_trap that trapped only at the script's own
// `unreachable` ("should not get here") while it expects another trap, so
// the trap it asks about was never seen.
enum class Status { Passed, Unconfirmed, Failed, Skipped };
const char* to_string(Status status);

// What kind of result, finer than the status; `--expect` compares both, so
// a known failure that changes kind (a wrong value becoming a crash) is
// reported.
enum class Outcome {
  Pass,         // passed
  Unreachable,  // unconfirmed: trapped at the script's own `unreachable`
  Trap,         // trapped where a result or an instance was expected
  NoTrap,       // returned (or instantiated) where a trap was expected
  WrongValue,   // returned another value, arity or type than expected
  Validation,   // accepted what should be rejected, or rejected what is valid
  Crash,        // cmhost died
  Timeout,      // the command hung
  Error,        // anything else: an unsupported command, a missing export, ...
  Skip,         // skipped
};
const char* to_string(Outcome outcome);
std::optional<Outcome> outcome_from_string(const std::string& word);

struct Result {
  int line = 0;
  std::string command;  // `assert_return`, `component definition`, ...
  Status status = Status::Passed;
  Outcome outcome = Outcome::Pass;
  std::string detail;   // failures: expected and actual; skips: the reason; passes: cmhost's own reason, if any
  std::string expected_message;  // assert_trap/invalid/...: the suite's wording, shown next to cmhost's with --verbose

  void set(Status s, Outcome o, std::string d) {
    status = s;
    outcome = o;
    detail = std::move(d);
  }
};

struct FileReport {
  std::string file;  // as shown: relative to the directory given, or as given
  std::vector<Result> results;
  size_t count(Status status) const;
};

// `file:line status outcome reason` per command that is not a plain pass,
// `commands: N` for the number of commands of the whole run; `#` comments.
struct Expectation {
  Status status = Status::Failed;
  Outcome outcome = Outcome::Error;
  std::string reason;
};
struct Expectations {
  std::map<std::string, Expectation> entries;  // keyed by `file:line`
  std::optional<size_t> commands;
};

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
// command failed (with expectations: when a result differs from them, a
// listed script did not run, or the number of commands differs), else 0.
int print_reports(const std::vector<FileReport>& reports, const PrintOptions& options);

}  // namespace cmhost::tools::wast
