#include "artifact.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
// SHA256_Init and friends are deprecated in OpenSSL 3 in favour of EVP (see
// sha256_hex).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <mutex>
#include <sstream>
#include <thread>

#include "aot_codegen.h"
#include "cmhost/error.hpp"
#include "glue.hpp"
#include "rt.h"
#include "translate.hpp"

extern char** environ;

namespace cmhost::engine::wasm2c {

extern const char kCmhostAotHeader[];  // cmhost_aot.h, embedded at build time

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'C', 'M', 'H', 'O', 'S', 'T', 'A', '1'};

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

// OpenSSL's SHA-256 itself: the EVP interface would first set up its
// provider machinery, about 1.5 ms the first time in a process, more than
// loading a cached artifact takes.
std::string sha256_hex(std::span<const uint8_t> bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX context;
  if (!SHA256_Init(&context) || !SHA256_Update(&context, bytes.data(), bytes.size()) ||
      !SHA256_Final(digest, &context))
    usage("cannot hash the component (OpenSSL SHA-256 failed)");
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    hex += digits[digest[i] >> 4];
    hex += digits[digest[i] & 15];
  }
  return hex;
}

// Where the compiler lives: a path as given, else the first match on PATH.
std::string resolve_compiler(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::weakly_canonical(name).string();
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return fs::canonical(candidate).string();
  }
  usage("the ahead-of-time backend needs a C compiler: `" + name + "` is not on PATH");
}

// The compiler as a stamp names it: its file, which changes when the
// compiler is replaced, without running it.
std::string compiler_identity(const std::string& resolved) {
  struct stat info {};
  if (stat(resolved.c_str(), &info) != 0) usage("cannot read the C compiler " + resolved);
  return resolved + " " + std::to_string(info.st_size) + " " + std::to_string(info.st_mtim.tv_sec);
}

// What the flags of a metered artifact end with (the metering rewrite
// before translation: a refill import called per slice).
constexpr const char* kMeteredFlag = " metered=slices";

// No sibling-call optimisation: wasm calls are never tail calls, and a
// recursion the C compiler turned into a loop would never reach the stack
// limit.
std::string flags(bool metered) {
  std::string f = "-std=gnu11 -O2 -fPIC -fvisibility=hidden -fstack-clash-protection -fno-strict-aliasing -fno-optimize-sibling-calls -DNDEBUG";
  f += CMHOST_RT_GUARD_PAGES ? " -DWASM_RT_MEMCHECK_SIGNAL_HANDLER=1" : " -DWASM_RT_MEMCHECK_SIGNAL_HANDLER=0";
  f += " -w";
  f += " abi=" + std::to_string(CMHOST_AOT_ABI);
  if (metered) f += kMeteredFlag;
  return f;
}

std::vector<std::string> compile_flags(bool metered) {
  std::vector<std::string> out;
  std::istringstream words(flags(metered));
  std::string word;
  while (words >> word)
    if (word.rfind('-', 0) == 0) out.push_back(word);
  return out;
}

struct Job {
  std::vector<std::string> argv;
  std::string log;
  std::string what;
  pid_t pid = -1;
};

void start(Job& job) {
  std::vector<char*> argv;
  for (std::string& a : job.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const int failed = posix_spawnp(&job.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed) usage("cannot run the C compiler " + job.argv[0] + ": " + std::strerror(failed));
}

std::string first_lines(const std::string& path, size_t count) {
  std::ifstream in(path);
  std::string line, out;
  for (size_t i = 0; i < count && std::getline(in, line); ++i) out += (i ? "\n" : "") + line;
  return out;
}

// Runs the jobs, as many at once as there are cores.
void run_all(std::vector<Job>& jobs) {
  const size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  size_t next = 0, running = 0;
  std::string failure;
  while (next < jobs.size() || running > 0) {
    while (failure.empty() && next < jobs.size() && running < parallel) {
      start(jobs[next++]);
      ++running;
    }
    if (running == 0) break;
    int status = 0;
    const pid_t done = waitpid(-1, &status, 0);
    if (done < 0) break;
    --running;
    for (Job& job : jobs) {
      if (job.pid != done) continue;
      if ((!WIFEXITED(status) || WEXITSTATUS(status) != 0) && failure.empty())
        failure = "the C compiler failed on " + job.what + ":\n" + first_lines(job.log, 12);
    }
  }
  if (!failure.empty()) usage(failure);
}

std::string compiler_version(const std::string& resolved, const fs::path& scratch) {
  Job job{{resolved, "--version"}, (scratch / "version.log").string(), "--version"};
  // --version writes to stdout: send it to the log instead.
  std::vector<char*> argv{job.argv[0].data(), job.argv[1].data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  int status = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0) waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&actions);
  return first_lines(job.log, 1);
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) usage("cannot write " + path.string());
}

// The stamp's fields, one per line.
std::string field(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return line.substr(name.size() + 1);
  return "";
}

// Records the loaded object's executable segments for the fault handler.
void register_code(void* handle, const void* symbol) {
  (void)handle;
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fbase) return;
  struct Search {
    const void* base;
  } search{info.dli_fbase};
  dl_iterate_phdr(
      [](dl_phdr_info* phdr, size_t, void* data) -> int {
        const auto* s = static_cast<Search*>(data);
        bool ours = false;
        for (int i = 0; i < phdr->dlpi_phnum; ++i) {
          const ElfW(Phdr)& h = phdr->dlpi_phdr[i];
          if (h.p_type == PT_LOAD && h.p_offset == 0 &&
              reinterpret_cast<const void*>(phdr->dlpi_addr + h.p_vaddr) == s->base)
            ours = true;
        }
        if (!ours) return 0;
        for (int i = 0; i < phdr->dlpi_phnum; ++i) {
          const ElfW(Phdr)& h = phdr->dlpi_phdr[i];
          if (h.p_type == PT_LOAD && (h.p_flags & PF_X))
            cmhost_rt_register_code(phdr->dlpi_addr + h.p_vaddr, phdr->dlpi_addr + h.p_vaddr + h.p_memsz);
        }
        return 1;
      },
      &search);
}

}  // namespace

std::string Stamp::text() const {
  return "cmhost-artifact " + std::to_string(CMHOST_AOT_ABI) + "\ncomponent " + component_sha256 + "\ncmhost " +
         cmhost_version + "\ncodegen " + codegen + "\ncompiler " + compiler + "\ncompiler-version " +
         compiler_version + "\nflags " + flags + "\nmodules " + std::to_string(module_count) + "\n";
}

Stamp expected_stamp(std::span<const uint8_t> component, const BuildSettings& settings, size_t module_count) {
  Stamp stamp;
  stamp.component_sha256 = sha256_hex(component);
  stamp.cmhost_version = CMHOST_VERSION;
  stamp.codegen = CMHOST_AOT_CODEGEN;
  stamp.compiler = compiler_identity(resolve_compiler(settings.compiler));
  stamp.flags = flags(settings.metered);
  stamp.module_count = module_count;
  return stamp;
}

void build_artifact(std::span<const uint8_t> component, const std::vector<std::span<const uint8_t>>& modules,
                    const BuildSettings& settings, const std::string& path) {
  Stamp stamp = expected_stamp(component, settings, modules.size());
  const std::string compiler = resolve_compiler(settings.compiler);
  const fs::path target = fs::absolute(path);
  std::string scratch_template = (target.parent_path() / ".cmhost-build-XXXXXX").string();
  if (!mkdtemp(scratch_template.data())) usage("cannot create a build directory beside " + target.string());
  const fs::path scratch = scratch_template;
  // CMHOST_AOT_KEEP_SOURCES keeps the C for a look at what was compiled.
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      if (std::getenv("CMHOST_AOT_KEEP_SOURCES")) return;
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{scratch};

  write_file(scratch / "cmhost_aot.h", kCmhostAotHeader);
  std::vector<Job> jobs;
  std::vector<std::string> objects;
  const std::vector<std::string> cflags = compile_flags(settings.metered);
  const auto compile_job = [&](const std::string& name, const std::string& what) {
    Job job;
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
    const std::string prefix = module_prefix(i);
    CModule translated;
    try {
      translated = translate(modules[i].data(), modules[i].size(), prefix, prefix + ".h", settings.metered,
                             std::max(1u, std::thread::hardware_concurrency()), settings.split_bytes);
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
  write_file(scratch / "entry.c", artifact_entry(modules.size()));
  compile_job("entry", "the artifact entry");
  run_all(jobs);

  stamp.compiler_version = compiler_version(compiler, scratch);
  const fs::path shared_object = scratch / "artifact.so";
  Job link;
  link.argv = {compiler, "-shared", "-o", shared_object.string()};
  link.argv.insert(link.argv.end(), objects.begin(), objects.end());
  link.log = (scratch / "link.log").string();
  link.what = "the link";
  std::vector<Job> link_jobs{std::move(link)};
  run_all(link_jobs);

  const std::string text = stamp.text();
  {
    std::ofstream out(shared_object, std::ios::binary | std::ios::app);
    uint64_t length = text.size();
    unsigned char length_bytes[8];
    for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<unsigned char>(length >> (8 * i));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.write(reinterpret_cast<const char*>(length_bytes), 8);
    out.write(kMagic, 8);
    if (!out) usage("cannot write the artifact " + target.string());
  }
  chmod(shared_object.c_str(), 0600);
  {
    // Durable before it becomes visible under its name.
    const int fd = open(shared_object.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      fsync(fd);
      close(fd);
    }
  }
  std::error_code error;
  fs::rename(shared_object, target, error);
  if (error) usage("cannot move the artifact into place at " + target.string() + ": " + error.message());
}

LoadedArtifact load_artifact_file(const std::string& path, const Stamp& expected) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) usage("cannot open the artifact " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) close(fd);
    }
  } closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) usage("the artifact " + path + " is not a regular file");
  // Loading runs native code from the file: only one nobody else could
  // have written.
  if (info.st_uid != geteuid()) usage("the artifact " + path + " belongs to another user");
  if (info.st_mode & (S_IWGRP | S_IWOTH)) usage("the artifact " + path + " is writable by others");
  if (info.st_size < 16) usage(path + " is not a cmhost artifact");

  char trailer[16];
  if (pread(fd, trailer, 16, info.st_size - 16) != 16 || std::memcmp(trailer + 8, kMagic, 8) != 0)
    usage(path + " is not a cmhost artifact (or one of another format)");
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t{static_cast<unsigned char>(trailer[i])} << (8 * i);
  if (length > 65536 || length + 16 > static_cast<uint64_t>(info.st_size)) usage(path + " has a damaged stamp");
  std::string text(length, '\0');
  if (pread(fd, text.data(), length, info.st_size - 16 - static_cast<off_t>(length)) !=
      static_cast<ssize_t>(length))
    usage("cannot read the stamp of " + path);

  const auto differs = [&](const std::string& name, const std::string& want, const std::string& what) {
    const std::string have = field(text, name);
    if (have != want)
      usage("the artifact " + path + " was built " + what + " (" + (have.empty() ? "none" : have) + "), not " + want);
  };
  differs("cmhost-artifact", std::to_string(CMHOST_AOT_ABI), "for another artifact format");
  differs("component", expected.component_sha256, "from another component, whose SHA-256 is");
  differs("cmhost", expected.cmhost_version, "by another version of cmhost");
  differs("codegen", expected.codegen,
          "by another build of cmhost, whose translator, glue or runtime support differ (stale: compile it again); "
          "its code-generation hash is");
  differs("compiler", expected.compiler, "with another C compiler");
  // Metering alone is told apart: the fix is another artifact, not another compiler.
  if (field(text, "flags") + kMeteredFlag == expected.flags)
    usage("the artifact " + path + " was built without metering, which fuel and deadlines need");
  if (field(text, "flags") == expected.flags + kMeteredFlag)
    usage("the artifact " + path + " was built with metering, which this engine does not do");
  differs("flags", expected.flags, "with other flags");
  if (expected.module_count != kAnyModuleCount)
    differs("modules", std::to_string(expected.module_count), "with another number of core modules");

  // A file loaded before is not loaded again (its descriptor stays open).
  static std::mutex loading;
  static std::map<std::tuple<dev_t, ino_t, off_t, int64_t>, const cmhost_aot_artifact*> loaded;
  std::lock_guard lock(loading);
  const auto identity = std::make_tuple(info.st_dev, info.st_ino, info.st_size, int64_t{info.st_mtim.tv_sec});
  if (auto found = loaded.find(identity); found != loaded.end()) return {found->second};

  // The descriptor checked is the file loaded: no name lookup in between.
  // It stays open, as the library stays loaded, so that its /proc name is
  // never another artifact's (the dynamic loader matches loaded libraries
  // by name).
  const std::string fd_path = "/proc/self/fd/" + std::to_string(fd);
  void* handle = dlopen(fd_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) usage("cannot load the artifact " + path + ": " + dlerror());
  closer.fd = -1;
  auto* table = static_cast<const cmhost_aot_artifact*>(dlsym(handle, "cmhost_artifact"));
  if (!table || table->abi != CMHOST_AOT_ABI || std::to_string(table->module_count) != field(text, "modules"))
    usage("the artifact " + path + " does not hold what its stamp says");
  register_code(handle, table);
  loaded.emplace(identity, table);
  return {table};
}

std::string cache_directory(const std::string& configured) {
  fs::path dir;
  if (!configured.empty()) {
    dir = configured;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = fs::path(xdg) / "cmhost";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = fs::path(home) / ".cache" / "cmhost";
  } else {
    usage("no cache directory for compiled components: set XDG_CACHE_HOME or HOME");
  }
  std::error_code error;
  if (!fs::exists(dir.parent_path(), error)) {
    fs::create_directories(dir.parent_path(), error);
    if (!error) chmod(dir.parent_path().c_str(), 0700);
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    usage("cannot create the cache directory " + dir.string() + ": " + std::strerror(errno));
  struct stat info {};
  if (lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    usage("the cache directory " + dir.string() + " is not a directory");
  if (info.st_uid != geteuid()) usage("the cache directory " + dir.string() + " belongs to another user");
  if (info.st_mode & (S_IWGRP | S_IWOTH))
    usage("the cache directory " + dir.string() + " is writable by others (it must be 0700)");
  return dir.string();
}

std::string cache_path(const std::string& directory, const Stamp& stamp) {
  const std::string key = stamp.component_sha256 + "\n" + stamp.cmhost_version + "\n" + stamp.codegen + "\n" +
                          stamp.compiler + "\n" + stamp.flags + "\n" + std::to_string(stamp.module_count);
  const std::string hash =
      sha256_hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
  return (fs::path(directory) / (hash.substr(0, 40) + ".cmhost-aot")).string();
}

}  // namespace cmhost::engine::wasm2c
