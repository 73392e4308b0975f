/* The interface between cmhost and an ahead-of-time artifact (a shared
 * object of wasm2c-translated core modules plus generated glue).
 *
 * An artifact carries no runtime support of its own: the wasm_rt_* functions
 * the translated code calls, the trap and exception targets, and the stack
 * limit are cmhost's (rt.c), exported from the host executable (see
 * cmhost_engine's link options), so every artifact loaded in a process
 * shares one trap target per native stack and one registry of function
 * types. The artifact exposes one symbol, `cmhost_artifact`.
 *
 * Compiled as C by the system compiler (artifacts) and as C/C++ by cmhost. */
#ifndef CMHOST_AOT_H_
#define CMHOST_AOT_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wasm-rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever anything below changes shape. */
#define CMHOST_AOT_ABI 2

/* Trap codes beyond wasm_rt_trap_t's: a host function failed (its error is
 * kept by the host), or a memory or table would exceed the store's caps. */
#define CMHOST_TRAP_HOST 100
#define CMHOST_TRAP_CAPS 101

/* One resolved import of an instance: a function is code plus the context
 * it is called with (its module instance, or a host binding); a memory,
 * table or global is a pointer to the exporter's object. */
typedef struct cmhost_aot_slot {
  void* code;
  void* context;
} cmhost_aot_slot;

/* Calls `code` (a function of one signature) with raw value bits. */
typedef void (*cmhost_aot_invoker)(void* code, void* context, const uint64_t* args, uint64_t* results);

typedef struct cmhost_aot_signature {
  cmhost_aot_invoker invoke;   /* null when a reference type is involved */
  void* host_thunk;            /* code calling a host binding, null likewise */
} cmhost_aot_signature;

typedef struct cmhost_aot_module {
  const char* shape;            /* imports, exports and types (shape.hpp) */
  size_t instance_size;         /* zeroed by the host before instantiate */
  size_t slots_offset;          /* where the import slots are in an instance */
  void (*init_module)(void);
  void (*instantiate)(void* instance);
  void (*free_instance)(void* instance);
  /* A function export's code (its context is the instance), or a pointer
   * to an exported memory, table or global. */
  void* (*export_ptr)(void* instance, uint32_t index);
  const cmhost_aot_signature* signatures; /* by type index */
  uint32_t signature_count;
} cmhost_aot_module;

typedef struct cmhost_aot_artifact {
  uint32_t abi;
  uint32_t module_count;
  const cmhost_aot_module* const* modules;
} cmhost_aot_artifact;

/* ---- cmhost's runtime support (rt.c) ---- */

/* Generated function prologues trap when the native stack reaches this
 * (CMHOST_STACK_LIMIT). TinyCC, the baseline tier's compiler, has no
 * thread-local storage: its code asks for the limit with a call. */
#ifdef __TINYC__
uintptr_t cmhost_rt_stack_limit_now(void);
#define CMHOST_STACK_LIMIT cmhost_rt_stack_limit_now()
#else
extern __thread uintptr_t cmhost_rt_stack_limit __attribute__((tls_model("initial-exec")));
#define CMHOST_STACK_LIMIT cmhost_rt_stack_limit
#endif

#ifdef __TINYC__
/* The bit counts wasm2c's C takes from GCC's builtins, which TinyCC lacks. */
static inline int cmhost_clz64(uint64_t x) {
  int n = 0;
  if (!(x >> 32)) { n += 32; x <<= 32; }
  if (!(x >> 48)) { n += 16; x <<= 16; }
  if (!(x >> 56)) { n += 8; x <<= 8; }
  if (!(x >> 60)) { n += 4; x <<= 4; }
  if (!(x >> 62)) { n += 2; x <<= 2; }
  if (!(x >> 63)) { n += 1; }
  return n;
}
static inline int cmhost_ctz64(uint64_t x) {
  int n = 0;
  if (!(x & 0xffffffffu)) { n += 32; x >>= 32; }
  if (!(x & 0xffffu)) { n += 16; x >>= 16; }
  if (!(x & 0xffu)) { n += 8; x >>= 8; }
  if (!(x & 0xfu)) { n += 4; x >>= 4; }
  if (!(x & 0x3u)) { n += 2; x >>= 2; }
  if (!(x & 0x1u)) { n += 1; }
  return n;
}
static inline int cmhost_popcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (int)((x * 0x0101010101010101ull) >> 56);
}
/* As GCC's, undefined for 0 (wasm2c tests for it first). */
#define __builtin_clz(x) (cmhost_clz64((uint64_t)(uint32_t)(x)) - 32)
#define __builtin_clzll(x) cmhost_clz64((uint64_t)(x))
#define __builtin_ctz(x) cmhost_ctz64((uint64_t)(uint32_t)(x))
#define __builtin_ctzll(x) cmhost_ctz64((uint64_t)(x))
#define __builtin_popcount(x) cmhost_popcount64((uint64_t)(uint32_t)(x))
#define __builtin_popcountll(x) cmhost_popcount64((uint64_t)(x))
/* TinyCC calls the C library for every memcpy, and a guard-page fault in
 * the library is no fault of guest code to the fault handler (rt.c looks
 * at where it happened): a memory access copies in the artifact's own code. */
static inline void* cmhost_copy(void* to, const void* from, size_t n) {
  switch (n) {
    case 1: *(uint8_t*)to = *(const uint8_t*)from; break;
    case 2: *(uint16_t*)to = *(const uint16_t*)from; break;
    case 4: *(uint32_t*)to = *(const uint32_t*)from; break;
    case 8: *(uint64_t*)to = *(const uint64_t*)from; break;
    default: {
      unsigned char* out = (unsigned char*)to;
      const unsigned char* in = (const unsigned char*)from;
      while (n--) *out++ = *in++;
    }
  }
  return to;
}
#undef wasm_rt_memcpy
#define wasm_rt_memcpy cmhost_copy
#endif

/* A defined memory's initial contents: its data segments applied once per
 * process into a memfd, which each instance's memory then maps
 * copy-on-write (MAP_PRIVATE) instead of copying the segments in. The
 * translation uses it for memories whose active segments all sit at
 * constant offsets within the initial size (see translate.cpp); a static
 * of the artifact, zero until built. */
typedef struct cmhost_rt_image {
  int state;    /* 0: not built; 1: built; 2: unavailable (segments are copied) */
  int fd;
  size_t bytes; /* mapped from the start of the memory: the rest is zeros */
} cmhost_rt_image;
/* wasm_rt_allocate_memory, the memory then holding what `load` writes:
 * the image, built with `load` first if it is not built yet. */
void cmhost_rt_allocate_imaged_memory(wasm_rt_memory_t* memory, uint32_t initial_pages, uint32_t max_pages,
                                      cmhost_rt_image* image, void (*load)(wasm_rt_memory_t*));

/* Runs a host binding (its first member is the entry point); returns only
 * when it succeeded, else unwinds to the current trap target. */
typedef int (*cmhost_rt_host_entry)(void* binding, const uint64_t* args, uint64_t* results);
void cmhost_rt_call_host(void* binding, const uint64_t* args, uint64_t* results);

static inline uint64_t cmhost_f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}
static inline float cmhost_f32_from(uint64_t bits) {
  uint32_t low = (uint32_t)bits;
  float value;
  memcpy(&value, &low, sizeof value);
  return value;
}
static inline uint64_t cmhost_f64_bits(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}
static inline double cmhost_f64_from(uint64_t bits) {
  double value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

#ifdef __cplusplus
}
#endif

#endif /* CMHOST_AOT_H_ */
