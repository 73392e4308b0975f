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
#define CMHOST_AOT_ABI 1

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

/* Generated function prologues trap when the native stack reaches this. */
extern __thread uintptr_t cmhost_rt_stack_limit __attribute__((tls_model("initial-exec")));

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
