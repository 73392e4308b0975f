/* cmhost's runtime support for wasm2c-translated code: the wasm_rt_*
 * functions of wasm-rt.h, with the trap state per native stack rather than
 * per process (wabt's libwasm-rt-impl keeps one jump buffer for everything),
 * and a fault handler that tells guest memory and stack guards from faults
 * that are not ours.
 *
 * C, not C++: longjmp unwinds translated frames and the frames here, and
 * must never cross a C++ frame. */
#define _GNU_SOURCE
#include "rt.h"

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define PAGE_BYTES 65536u

__thread uintptr_t cmhost_rt_stack_limit __attribute__((tls_model("initial-exec")));
uintptr_t cmhost_rt_stack_limit_now(void) { return cmhost_rt_stack_limit; }

static __thread cmhost_rt_stack thread_stack;
static __thread cmhost_rt_stack* current_stack;
static __thread int thread_ready;
static __thread uint64_t cap_memory_pages = UINT64_MAX;
static __thread uint64_t cap_table_elements = UINT64_MAX;
static __thread void (*object_observer)(void*, void*, int);
static __thread void* object_observer_context;
static _Atomic(cmhost_rt_growth_hook) growth_hook;

static cmhost_rt_stack* current(void) { return current_stack ? current_stack : &thread_stack; }

/* ---- traps ---- */

/* A call's trap target is GCC's light setjmp buffer (five words, nothing
 * but the frame, stack and resume address saved; the trap code travels in
 * `pending_trap`) outside sanitizer builds, whose longjmp interceptors keep
 * track of the stack only through the libc functions. Exception targets
 * set by translated try blocks are always sigjmp_bufs. */
#if CMHOST_RT_GUARD_PAGES
#define LIGHT_TRAP_TARGET 1
static __thread int pending_trap;
#else
#define LIGHT_TRAP_TARGET 0
#endif

static void outside_calls(int code) __attribute__((noreturn));
static void outside_calls(int code) {
  /* Translated code runs only inside cmhost_rt_invoke/_instantiate. */
  fprintf(stderr, "cmhost: trap %d outside any call into translated code\n", code);
  abort();
}

static void trap_to(void* target, int code) __attribute__((noreturn, noinline));
static void trap_to(void* target, int code) {
  if (!target) outside_calls(code);
#if LIGHT_TRAP_TARGET
  pending_trap = code;
  __builtin_longjmp((void**)target, 1);
#else
  siglongjmp(*(sigjmp_buf*)target, code);
#endif
}

void wasm_rt_trap(wasm_rt_trap_t code) { trap_to(current()->trap_target, (int)code); }

const char* cmhost_rt_trap_message(int code) {
  switch (code) {
    case WASM_RT_TRAP_OOB: return "out of bounds memory access";
    case WASM_RT_TRAP_INT_OVERFLOW: return "integer overflow";
    case WASM_RT_TRAP_DIV_BY_ZERO: return "integer divide by zero";
    case WASM_RT_TRAP_INVALID_CONVERSION: return "invalid conversion to integer";
    case WASM_RT_TRAP_UNREACHABLE: return "unreachable executed";
    case WASM_RT_TRAP_CALL_INDIRECT:
      return "indirect call failed: undefined table index, uninitialized table element or signature mismatch";
    case WASM_RT_TRAP_UNCAUGHT_EXCEPTION: return "uncaught exception";
    case WASM_RT_TRAP_EXHAUSTION: return "call stack exhausted";
    case CMHOST_TRAP_HOST: return "host function failed";
    case CMHOST_TRAP_CAPS: return "a memory or table exceeds the engine's caps";
    default: return "wasm execution failed";
  }
}

const char* wasm_rt_strerror(wasm_rt_trap_t trap) { return cmhost_rt_trap_message((int)trap); }

void wasm_rt_init(void) {}
bool wasm_rt_is_initialized(void) { return true; }
void wasm_rt_free(void) {}

int cmhost_rt_invoke(cmhost_aot_invoker invoke, void* code, void* context, const uint64_t* args,
                     uint64_t* results) {
  /* A store may be used on threads other than the one that made it. */
  if (UNLIKELY(!thread_ready)) cmhost_rt_enter_thread();
  cmhost_rt_stack* stack = current();
  void* const saved_trap = stack->trap_target;
  void* const saved_unwind = stack->unwind_target;
  /* No signal mask saved: that would be a system call per call. The fault
   * handler runs with SA_NODEFER, so jumping out of it leaves the mask as
   * it was. An exception no try block catches traps (no unwind target). */
  int trap;
#if LIGHT_TRAP_TARGET
  void* target[5];
  stack->trap_target = target;
  stack->unwind_target = NULL;
  if (__builtin_setjmp(target) == 0) {
    invoke(code, context, args, results);
    trap = 0;
  } else {
    trap = pending_trap;
  }
#else
  sigjmp_buf target;
  stack->trap_target = &target;
  stack->unwind_target = NULL;
  trap = sigsetjmp(target, 0);
  if (trap == 0) invoke(code, context, args, results);
#endif
  /* Fibers switch stacks only inside host calls and switch back before
   * returning into translated code, so `current()` is this call's again. */
  stack = current();
  stack->trap_target = saved_trap;
  stack->unwind_target = saved_unwind;
  return trap;
}

static void run_instantiate(void* instantiate, void* instance, const uint64_t* args, uint64_t* results) {
  (void)args, (void)results;
  ((void (*)(void*))instantiate)(instance);
}

int cmhost_rt_instantiate(void (*instantiate)(void*), void* instance) {
  return cmhost_rt_invoke(run_instantiate, (void*)instantiate, instance, NULL, NULL);
}

void cmhost_rt_call_host(void* binding, const uint64_t* args, uint64_t* results) {
  const cmhost_rt_host_entry entry = *(cmhost_rt_host_entry*)binding;
  if (entry(binding, args, results) != 0) wasm_rt_trap((wasm_rt_trap_t)CMHOST_TRAP_HOST);
}

/* ---- exceptions (legacy try/catch) ---- */

#define MAX_EXCEPTION_BYTES 256
static __thread uint32_t exception_tag;
static __thread uint32_t exception_size;
static __thread unsigned char exception_payload[MAX_EXCEPTION_BYTES];
static atomic_uint next_tag = 1;

uint32_t wasm_rt_register_tag(uint32_t size) {
  if (size > MAX_EXCEPTION_BYTES) wasm_rt_trap(WASM_RT_TRAP_EXHAUSTION);
  return atomic_fetch_add(&next_tag, 1);
}

void wasm_rt_load_exception(uint32_t tag, uint32_t size, const void* values) {
  if (size > MAX_EXCEPTION_BYTES) wasm_rt_trap(WASM_RT_TRAP_EXHAUSTION);
  exception_tag = tag;
  exception_size = size;
  if (size) memcpy(exception_payload, values, size);
}

void wasm_rt_throw(void) {
  cmhost_rt_stack* stack = current();
  if (!stack->unwind_target) trap_to(stack->trap_target, WASM_RT_TRAP_UNCAUGHT_EXCEPTION);
  siglongjmp(*(sigjmp_buf*)stack->unwind_target, 1);
}
WASM_RT_UNWIND_TARGET* wasm_rt_get_unwind_target(void) { return current()->unwind_target; }
void wasm_rt_set_unwind_target(WASM_RT_UNWIND_TARGET* target) { current()->unwind_target = target; }
uint32_t wasm_rt_exception_tag(void) { return exception_tag; }
uint32_t wasm_rt_exception_size(void) { return exception_size; }
void* wasm_rt_exception(void) { return exception_payload; }

/* ---- function types: one registry for every artifact in the process ---- */

typedef struct {
  uint32_t params, results;
  int* codes;
} registered_type;

static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;
static registered_type* types;
static uint32_t type_count, type_capacity;

uint32_t cmhost_rt_type_id(uint32_t params, uint32_t results, const int* codes) {
  const uint32_t n = params + results;
  pthread_mutex_lock(&types_lock);
  for (uint32_t i = 0; i < type_count; ++i) {
    if (types[i].params == params && types[i].results == results &&
        (n == 0 || memcmp(types[i].codes, codes, n * sizeof(int)) == 0)) {
      pthread_mutex_unlock(&types_lock);
      return i + 1;
    }
  }
  if (type_count == type_capacity) {
    const uint32_t capacity = type_capacity ? type_capacity * 2 : 64;
    registered_type* grown = realloc(types, capacity * sizeof *grown);
    if (!grown) abort();
    types = grown;
    type_capacity = capacity;
  }
  int* copy = malloc((n ? n : 1) * sizeof(int));
  if (!copy) abort();
  if (n) memcpy(copy, codes, n * sizeof(int));
  types[type_count] = (registered_type){params, results, copy};
  const uint32_t id = ++type_count; /* 0 is the null funcref's */
  pthread_mutex_unlock(&types_lock);
  return id;
}

uint32_t wasm_rt_register_func_type(uint32_t params, uint32_t results, ...) {
  int codes[256];
  const uint32_t n = params + results;
  if (n > 256) abort(); /* wasm2c emits this for the module's own types only */
  va_list list;
  va_start(list, results);
  for (uint32_t i = 0; i < n; ++i) codes[i] = va_arg(list, int);
  va_end(list);
  return cmhost_rt_type_id(params, results, codes);
}

/* ---- memories ----
 * With guard pages, each 32-bit memory reserves 8 GiB and a little: any
 * address translated code forms (a 32-bit index plus a 32-bit offset, plus
 * the access size) lands inside the reservation, and what lies beyond the
 * memory's current size is inaccessible, so the handler below turns the
 * fault into an out-of-bounds trap. With explicit checks, the reservation is
 * only as large as the memory may grow. */

#define MAX_MEMORIES 16384
typedef struct {
  _Atomic uintptr_t begin, end;
  _Atomic uintptr_t image; /* a memory's: the cmhost_rt_image mapped at its start, or 0 */
} region;
static region memories[MAX_MEMORIES];
#define MAX_CODE 1024
static region code_regions[MAX_CODE];

static region* register_region(region* table, size_t count, uintptr_t begin, uintptr_t end) {
  for (size_t i = 0; i < count; ++i) {
    uintptr_t expected = 0;
    if (atomic_compare_exchange_strong(&table[i].begin, &expected, begin)) {
      atomic_store(&table[i].end, end);
      return &table[i];
    }
  }
  return NULL;
}

static region* find_region(region* table, size_t count, uintptr_t address) {
  for (size_t i = 0; i < count; ++i) {
    const uintptr_t begin = atomic_load(&table[i].begin);
    if (begin && address >= begin && address < atomic_load(&table[i].end)) return &table[i];
  }
  return NULL;
}

void cmhost_rt_register_code(uintptr_t begin, uintptr_t end) {
  if (find_region(code_regions, MAX_CODE, begin)) return;
  register_region(code_regions, MAX_CODE, begin, end);
}

void cmhost_rt_set_caps(uint64_t max_memory_pages, uint64_t max_table_elements,
                        void (*on_object)(void* context, void* object, int is_table), void* context) {
  cap_memory_pages = max_memory_pages;
  cap_table_elements = max_table_elements;
  object_observer = on_object;
  object_observer_context = context;
}

void cmhost_rt_set_growth_hook(cmhost_rt_growth_hook hook) { atomic_store(&growth_hook, hook); }

static int growth_allowed(const void* object, int is_table, uint64_t delta) {
  const cmhost_rt_growth_hook hook = atomic_load(&growth_hook);
  return !hook || hook(object, is_table, delta);
}

static size_t reservation_bytes(uint32_t max_pages) {
#if CMHOST_RT_GUARD_PAGES
  (void)max_pages;
  return ((size_t)8 << 30) + PAGE_BYTES;
#else
  return (size_t)max_pages * PAGE_BYTES;
#endif
}

/* ---- memory images (cmhost_aot.h) ---- */

static pthread_mutex_t image_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where the memfd's last data ends (its holes, never written, read as
 * zeros), rounded up to the system's page: found from its extents, without
 * reading (and so allocating) the holes. */
static size_t image_extent(int fd, size_t bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t end = 0;
  for (off_t at = 0;;) {
    const off_t data = lseek(fd, at, SEEK_DATA);
    if (data < 0) break; /* ENXIO: no data from `at` on */
    const off_t hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0) return bytes;
    end = (size_t)hole;
    at = hole;
  }
  end = (end + page - 1) / page * page;
  return end < bytes ? end : bytes;
}

/* Applies the segments once into a memfd the size of `like`, then drops
 * what follows its last written page (the anonymous memory behind the
 * mapping is zeros already). Unavailable (state 2) when the kernel refuses any step:
 * instances then copy the segments as before. */
static void build_image(cmhost_rt_image* image, const wasm_rt_memory_t* like, void (*load)(wasm_rt_memory_t*)) {
  const size_t bytes = (size_t)like->pages * PAGE_BYTES;
  int fd = bytes ? memfd_create("cmhost-memory-image", MFD_CLOEXEC) : -1;
  void* data = MAP_FAILED;
  if (fd >= 0 && ftruncate(fd, (off_t)bytes) == 0) data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    if (fd >= 0) close(fd);
    image->fd = -1;
    __atomic_store_n(&image->state, 2, __ATOMIC_RELEASE);
    return;
  }
  wasm_rt_memory_t scratch = *like;
  scratch.data = data;
  load(&scratch); /* in bounds: the translation checked every segment */
  munmap(data, bytes);
  size_t used = image_extent(fd, bytes);
  if (used < bytes && ftruncate(fd, (off_t)used) != 0) used = bytes;
  image->fd = fd;
  image->bytes = used;
  __atomic_store_n(&image->state, 1, __ATOMIC_RELEASE);
}

/* ---- allocation, and the pool of reserved memories ----
 * With guard pages every reservation has one size, so a freed memory's can
 * serve the next: its pages are dropped (madvise: anonymous pages read as
 * zeros again, an image's as the image), its protections and its image
 * mapping kept, and the next memory only changes what differs. Up to
 * pool_slots reservations wait, process-wide; memories that grew past
 * pool_max_bytes are unmapped instead (dropping their pages would cost what
 * a new reservation saves). Only the memories of stores whose engine pools
 * go to the pool (cmhost_rt_pool_frees). */

typedef struct pooled {
  uint8_t* base;
  size_t accessible;              /* bytes readable and writable from base */
  const cmhost_rt_image* image;   /* mapped at base, or null */
} pooled;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pooled* pool;
static size_t pool_count, pool_slots;
/* What the freeing store's engine allows (0: its memories are unmapped). */
static __thread uint64_t pool_free_max_bytes;

void cmhost_rt_grow_pool(size_t slots) {
  if (!CMHOST_RT_GUARD_PAGES) return; /* reservations differ in size: none are pooled */
  pthread_mutex_lock(&pool_lock);
  if (slots > pool_slots) {
    pooled* grown = realloc(pool, slots * sizeof *pool);
    if (grown) {
      pool = grown;
      pool_slots = slots;
    }
  }
  pthread_mutex_unlock(&pool_lock);
}

void cmhost_rt_pool_frees(uint64_t max_bytes) { pool_free_max_bytes = max_bytes; }

int cmhost_rt_uses_guard_pages(void) { return CMHOST_RT_GUARD_PAGES; }

size_t cmhost_rt_pooled_memories(void) {
  pthread_mutex_lock(&pool_lock);
  const size_t count = pool_count;
  pthread_mutex_unlock(&pool_lock);
  return count;
}

/* A pooled reservation, preferring one with `image` mapped; zero when none. */
static int take_pooled(const cmhost_rt_image* image, pooled* out) {
  pthread_mutex_lock(&pool_lock);
  if (!pool_count) {
    pthread_mutex_unlock(&pool_lock);
    return 0;
  }
  size_t chosen = pool_count - 1;
  for (size_t i = pool_count; i-- > 0;)
    if (pool[i].image == image) {
      chosen = i;
      break;
    }
  *out = pool[chosen];
  pool[chosen] = pool[--pool_count];
  pthread_mutex_unlock(&pool_lock);
  return 1;
}

/* Gives `slot` `image` at its start (or plain zero pages) and exactly
 * `bytes` accessible; false when the kernel refuses. */
static int reshape_pooled(pooled* slot, const cmhost_rt_image* image, size_t bytes) {
  if (slot->image != image) {
    if (slot->image) {
      const size_t old = slot->image->bytes;
      if (mmap(slot->base, old, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
        return 0;
      if (slot->accessible > old) {
        if (mprotect(slot->base + old, slot->accessible - old, PROT_NONE) != 0) return 0;
      }
      slot->accessible = 0;
    }
    slot->image = NULL;
    if (image) {
      if (mmap(slot->base, image->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, image->fd, 0) == MAP_FAILED)
        return 0;
      slot->image = image;
      if (slot->accessible < image->bytes) slot->accessible = image->bytes;
    }
  }
  if (slot->accessible < bytes &&
      mprotect(slot->base + slot->accessible, bytes - slot->accessible, PROT_READ | PROT_WRITE) != 0)
    return 0;
  if (slot->accessible > bytes && mprotect(slot->base + bytes, slot->accessible - bytes, PROT_NONE) != 0) return 0;
  slot->accessible = bytes;
  return 1;
}

/* ---- learned writes ----
 * A page of an image an instance first reads and then writes faults twice,
 * and the second (copy-on-write) fault flushes the page's old mapping from
 * the TLBs of every core the process runs on: an interrupt to each. For a
 * big guest (a JavaScript engine's heap) that was half of a request's
 * cycles. The pages an image's instances wrote are learned as their
 * memories are freed (from /proc/self/pagemap: present, private and mapped
 * once), and a new instance of the image gets those pages written in
 * advance (MADV_POPULATE_WRITE: one call, no old mapping to flush). */

#if CMHOST_RT_GUARD_PAGES /* only pooled memories are learned from */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define MAX_LEARNED 64
#define MAX_LEARNED_PAGES ((size_t)64 << 20 >> 12) /* the first 64 MiB of a memory, in 4 KiB pages */

typedef struct learned_set {
  const cmhost_rt_image* image;
  uint8_t written[MAX_LEARNED_PAGES / 8];
} learned_set;
static learned_set* learned[MAX_LEARNED];
static pthread_mutex_t learned_lock = PTHREAD_MUTEX_INITIALIZER;
static int pagemap_fd = -2; /* -2: not opened yet; -1: unavailable */

static learned_set* learned_for(const cmhost_rt_image* image, int make) {
  for (size_t i = 0; i < MAX_LEARNED; ++i) {
    if (learned[i] && learned[i]->image == image) return learned[i];
    if (!learned[i]) {
      if (!make) return NULL;
      learned[i] = calloc(1, sizeof(learned_set));
      if (learned[i]) learned[i]->image = image;
      return learned[i];
    }
  }
  return NULL;
}

static int learning_possible(void) { return sysconf(_SC_PAGESIZE) == 4096; }

/* Before `data`'s pages are dropped: which of its first `bytes` were written. */
static void learn_writes(const cmhost_rt_image* image, const uint8_t* data, size_t bytes) {
  if (!image || !learning_possible()) return;
  size_t pages = bytes >> 12;
  if (pages > MAX_LEARNED_PAGES) pages = MAX_LEARNED_PAGES;
  pthread_mutex_lock(&learned_lock);
  if (pagemap_fd == -2) pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  learned_set* set = pagemap_fd >= 0 ? learned_for(image, 1) : NULL;
  uint64_t entries[512];
  for (size_t first = 0; set && first < pages; first += 512) {
    const size_t count = pages - first < 512 ? pages - first : 512;
    const off_t at = (off_t)((((uintptr_t)data) >> 12) + first) * 8;
    const ssize_t got = pread(pagemap_fd, entries, count * 8, at);
    if (got != (ssize_t)(count * 8)) break;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t e = entries[i];
      const int present = (int)(e >> 63) & 1, file_or_shared = (int)(e >> 61) & 1, exclusive = (int)(e >> 56) & 1;
      if (present && !file_or_shared && exclusive) set->written[(first + i) >> 3] |= (uint8_t)(1u << ((first + i) & 7));
    }
  }
  pthread_mutex_unlock(&learned_lock);
}

/* A new memory of `image`, its first `bytes` accessible: the pages its
 * predecessors wrote, written in advance (their contents unchanged). */
static void prefault_writes(const cmhost_rt_image* image, uint8_t* data, size_t bytes) {
  if (!image || !learning_possible()) return;
  size_t pages = bytes >> 12;
  if (pages > MAX_LEARNED_PAGES) pages = MAX_LEARNED_PAGES;
  enum { kRuns = 256 };
  size_t starts[kRuns], lengths[kRuns], runs = 0;
  pthread_mutex_lock(&learned_lock);
  const learned_set* set = learned_for(image, 0);
  for (size_t page = 0; set && page < pages && runs < kRuns;) {
    if (!(set->written[page >> 3] & (1u << (page & 7)))) {
      ++page;
      continue;
    }
    size_t end = page;
    while (end < pages && (set->written[end >> 3] & (1u << (end & 7)))) ++end;
    starts[runs] = page;
    lengths[runs++] = end - page;
    page = end;
  }
  pthread_mutex_unlock(&learned_lock);
  for (size_t i = 0; i < runs; ++i) madvise(data + (starts[i] << 12), lengths[i] << 12, MADV_POPULATE_WRITE);
}
#else
static void prefault_writes(const cmhost_rt_image* image, uint8_t* data, size_t bytes) { (void)image, (void)data, (void)bytes; }
#endif

/* Makes `memory` (`image` at its start when given, built already) from the
 * pool or a new reservation. */
/* wasm_rt_memory_t's size of `pages`: its bytes, stopping at 4 GiB - 1. */
static uint32_t size_of_pages(uint64_t pages) {
  return pages * PAGE_BYTES > UINT32_MAX ? UINT32_MAX : (uint32_t)(pages * PAGE_BYTES);
}

static void allocate(wasm_rt_memory_t* memory, uint32_t initial_pages, uint32_t max_pages, const cmhost_rt_image* image) {
  if (max_pages > 65536) max_pages = 65536;
  if (cap_memory_pages < max_pages) max_pages = (uint32_t)cap_memory_pages;
  if (initial_pages > max_pages) wasm_rt_trap((wasm_rt_trap_t)CMHOST_TRAP_CAPS);
  const size_t reserved = reservation_bytes(max_pages);
  const size_t bytes = (size_t)initial_pages * PAGE_BYTES;
  uint8_t* data = NULL;
  region* r = NULL;
  pooled slot;
  if (CMHOST_RT_GUARD_PAGES && take_pooled(image, &slot)) {
    r = find_region(memories, MAX_MEMORIES, (uintptr_t)slot.base);
    if (!r || !reshape_pooled(&slot, image, bytes)) {
      munmap(slot.base, reserved);
      if (r) {
        atomic_store(&r->image, 0);
        atomic_store(&r->end, 0);
        atomic_store(&r->begin, 0);
      }
      wasm_rt_trap((wasm_rt_trap_t)CMHOST_TRAP_CAPS);
    }
    data = slot.base;
  } else if (reserved) {
    void* mapping = mmap(NULL, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) wasm_rt_trap((wasm_rt_trap_t)CMHOST_TRAP_CAPS);
    data = mapping;
    /* Over the start of the fresh memory: what an instance writes is its
     * own copy; pages it only reads stay the image's. */
    if ((bytes && mprotect(data, bytes, PROT_READ | PROT_WRITE) != 0) ||
        (image && mmap(data, image->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, image->fd, 0) == MAP_FAILED) ||
        !(r = register_region(memories, MAX_MEMORIES, (uintptr_t)data, (uintptr_t)data + reserved))) {
      munmap(mapping, reserved);
      wasm_rt_trap((wasm_rt_trap_t)CMHOST_TRAP_CAPS);
    }
  }
  if (r) atomic_store(&r->image, (uintptr_t)image);
  prefault_writes(image, data, bytes);
  memory->data = data;
  memory->pages = initial_pages;
  memory->max_pages = max_pages;
  memory->size = size_of_pages(initial_pages);
  if (object_observer) object_observer(object_observer_context, memory, 0);
}

void wasm_rt_allocate_memory(wasm_rt_memory_t* memory, uint32_t initial_pages, uint32_t max_pages) {
  allocate(memory, initial_pages, max_pages, NULL);
}

void cmhost_rt_allocate_imaged_memory(wasm_rt_memory_t* memory, uint32_t initial_pages, uint32_t max_pages,
                                      cmhost_rt_image* image, void (*load)(wasm_rt_memory_t*)) {
  if (__atomic_load_n(&image->state, __ATOMIC_ACQUIRE) == 0) {
    const wasm_rt_memory_t like = {NULL, initial_pages, initial_pages, size_of_pages(initial_pages)};
    pthread_mutex_lock(&image_lock);
    if (__atomic_load_n(&image->state, __ATOMIC_ACQUIRE) == 0) build_image(image, &like, load);
    pthread_mutex_unlock(&image_lock);
  }
  if (__atomic_load_n(&image->state, __ATOMIC_ACQUIRE) != 1) {
    allocate(memory, initial_pages, max_pages, NULL);
    load(memory);
    return;
  }
  allocate(memory, initial_pages, max_pages, image->bytes ? image : NULL);
}

uint32_t wasm_rt_grow_memory(wasm_rt_memory_t* memory, uint32_t delta) {
  const uint32_t old_pages = memory->pages;
  if (delta == 0) return old_pages;
  if ((uint64_t)old_pages + delta > memory->max_pages) return (uint32_t)-1;
  if (!growth_allowed(memory, 0, delta)) return (uint32_t)-1;
  const uint32_t new_pages = old_pages + delta;
  if (mprotect(memory->data + (size_t)old_pages * PAGE_BYTES, (size_t)delta * PAGE_BYTES,
               PROT_READ | PROT_WRITE) != 0)
    return (uint32_t)-1;
  memory->pages = new_pages;
  /* 65536 pages is 4 GiB, one more than a u32 holds: wasm2c's own runtime
   * saturates the same way. */
  memory->size = size_of_pages(new_pages);
  return old_pages;
}

void wasm_rt_free_memory(wasm_rt_memory_t* memory) {
  if (!memory->data) return;
  region* r = find_region(memories, MAX_MEMORIES, (uintptr_t)memory->data);
#if CMHOST_RT_GUARD_PAGES
  const size_t bytes = (size_t)memory->pages * PAGE_BYTES;
  if (r && pool_free_max_bytes && bytes <= pool_free_max_bytes) {
    pthread_mutex_lock(&pool_lock);
    const int room = pool_count < pool_slots;
    pthread_mutex_unlock(&pool_lock);
    const cmhost_rt_image* image = (const cmhost_rt_image*)atomic_load(&r->image);
    if (room) learn_writes(image, memory->data, bytes);
    if (room && (!bytes || madvise(memory->data, bytes, MADV_DONTNEED) == 0)) {
      pthread_mutex_lock(&pool_lock);
      if (pool_count < pool_slots) {
        pool[pool_count++] = (pooled){memory->data, bytes, image};
        pthread_mutex_unlock(&pool_lock);
        memory->data = NULL;
        return;
      }
      pthread_mutex_unlock(&pool_lock);
    }
  }
#endif
  if (r) {
    munmap(memory->data, atomic_load(&r->end) - atomic_load(&r->begin));
    atomic_store(&r->image, 0);
    atomic_store(&r->end, 0);
    atomic_store(&r->begin, 0);
  }
  memory->data = NULL;
}

/* ---- tables ---- */

#define DEFINE_TABLE(kind, null_value)                                                                \
  void wasm_rt_allocate_##kind##_table(wasm_rt_##kind##_table_t* table, uint32_t elements,           \
                                       uint32_t max_elements) {                                      \
    if (cap_table_elements < max_elements) max_elements = (uint32_t)cap_table_elements;              \
    if (elements > max_elements) wasm_rt_trap((wasm_rt_trap_t)CMHOST_TRAP_CAPS);                     \
    table->data = calloc(elements ? elements : 1, sizeof *table->data);                              \
    if (!table->data) wasm_rt_trap((wasm_rt_trap_t)CMHOST_TRAP_CAPS);                                \
    for (uint32_t i = 0; i < elements; ++i) table->data[i] = null_value;                             \
    table->size = elements;                                                                          \
    table->max_size = max_elements;                                                                  \
    if (object_observer) object_observer(object_observer_context, table, 1);                         \
  }                                                                                                  \
  void wasm_rt_free_##kind##_table(wasm_rt_##kind##_table_t* table) {                                \
    free(table->data);                                                                               \
    table->data = NULL;                                                                              \
  }                                                                                                  \
  uint32_t wasm_rt_grow_##kind##_table(wasm_rt_##kind##_table_t* table, uint32_t delta,              \
                                       wasm_rt_##kind##_t init) {                                    \
    const uint32_t old_size = table->size;                                                           \
    if ((uint64_t)old_size + delta > table->max_size) return (uint32_t)-1;                           \
    if (delta == 0) return old_size;                                                                 \
    if (!growth_allowed(table, 1, delta)) return (uint32_t)-1;                                       \
    const uint32_t new_size = old_size + delta;                                                      \
    void* grown = realloc(table->data, (size_t)new_size * sizeof *table->data);                      \
    if (!grown) return (uint32_t)-1;                                                                 \
    table->data = grown;                                                                             \
    for (uint32_t i = old_size; i < new_size; ++i) table->data[i] = init;                            \
    table->size = new_size;                                                                          \
    return old_size;                                                                                 \
  }

DEFINE_TABLE(funcref, wasm_rt_funcref_null_value)
DEFINE_TABLE(externref, wasm_rt_externref_null_value)

/* ---- native stacks and faults ---- */

void cmhost_rt_stack_init(cmhost_rt_stack* stack, const void* low, size_t size, size_t margin) {
  const uintptr_t bottom = (uintptr_t)low;
  stack->trap_target = NULL;
  stack->unwind_target = NULL;
  stack->depth = 0;
  stack->guard_low = bottom >= 65536 ? bottom - 65536 : 0;
  stack->limit = bottom + (margin < size ? margin : size);
}

cmhost_rt_stack* cmhost_rt_switch(cmhost_rt_stack* stack) {
  cmhost_rt_stack* previous = current_stack;
  current_stack = stack;
  cmhost_rt_stack_limit = current()->limit;
  return previous;
}

#if CMHOST_RT_GUARD_PAGES
static struct sigaction previous_segv, previous_bus;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

static uintptr_t fault_pc(void* context) {
  const ucontext_t* uc = context;
#if defined(__x86_64__)
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)uc->uc_mcontext.pc;
#else
  (void)uc;
  return 0;
#endif
}

static void chain(int signal_number, siginfo_t* info, void* context) {
  const struct sigaction* previous = signal_number == SIGBUS ? &previous_bus : &previous_segv;
  if (previous->sa_flags & SA_SIGINFO) {
    previous->sa_sigaction(signal_number, info, context);
  } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
    previous->sa_handler(signal_number);
  } else {
    /* Back to the default action: returning re-runs the faulting
     * instruction, which now ends the process as it would have. */
    signal(signal_number, SIG_DFL);
  }
}

static void on_fault(int signal_number, siginfo_t* info, void* context) {
  cmhost_rt_stack* stack = current();
  const uintptr_t address = (uintptr_t)info->si_addr;
  if (stack->trap_target && find_region(code_regions, MAX_CODE, fault_pc(context))) {
    if (find_region(memories, MAX_MEMORIES, address)) trap_to(stack->trap_target, WASM_RT_TRAP_OOB);
    if (address >= stack->guard_low && address < stack->limit)
      trap_to(stack->trap_target, WASM_RT_TRAP_EXHAUSTION);
  }
  chain(signal_number, info, context);
}

static void install_handler(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previous_segv);
  sigaction(SIGBUS, &action, &previous_bus);
}

static pthread_key_t altstack_key;
static pthread_once_t altstack_key_once = PTHREAD_ONCE_INIT;
static void free_altstack(void* memory) {
  stack_t disable;
  memset(&disable, 0, sizeof disable);
  disable.ss_flags = SS_DISABLE;
  sigaltstack(&disable, NULL);
  free(memory);
}
static void make_altstack_key(void) { pthread_key_create(&altstack_key, free_altstack); }

/* A fault from a stack overflow cannot run its handler on that stack. */
static void ensure_altstack(void) {
  stack_t existing;
  if (sigaltstack(NULL, &existing) == 0 && !(existing.ss_flags & SS_DISABLE)) return;
  const size_t size = 64 * 1024;
  void* memory = malloc(size);
  if (!memory) return;
  stack_t alt;
  memset(&alt, 0, sizeof alt);
  alt.ss_sp = memory;
  alt.ss_size = size;
  if (sigaltstack(&alt, NULL) != 0) {
    free(memory);
    return;
  }
  pthread_once(&altstack_key_once, make_altstack_key);
  pthread_setspecific(altstack_key, memory);
}
#endif

cmhost_rt_stack* cmhost_rt_enter_thread(void) {
  if (thread_ready) return current();
  thread_ready = 1;
  pthread_attr_t attributes;
  void* low = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
    pthread_attr_getstack(&attributes, &low, &size);
    pthread_attr_destroy(&attributes);
  }
  cmhost_rt_stack_init(&thread_stack, low, size, CMHOST_RT_HOST_MARGIN);
  if (!low) thread_stack.limit = 0; /* unknown: rely on the guard page */
#if CMHOST_RT_GUARD_PAGES
  pthread_once(&handler_once, install_handler);
  ensure_altstack();
#endif
  cmhost_rt_stack_limit = current()->limit;
  return current();
}
