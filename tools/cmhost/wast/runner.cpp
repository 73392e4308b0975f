#include "runner.hpp"

#include <signal.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "cmhost/error.hpp"
#include "support/files.hpp"
#include "report.hpp"
#include "sandbox.hpp"
#include "script.hpp"

namespace cmhost::tools::wast {

namespace fs = std::filesystem;

namespace {

struct ScriptFile {
  fs::path path;
  std::string display;
  std::optional<std::string> not_run;  // why every command is skipped
  std::vector<Command> commands;
  std::string unreadable;  // why the file could not be parsed
};

// The suite lists scripts that run ahead of every implementation in
// `nyi.txt` (`./dir/file.wast` per line, `#` comments) beside the scripts.
class NyiLists {
 public:
  std::optional<std::string> lookup(const fs::path& file) {
    for (fs::path dir = fs::absolute(file).parent_path();; dir = dir.parent_path()) {
      const auto& entries = list_in(dir);
      if (entries) {
        const std::string relative = fs::relative(fs::absolute(file), dir).generic_string();
        if (entries->count(relative)) return "listed in the suite's nyi.txt (not yet implemented upstream)";
        return std::nullopt;
      }
      if (dir == dir.root_path()) return std::nullopt;
    }
  }

 private:
  const std::optional<std::set<std::string>>& list_in(const fs::path& dir) {
    auto [it, inserted] = lists_.try_emplace(dir.string());
    if (!inserted) return it->second;
    std::ifstream in(dir / "nyi.txt");
    if (!in) return it->second;
    std::set<std::string> entries;
    std::string line;
    while (std::getline(in, line)) {
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (line.empty() || line[0] == '#') continue;
      if (line.starts_with("./")) line.erase(0, 2);
      entries.insert(line);
    }
    it->second = std::move(entries);
    return it->second;
  }

  std::map<std::string, std::optional<std::set<std::string>>> lists_;
};

std::vector<ScriptFile> collect(const std::vector<std::string>& paths) {
  std::vector<ScriptFile> files;
  for (const auto& arg : paths) {
    const fs::path path(arg);
    if (fs::is_directory(path)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(path))
        if (entry.is_regular_file() && entry.path().extension() == ".wast") found.push_back(entry.path());
      std::sort(found.begin(), found.end());
      for (const auto& f : found) files.push_back({f, fs::relative(f, path).generic_string(), {}, {}, {}});
    } else if (fs::is_regular_file(path)) {
      files.push_back({path, arg, {}, {}, {}});
    } else {
      throw Error(ErrorKind::Usage, "no such file or directory: " + arg);
    }
  }
  return files;
}

std::string read_text(const fs::path& path) { return support::read_text_file(path.string()); }

// The component a command carries: its own, or that of the component it
// wraps (assert_trap of a component).
const ComponentSource* component_of(const Command& c) {
  if (c.component) return &*c.component;
  if (c.subject && c.subject->component) return &*c.subject->component;
  return nullptr;
}

}  // namespace

int run_wast(const WastOptions& options) {
  ::signal(SIGPIPE, SIG_IGN);  // a helper that dies must show up as an error, not end the run
  std::vector<ScriptFile> files;
  std::optional<Expectations> expectations;
  try {
    files = collect(options.paths);
    if (options.expect_file) expectations = read_expectations(*options.expect_file);
  } catch (const Error& e) {
    fmt::print(stderr, "cmhost: {}\n", e.what());
    return 2;
  }

  NyiLists nyi;
  std::vector<std::string> texts;
  for (auto& file : files) {
    file.not_run = nyi.lookup(file.path);
    try {
      file.commands = parse_script(read_text(file.path));
    } catch (const Error& e) {
      file.unreadable = e.what();
      continue;
    }
    if (file.not_run) continue;
    for (const auto& c : file.commands)
      if (const auto* source = component_of(c); source && source->form != ComponentSource::Form::Binary)
        texts.push_back(source->text);
  }

  // Every text of the run in one batch: one round trip to jco, or none when
  // the cache has them all.
  std::map<std::string, Assembled> assembled;
  try {
    Assembler assembler(options.assembler);
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    auto binaries = assembler.assemble(texts);
    for (size_t i = 0; i < texts.size(); ++i) assembled.emplace(texts[i], std::move(binaries[i]));
    if (options.verbose && !options.json)
      fmt::print(stderr, "cmhost wast: {} component texts, {} from the cache, {} assembled by jco\n", texts.size(),
                 assembler.cache_hits(), assembler.assembled());
  } catch (const Error& e) {
    fmt::print(stderr, "cmhost: cannot assemble component text: {}\n", e.what());
    return 2;
  }

  std::vector<FileReport> reports;
  for (const auto& file : files) {
    FileReport report;
    report.file = file.display;
    if (!file.unreadable.empty()) {
      report.results.push_back(
          {0, "script", Status::Failed, Outcome::Error, "cannot parse the script: " + file.unreadable, {}});
    } else if (file.not_run) {
      for (const auto& c : file.commands)
        report.results.push_back({c.line, c.keyword, Status::Skipped, Outcome::Skip, *file.not_run, c.message});
    } else {
      std::vector<std::optional<Assembled>> binaries(file.commands.size());
      for (size_t i = 0; i < file.commands.size(); ++i) {
        const auto* source = component_of(file.commands[i]);
        if (!source) continue;
        if (source->form == ComponentSource::Form::Binary)
          binaries[i] = Assembled{true, source->bytes, {}};
        else
          binaries[i] = assembled.at(source->text);
      }
      std::optional<int> crash_at_line;
      if (options.inject_crash && options.inject_crash->starts_with(file.display + ":"))
        crash_at_line = std::atoi(options.inject_crash->c_str() + file.display.size() + 1);
      try {
        report.results = options.sandbox
                             ? run_sandboxed(options.engine, file.commands, binaries, options.timeout_seconds, crash_at_line)
                             : run_in_process(options.engine, file.commands, binaries);
      } catch (const Error& e) {
        fmt::print(stderr, "cmhost: {}: {}\n", file.display, e.what());
        return 2;
      }
    }
    reports.push_back(std::move(report));
  }

  if (options.write_expect_file) {
    try {
      write_expectations(*options.write_expect_file, reports);
    } catch (const Error& e) {
      fmt::print(stderr, "cmhost: {}\n", e.what());
      return 2;
    }
  }
  PrintOptions print;
  print.json = options.json;
  print.verbose = options.verbose;
  print.expect = expectations ? &*expectations : nullptr;
  return print_reports(reports, print);
}

}  // namespace cmhost::tools::wast
