// A WASI command (wasi-libc, made a component with the preview1 command
// adapter): what it does is chosen by its first argument.
//   args          each argument on a line
//   env NAME      the variable's value, or (unset)
//   cat           stdin to stdout
//   exit N        exits with status N
//   clocks        "ok" when the clocks move forward and the wall clock is past 2020
//   random        "ok" when 32 random bytes are not all zero
//   sleep MS      sleeps (a poll over a timer) and says whether MS passed
//   stderr TEXT   TEXT on stderr
//   tty           whether stdin, stdout and stderr are terminals
// Files (paths inside a preopened directory; a failure prints
// "error: <strerror>" and exits with 1):
//   read P, write P TEXT, append P TEXT, copy SRC DST, ls DIR (sorted),
//   mkdir P, rename A B, rm P, rmdir P, stat P (type and size),
//   utimes P SECONDS (set-times-at, following a final symlink),
//   lutimes P SECONDS (not following it), futimes P SECONDS (set-times on
//   the file P opened for reading; the adapter refuses it on directories),
//   link OLD NEW, symlink TARGET P, readlink P (the target's length, then
//   the target).
//   at DIR MODE ...  the modes from utimes on, through preview1's own calls
//                    beside DIR opened: paths reach the host as given, each
//                    `|` a NUL byte (libc would resolve an absolute path
//                    through its preopens, and its C strings end at a NUL)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wasi/api.h>

static int failed(void) {
  printf("error: %s\n", strerror(errno));
  return 1;
}

// preview1's own calls, taking strings with their lengths.
#define PREVIEW1(name) __attribute__((import_module("wasi_snapshot_preview1"), import_name(#name)))
PREVIEW1(path_link)
int32_t raw_path_link(int32_t old_fd, int32_t old_flags, const char* old_path, size_t old_length, int32_t new_fd,
                      const char* new_path, size_t new_length);
PREVIEW1(path_symlink)
int32_t raw_path_symlink(const char* target, size_t target_length, int32_t fd, const char* path, size_t path_length);
PREVIEW1(path_readlink)
int32_t raw_path_readlink(int32_t fd, const char* path, size_t path_length, char* buffer, size_t buffer_length,
                          size_t* used);
PREVIEW1(path_filestat_set_times)
int32_t raw_path_filestat_set_times(int32_t fd, int32_t flags, const char* path, size_t path_length,
                                    uint64_t access_ns, uint64_t modification_ns, int32_t which);
PREVIEW1(path_open)
int32_t raw_path_open(int32_t fd, int32_t flags, const char* path, size_t path_length, int32_t open_flags,
                      uint64_t rights, uint64_t inherited_rights, int32_t fd_flags, int32_t* opened);

// `|` as NUL, in place; the length.
static size_t with_nuls(char* text) {
  const size_t n = strlen(text);
  for (size_t i = 0; i < n; ++i)
    if (text[i] == '|') text[i] = '\0';
  return n;
}

// The directory of `at DIR`: the link and time modes use preview1's own
// calls beside it.
static int base = -1;

static int compare(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int files(int argc, char** argv) {
  const char* mode = argv[1];
  if (strcmp(mode, "read") == 0 && argc == 3) {
    FILE* f = fopen(argv[2], "rb");
    if (!f) return failed();
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, f)) > 0) fwrite(buffer, 1, n, stdout);
    fclose(f);
  } else if ((strcmp(mode, "write") == 0 || strcmp(mode, "append") == 0) && argc == 4) {
    FILE* f = fopen(argv[2], mode[0] == 'w' ? "wb" : "ab");
    if (!f) return failed();
    if (fputs(argv[3], f) < 0 || fclose(f) != 0) return failed();
  } else if (strcmp(mode, "copy") == 0 && argc == 4) {
    FILE* in = fopen(argv[2], "rb");
    if (!in) return failed();
    FILE* out = fopen(argv[3], "wb");
    if (!out) return failed();
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, in)) > 0)
      if (fwrite(buffer, 1, n, out) != n) return failed();
    fclose(in);
    if (fclose(out) != 0) return failed();
  } else if (strcmp(mode, "ls") == 0 && argc == 3) {
    DIR* dir = opendir(argv[2]);
    if (!dir) return failed();
    char* names[256];
    int count = 0;
    struct dirent* e;
    while ((e = readdir(dir)) && count < 256)
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[count++] = strdup(e->d_name);
    closedir(dir);
    qsort(names, (size_t)count, sizeof names[0], compare);
    for (int i = 0; i < count; ++i) printf("%s\n", names[i]);
  } else if (strcmp(mode, "mkdir") == 0 && argc == 3) {
    if (mkdir(argv[2], 0755)) return failed();
  } else if (strcmp(mode, "rename") == 0 && argc == 4) {
    if (rename(argv[2], argv[3])) return failed();
  } else if (strcmp(mode, "rm") == 0 && argc == 3) {
    if (unlink(argv[2])) return failed();
  } else if (strcmp(mode, "rmdir") == 0 && argc == 3) {
    if (rmdir(argv[2])) return failed();
  } else if (strcmp(mode, "stat") == 0 && argc == 3) {
    struct stat st;
    if (stat(argv[2], &st)) return failed();
    printf("%s %lld\n", S_ISDIR(st.st_mode) ? "directory" : S_ISREG(st.st_mode) ? "file" : "other",
           (long long)st.st_size);
  } else {
    return -1;
  }
  return 0;
}

// The link and time modes, through libc or (after `at DIR`) preview1.
static int links_and_times(int argc, char** argv) {
  const char* mode = argv[1];
  const int raw = base >= 0;
  const size_t length2 = argc > 2 ? (raw ? with_nuls(argv[2]) : strlen(argv[2])) : 0;
  const size_t length3 = argc > 3 ? (raw ? with_nuls(argv[3]) : strlen(argv[3])) : 0;
  const uint64_t seconds = argc > 3 ? (uint64_t)atoll(argv[3]) : 0;
  const struct timespec times[2] = {{(time_t)seconds, 0}, {(time_t)seconds, 0}};
  int e = 0;
  if ((strcmp(mode, "utimes") == 0 || strcmp(mode, "lutimes") == 0) && argc == 4) {
    const int follow = mode[0] != 'l';
    if (raw)
      e = raw_path_filestat_set_times(base, follow ? __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW : 0, argv[2], length2,
                                      seconds * 1000000000, seconds * 1000000000,
                                      __WASI_FSTFLAGS_ATIM | __WASI_FSTFLAGS_MTIM);
    else
      e = utimensat(AT_FDCWD, argv[2], times, follow ? 0 : AT_SYMLINK_NOFOLLOW) ? errno : 0;
  } else if (strcmp(mode, "futimes") == 0 && argc == 4) {
    int32_t fd = -1;
    if (raw)
      e = raw_path_open(base, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, argv[2], length2, 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd);
    else
      e = (fd = open(argv[2], O_RDONLY)) < 0 ? errno : 0;
    if (!e) {
      e = futimens(fd, times) ? errno : 0;
      close(fd);
    }
  } else if (strcmp(mode, "link") == 0 && argc == 4) {
    e = raw ? raw_path_link(base, 0, argv[2], length2, base, argv[3], length3) : link(argv[2], argv[3]) ? errno : 0;
  } else if (strcmp(mode, "symlink") == 0 && argc == 4) {
    e = raw ? raw_path_symlink(argv[2], length2, base, argv[3], length3) : symlink(argv[2], argv[3]) ? errno : 0;
  } else if (strcmp(mode, "readlink") == 0 && argc == 3) {
    static char target[8192];
    size_t n = 0;
    if (raw) {
      e = raw_path_readlink(base, argv[2], length2, target, sizeof target, &n);
    } else {
      const ssize_t r = readlink(argv[2], target, sizeof target);
      e = r < 0 ? errno : 0;
      n = r < 0 ? 0 : (size_t)r;
    }
    if (!e) printf("%zu %.*s\n", n, (int)n, target);
  } else {
    return -1;
  }
  if (e) {
    errno = e;
    return failed();
  }
  return 0;
}

static int64_t ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: command args|env|cat|exit|clocks|random|sleep|stderr ...\n");
    return 2;
  }
  if (strcmp(argv[1], "at") == 0 && argc >= 4) {
    base = open(argv[2], O_RDONLY | O_DIRECTORY);
    if (base < 0) return failed();
    argc -= 2;
    argv += 2;
  }
  const char* mode = argv[1];
  const int file_status = files(argc, argv);
  if (file_status >= 0) return file_status;
  const int link_status = links_and_times(argc, argv);
  if (link_status >= 0) return link_status;
  if (strcmp(mode, "args") == 0) {
    for (int i = 0; i < argc; ++i) printf("%s\n", argv[i]);
  } else if (strcmp(mode, "env") == 0 && argc == 3) {
    const char* value = getenv(argv[2]);
    printf("%s\n", value ? value : "(unset)");
  } else if (strcmp(mode, "cat") == 0) {
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, stdin)) > 0) fwrite(buffer, 1, n, stdout);
  } else if (strcmp(mode, "exit") == 0 && argc == 3) {
    exit(atoi(argv[2]));
  } else if (strcmp(mode, "clocks") == 0) {
    const int64_t a = ns(CLOCK_MONOTONIC), b = ns(CLOCK_MONOTONIC);
    const int64_t wall = ns(CLOCK_REALTIME);
    printf("%s\n", b >= a && wall > (int64_t)1577836800 * 1000000000 ? "ok" : "wrong");
  } else if (strcmp(mode, "random") == 0) {
    unsigned char bytes[32] = {0};
    getentropy(bytes, sizeof bytes);
    int any = 0;
    for (size_t i = 0; i < sizeof bytes; ++i) any |= bytes[i];
    printf("%s\n", any ? "ok" : "zero");
  } else if (strcmp(mode, "sleep") == 0 && argc == 3) {
    const int64_t ms = atoi(argv[2]);
    const int64_t start = ns(CLOCK_MONOTONIC);
    struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
    printf("%s\n", ns(CLOCK_MONOTONIC) - start >= ms * 1000000 ? "slept" : "woke early");
  } else if (strcmp(mode, "tty") == 0) {
    printf("%d %d %d\n", isatty(0), isatty(1), isatty(2));
  } else if (strcmp(mode, "stderr") == 0 && argc == 3) {
    fprintf(stderr, "%s\n", argv[2]);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  return 0;
}
