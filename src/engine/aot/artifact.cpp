// Building an artifact: every core module translated to C (translate.hpp)
// with its glue, compiled in parallel, linked into one shared object,
// stamped (stamp.hpp) and moved into place, all in a private build
// directory that goes however the build ends (workspace.hpp).
#include "artifact.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cmhost/error.hpp"
#include "compiler.hpp"
#include "glue.hpp"
#include "translate.hpp"
#include "workspace.hpp"

namespace cmhost::engine::aot {

extern const char kCmhostAotHeader[];  // cmhost_aot.h, embedded at build time

namespace {

namespace fs = std::filesystem;

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) usage("cannot write " + path.string());
}

}  // namespace

void build_artifact(std::span<const uint8_t> component, const std::vector<std::span<const uint8_t>>& modules,
                    const BuildSettings& settings, const std::string& path) {
  build_artifact(sha256_hex(component), modules, settings, path);
}

void build_artifact(const std::string& component_sha256, const std::vector<std::span<const uint8_t>>& modules,
                    const BuildSettings& settings, const std::string& path) {
  Stamp stamp = expected_stamp(component_sha256, settings, modules.size());
  const std::string compiler = resolve_compiler(tier_compiler(settings));
  const fs::path target = fs::absolute(path);
  // Declared first, so that it goes last: a signal that stopped the build
  // ends the process only once the workspace is gone.
  const InterruptGuard interrupts;
  const BuildWorkspace workspace(settings.cache_dir);
  const fs::path& scratch = workspace.path();

  write_file(scratch / "cmhost_aot.h", kCmhostAotHeader);
  std::vector<CompilerJob> jobs;
  std::vector<std::string> objects;
  const std::vector<std::string> cflags = compile_flags(settings.metered, settings.baseline);
  const auto compile_job = [&](const std::string& name, const std::string& what) {
    CompilerJob job;
    job.argv = {compiler};
    job.argv.insert(job.argv.end(), cflags.begin(), cflags.end());
    job.argv.insert(job.argv.end(), {"-I", scratch.string(), "-c", (scratch / (name + ".c")).string(), "-o",
                                     (scratch / (name + ".o")).string()});
    job.log = (scratch / (name + ".log")).string();
    job.what = what;
    objects.push_back((scratch / (name + ".o")).string());
    jobs.push_back(std::move(job));
  };
  for (size_t i = 0; i < modules.size(); ++i) {
    InterruptGuard::check();
    const std::string prefix = module_prefix(i);
    CModule translated;
    try {
      // Units of about split_bytes each, however many that makes, compiled
      // a core at a time (run_all): the C compiler's memory follows the
      // unit, not the module (two -O2 units of a 150 MB translation took
      // over 4 GB each).
      translated = translate(modules[i].data(), modules[i].size(), prefix, prefix + ".h", settings.metered,
                             std::numeric_limits<size_t>::max(), settings.split_bytes);
    } catch (const Error& e) {
      throw Error(e.kind(), "core module " + std::to_string(i) + ": " + e.what());
    }
    write_file(scratch / (prefix + ".h"), translated.header);
    write_file(scratch / (prefix + ".c"), translated.source);
    compile_job(prefix, "core module " + std::to_string(i));
    for (size_t part = 0; part < translated.more_sources.size(); ++part) {
      const std::string name = prefix + "_" + std::to_string(part + 1);
      write_file(scratch / (name + ".c"), translated.more_sources[part]);
      compile_job(name, "core module " + std::to_string(i) + " (part " + std::to_string(part + 2) + ")");
    }
  }
  InterruptGuard::check();
  write_file(scratch / "entry.c", artifact_entry(modules.size()));
  compile_job("entry", "the artifact entry");
  run_all(jobs);

  stamp.compiler_version = compiler_version(compiler, scratch);
  const fs::path shared_object = scratch / "artifact.so";
  CompilerJob link;
  link.argv = {compiler, "-shared", "-o", shared_object.string()};
  link.argv.insert(link.argv.end(), objects.begin(), objects.end());
  link.log = (scratch / "link.log").string();
  link.what = "the link";
  std::vector<CompilerJob> link_jobs{std::move(link)};
  run_all(link_jobs);

  if (!append_stamp(shared_object.string(), stamp)) usage("cannot write the artifact " + target.string());
  chmod(shared_object.c_str(), 0600);
  {
    // Durable before it becomes visible under its name.
    const int fd = open(shared_object.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      fsync(fd);
      close(fd);
    }
  }
  InterruptGuard::check();
  place_artifact(shared_object, target);
}

}  // namespace cmhost::engine::aot
