#include "report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cmhost/error.hpp"

namespace cmhost::tools::wast {

namespace {

std::string key_of(const FileReport& report, const Result& r) { return fmt::format("{}:{}", report.file, r.line); }

// Details are one line in the text output.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

Status parse_status(const std::string& word, const std::string& where) {
  if (word == "failed") return Status::Failed;
  if (word == "skipped") return Status::Skipped;
  if (word == "unconfirmed") return Status::Unconfirmed;
  throw Error(ErrorKind::Usage, where + ": expected `failed`, `skipped` or `unconfirmed`, got `" + word + "`");
}

// The next space-separated word of `line` from `at`, moving `at` past it.
std::string next_word(const std::string& line, size_t& at) {
  const size_t start = line.find_first_not_of(' ', at);
  if (start == std::string::npos) {
    at = line.size();
    return {};
  }
  const size_t end = std::min(line.find(' ', start), line.size());
  at = end;
  return line.substr(start, end - start);
}

constexpr const char* kCommandsKey = "commands:";

}  // namespace

const char* to_string(Status status) {
  switch (status) {
    case Status::Passed: return "passed";
    case Status::Unconfirmed: return "unconfirmed";
    case Status::Failed: return "failed";
    case Status::Skipped: return "skipped";
  }
  return "?";
}

namespace {
constexpr std::pair<Outcome, const char*> kOutcomeNames[] = {
    {Outcome::Pass, "pass"},         {Outcome::Unreachable, "unreachable"}, {Outcome::Trap, "trap"},
    {Outcome::NoTrap, "no-trap"},    {Outcome::WrongValue, "wrong-value"},  {Outcome::Validation, "validation"},
    {Outcome::Crash, "crash"},       {Outcome::Timeout, "timeout"},         {Outcome::Error, "error"},
    {Outcome::Skip, "skip"},
};
}  // namespace

const char* to_string(Outcome outcome) {
  for (const auto& [o, name] : kOutcomeNames)
    if (o == outcome) return name;
  return "?";
}

std::optional<Outcome> outcome_from_string(const std::string& word) {
  for (const auto& [o, name] : kOutcomeNames)
    if (word == name) return o;
  return std::nullopt;
}

size_t FileReport::count(Status status) const {
  return static_cast<size_t>(
      std::count_if(results.begin(), results.end(), [&](const Result& r) { return r.status == status; }));
}

Expectations read_expectations(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::Usage, "cannot read " + path);
  Expectations out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string where = fmt::format("{}:{}", path, number);
    size_t at = first;
    const std::string key = next_word(line, at);
    if (key == kCommandsKey) {
      const std::string count = next_word(line, at);
      if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos)
        throw Error(ErrorKind::Usage, where + ": expected `commands: N`");
      out.commands = std::stoull(count);
      continue;
    }
    const std::string status = next_word(line, at);
    const std::string outcome = next_word(line, at);
    if (status.empty() || outcome.empty())
      throw Error(ErrorKind::Usage, where + ": expected `file:line status outcome reason`");
    Expectation e;
    e.status = parse_status(status, where);
    const auto parsed = outcome_from_string(outcome);
    if (!parsed) throw Error(ErrorKind::Usage, where + ": unknown outcome `" + outcome + "`");
    e.outcome = *parsed;
    if (at < line.size()) e.reason = line.substr(at + 1);
    if (!out.entries.emplace(key, e).second)
      throw Error(ErrorKind::Usage, where + ": `" + key + "` is listed twice");
  }
  // Without the count, a script that loses or gains commands would go unseen.
  if (!out.commands) throw Error(ErrorKind::Usage, path + ": no `commands: N` line (the number of commands of the run)");
  return out;
}

void write_expectations(const std::string& path, const std::vector<FileReport>& reports) {
  std::ofstream out(path);
  if (!out) throw Error(ErrorKind::Usage, "cannot write " + path);
  size_t commands = 0;
  for (const auto& report : reports) commands += report.results.size();
  out << "# Commands of the Component Model suite that cmhost does not plainly pass:\n"
         "# `file:line status outcome reason`, and the number of commands of the run.\n"
         "# `cmhost wast --expect` fails when a result's status or outcome differs from this list\n"
         "# (a regression, a failure of another kind, or a command that now passes and should\n"
         "# leave it), when a listed script did not run, or when the number of commands differs.\n"
         "# Regenerate with --write-expect.\n"
      << kCommandsKey << ' ' << commands << '\n';
  for (const auto& report : reports)
    for (const auto& r : report.results)
      if (r.status != Status::Passed)
        out << key_of(report, r) << ' ' << to_string(r.status) << ' ' << to_string(r.outcome) << ' ' << r.command
            << ": " << one_line(r.detail) << '\n';
}

int print_reports(const std::vector<FileReport>& reports, const PrintOptions& options) {
  size_t passed = 0, unconfirmed = 0, failed = 0, skipped = 0, commands = 0;
  for (const auto& report : reports) {
    passed += report.count(Status::Passed);
    unconfirmed += report.count(Status::Unconfirmed);
    failed += report.count(Status::Failed);
    skipped += report.count(Status::Skipped);
    commands += report.results.size();
  }

  // Against the expectations: every result must have the status and outcome
  // they give it (a plain pass when unlisted); a listed command that no
  // longer exists, a listed script that did not run and another number of
  // commands differ too.
  size_t as_expected_passes = 0, as_expected_unconfirmed = 0, as_expected_others = 0;
  std::vector<std::string> unexpected;
  if (options.expect) {
    std::map<std::string, bool> seen_files;
    std::map<std::string, bool> seen_keys;
    for (const auto& report : reports) {
      seen_files[report.file] = true;
      for (const auto& r : report.results) {
        const std::string key = key_of(report, r);
        seen_keys[key] = true;
        const auto it = options.expect->entries.find(key);
        const Status want = it == options.expect->entries.end() ? Status::Passed : it->second.status;
        const Outcome want_outcome = it == options.expect->entries.end() ? Outcome::Pass : it->second.outcome;
        if (r.status == want && r.outcome == want_outcome) {
          (r.status == Status::Passed        ? as_expected_passes
           : r.status == Status::Unconfirmed ? as_expected_unconfirmed
                                             : as_expected_others)++;
        } else {
          unexpected.push_back(fmt::format("{} {} {} ({}), expected {} ({}): {}", key, r.command, to_string(r.status),
                                           to_string(r.outcome), to_string(want), to_string(want_outcome),
                                           one_line(r.detail)));
        }
      }
    }
    std::map<std::string, bool> missing_files;
    for (const auto& [key, e] : options.expect->entries) {
      const std::string file = key.substr(0, key.rfind(':'));
      if (!seen_files.count(file))
        missing_files[file] = true;
      else if (!seen_keys.count(key))
        unexpected.push_back(fmt::format("{} is listed as {} but is not a command", key, to_string(e.status)));
    }
    for (const auto& [file, _] : missing_files)
      unexpected.push_back(fmt::format("{} is listed but did not run", file));
    if (*options.expect->commands != commands)
      unexpected.push_back(fmt::format("{} commands ran, the expectations count {}", commands,
                                       *options.expect->commands));
  }

  if (options.json) {
    nlohmann::json out;
    out["passed"] = passed;
    out["unconfirmed"] = unconfirmed;
    out["failed"] = failed;
    out["skipped"] = skipped;
    out["files"] = nlohmann::json::array();
    for (const auto& report : reports) {
      nlohmann::json file;
      file["file"] = report.file;
      file["passed"] = report.count(Status::Passed);
      file["unconfirmed"] = report.count(Status::Unconfirmed);
      file["failed"] = report.count(Status::Failed);
      file["skipped"] = report.count(Status::Skipped);
      file["results"] = nlohmann::json::array();
      for (const auto& r : report.results)
        file["results"].push_back({{"line", r.line},
                                   {"command", r.command},
                                   {"status", to_string(r.status)},
                                   {"outcome", to_string(r.outcome)},
                                   {"detail", r.detail},
                                   {"expected_message", r.expected_message}});
      out["files"].push_back(std::move(file));
    }
    if (options.expect) out["unexpected"] = unexpected;
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    for (const auto& report : reports) {
      fmt::print("{}: {} passed, {} failed, {} skipped", report.file, report.count(Status::Passed),
                 report.count(Status::Failed), report.count(Status::Skipped));
      if (const size_t u = report.count(Status::Unconfirmed)) fmt::print(", {} unconfirmed", u);
      fmt::print("\n");
      for (const auto& r : report.results) {
        if (r.status == Status::Failed) {
          fmt::print("  line {}: {} failed ({}): {}\n", r.line, r.command, to_string(r.outcome), one_line(r.detail));
        } else if (r.status == Status::Skipped) {
          fmt::print("  line {}: {} skipped: {}\n", r.line, r.command, one_line(r.detail));
        } else if (r.status == Status::Unconfirmed) {
          fmt::print("  line {}: {} unconfirmed: expected \"{}\", trapped only at the script's own `unreachable`\n",
                     r.line, r.command, one_line(r.expected_message));
        } else if (options.verbose && !r.expected_message.empty()) {
          fmt::print("  line {}: {} passed: expected \"{}\", cmhost: {}\n", r.line, r.command,
                     one_line(r.expected_message), one_line(r.detail));
        }
      }
    }
    if (options.expect) {
      for (const auto& u : unexpected) fmt::print("unexpected: {}\n", u);
      fmt::print("expectations: {} passed as expected, {} unconfirmed as expected, {} known failures and skips, {} "
                 "unexpected\n",
                 as_expected_passes, as_expected_unconfirmed, as_expected_others, unexpected.size());
    }
    fmt::print("{} passed, {} failed, {} skipped", passed, failed, skipped);
    if (unconfirmed) fmt::print(", {} unconfirmed", unconfirmed);
    fmt::print("\n");
  }
  if (options.expect) return unexpected.empty() ? 0 : 1;
  return failed == 0 ? 0 : 1;
}
}  // namespace cmhost::tools::wast

