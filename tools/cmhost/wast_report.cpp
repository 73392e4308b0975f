#include "wast_report.hpp"

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
  if (word == "passed") return Status::Passed;
  throw Error(ErrorKind::Usage, where + ": expected `failed` or `skipped`, got `" + word + "`");
}

// A result against the expectations: the status they name, passed if none.
Status expected_status(const Expectations& expect, const std::string& key) {
  const auto it = expect.find(key);
  return it == expect.end() ? Status::Passed : it->second.status;
}

}  // namespace

const char* to_string(Status status) {
  switch (status) {
    case Status::Passed: return "passed";
    case Status::Failed: return "failed";
    case Status::Skipped: return "skipped";
  }
  return "?";
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
    const auto space = line.find(' ', first);
    if (space == std::string::npos) throw Error(ErrorKind::Usage, where + ": expected `file:line status reason`");
    const std::string key = line.substr(first, space - first);
    const auto word_end = line.find(' ', space + 1);
    const std::string word =
        line.substr(space + 1, word_end == std::string::npos ? std::string::npos : word_end - space - 1);
    Expectation e;
    e.status = parse_status(word, where);
    if (word_end != std::string::npos) e.reason = line.substr(word_end + 1);
    if (!out.emplace(key, e).second) throw Error(ErrorKind::Usage, where + ": `" + key + "` is listed twice");
  }
  return out;
}

void write_expectations(const std::string& path, const std::vector<FileReport>& reports) {
  std::ofstream out(path);
  if (!out) throw Error(ErrorKind::Usage, "cannot write " + path);
  out << "# Commands of the Component Model suite that cmhost does not pass: `file:line status reason`.\n"
         "# `cmhost wast --expect` fails when a result differs from this list (a regression, or a\n"
         "# command that now passes and should leave it). Regenerate with --write-expect.\n";
  for (const auto& report : reports)
    for (const auto& r : report.results)
      if (r.status != Status::Passed)
        out << key_of(report, r) << ' ' << to_string(r.status) << ' ' << r.command << ": " << one_line(r.detail)
            << '\n';
}

int print_reports(const std::vector<FileReport>& reports, const PrintOptions& options) {
  size_t passed = 0, failed = 0, skipped = 0;
  for (const auto& report : reports) {
    passed += report.count(Status::Passed);
    failed += report.count(Status::Failed);
    skipped += report.count(Status::Skipped);
  }

  // Against the expectations: every result must have the status they give
  // it (passed when unlisted); listed commands that no longer exist differ too.
  size_t as_expected_passes = 0, as_expected_others = 0;
  std::vector<std::string> unexpected;
  if (options.expect) {
    std::map<std::string, bool> seen_files;
    std::map<std::string, bool> seen_keys;
    for (const auto& report : reports) {
      seen_files[report.file] = true;
      for (const auto& r : report.results) {
        const std::string key = key_of(report, r);
        seen_keys[key] = true;
        const Status want = expected_status(*options.expect, key);
        if (r.status == want) {
          (r.status == Status::Passed ? as_expected_passes : as_expected_others)++;
        } else {
          unexpected.push_back(fmt::format("{} {} {}, expected {}: {}", key, r.command, to_string(r.status),
                                           to_string(want), one_line(r.detail)));
        }
      }
    }
    for (const auto& [key, e] : *options.expect) {
      const std::string file = key.substr(0, key.rfind(':'));
      if (seen_files.count(file) && !seen_keys.count(key))
        unexpected.push_back(fmt::format("{} is listed as {} but is not a command", key, to_string(e.status)));
    }
  }

  if (options.json) {
    nlohmann::json out;
    out["passed"] = passed;
    out["failed"] = failed;
    out["skipped"] = skipped;
    out["files"] = nlohmann::json::array();
    for (const auto& report : reports) {
      nlohmann::json file;
      file["file"] = report.file;
      file["passed"] = report.count(Status::Passed);
      file["failed"] = report.count(Status::Failed);
      file["skipped"] = report.count(Status::Skipped);
      file["results"] = nlohmann::json::array();
      for (const auto& r : report.results)
        file["results"].push_back(
            {{"line", r.line}, {"command", r.command}, {"status", to_string(r.status)}, {"detail", r.detail}});
      out["files"].push_back(std::move(file));
    }
    if (options.expect) out["unexpected"] = unexpected;
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    for (const auto& report : reports) {
      fmt::print("{}: {} passed, {} failed, {} skipped\n", report.file, report.count(Status::Passed),
                 report.count(Status::Failed), report.count(Status::Skipped));
      for (const auto& r : report.results) {
        if (r.status == Status::Failed) {
          fmt::print("  line {}: {} failed: {}\n", r.line, r.command, one_line(r.detail));
        } else if (r.status == Status::Skipped) {
          fmt::print("  line {}: {} skipped: {}\n", r.line, r.command, one_line(r.detail));
        } else if (options.verbose && !r.expected_message.empty()) {
          fmt::print("  line {}: {} passed: expected \"{}\", cmhost: {}\n", r.line, r.command,
                     one_line(r.expected_message), one_line(r.detail));
        }
      }
    }
    if (options.expect) {
      for (const auto& u : unexpected) fmt::print("unexpected: {}\n", u);
      fmt::print("expectations: {} passed as expected, {} known failures and skips, {} unexpected\n",
                 as_expected_passes, as_expected_others, unexpected.size());
    }
    fmt::print("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
  }
  if (options.expect) return unexpected.empty() ? 0 : 1;
  return failed == 0 ? 0 : 1;
}

}  // namespace cmhost::tools::wast
