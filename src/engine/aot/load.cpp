// Loading an artifact: only a regular file of ours that nobody else can
// write, whose stamp is what this build expects, loaded once per process
// from the very descriptor that was checked.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "artifact.hpp"
#include "cmhost/error.hpp"
#include "rt.h"

namespace cmhost::engine::aot {

namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

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
  const std::string text = read_stamp(fd, info.st_size, path);
  check_stamp(text, expected, path);

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
  if (!table || table->abi != CMHOST_AOT_ABI || std::to_string(table->module_count) != stamp_field(text, "modules"))
    usage("the artifact " + path + " does not hold what its stamp says");
  register_code(handle, table);
  loaded.emplace(identity, table);
  return {table};
}

}  // namespace cmhost::engine::aot
