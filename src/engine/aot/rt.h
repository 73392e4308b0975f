/* cmhost's runtime support for translated code (rt.c): what the
 * ahead-of-time engine (aot_engine.cpp) uses of it. The translated code
 * itself sees only wasm-rt.h and cmhost_aot.h. */
#ifndef CMHOST_RT_H_
#define CMHOST_RT_H_

#include <stddef.h>
#include <stdint.h>

#include "cmhost_aot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether artifacts check memory bounds themselves (sanitizer builds, where
 * the fault handler would fight the sanitizers') or rely on guard pages and
 * rt.c's fault handler. */
#if defined(CMHOST_AOT_EXPLICIT_BOUNDS)
#define CMHOST_RT_GUARD_PAGES 0
#else
#define CMHOST_RT_GUARD_PAGES 1
#endif

/* Room kept on every native stack for host frames (lifting, lowering, the
 * scheduler) above the deepest guest frame. */
#if defined(__SANITIZE_ADDRESS__)
#define CMHOST_RT_HOST_MARGIN (1024 * 1024)
#else
#define CMHOST_RT_HOST_MARGIN (256 * 1024)
#endif

/* The state of one native stack (a thread's own, or a fiber's): where a trap
 * or an uncaught exception unwinds to, and where its stack ends. */
typedef struct cmhost_rt_stack {
  void* trap_target;    /* the innermost call's jump buffer on this stack */
  void* unwind_target;  /* sigjmp_buf* of the innermost try block; null: exceptions trap */
  uintptr_t limit;      /* a function entered below this traps */
  uintptr_t guard_low;  /* faults in [guard_low, limit) are exhaustion */
  unsigned depth;       /* host -> wasm calls in progress on this stack */
} cmhost_rt_stack;

/* Prepares the calling thread to run translated code (its own stack's
 * limit, an alternate signal stack, the fault handler) and returns its
 * stack state; cheap after the first call on a thread. */
cmhost_rt_stack* cmhost_rt_enter_thread(void);

/* Sets up the state of a fiber's stack: [low, low + size) with `margin`
 * bytes kept free for host frames above the deepest guest frame. */
void cmhost_rt_stack_init(cmhost_rt_stack* stack, const void* low, size_t size, size_t margin);

/* Makes `stack` the calling thread's current one (null: the thread's own)
 * and returns the previous one. */
cmhost_rt_stack* cmhost_rt_switch(cmhost_rt_stack* stack);

/* Calls translated code through its signature's invoker. Returns 0, or the
 * trap code (wasm_rt_trap_t, CMHOST_TRAP_*) it unwound with. */
int cmhost_rt_invoke(cmhost_aot_invoker invoke, void* code, void* context, const uint64_t* args,
                     uint64_t* results);
/* The same for a module's instantiate (initialisers and start function). */
int cmhost_rt_instantiate(void (*instantiate)(void*), void* instance);

/* Caps for memories and tables the calling thread allocates next
 * (UINT64_MAX: none); `on_object(context, object, is_table)` is told of each
 * memory and table allocated (null: nobody). */
void cmhost_rt_set_caps(uint64_t max_memory_pages, uint64_t max_table_elements,
                        void (*on_object)(void* context, void* object, int is_table), void* context);

/* Asked before a memory grows by `delta` pages or a table by `delta`
 * elements, by guest code or the host, once both fit their own maximum:
 * the store that made the object checks its limits against what its
 * memories and tables hold now (nonzero: allowed). Null: always allowed. */
typedef int (*cmhost_rt_growth_hook)(const void* object, int is_table, uint64_t delta);
void cmhost_rt_set_growth_hook(cmhost_rt_growth_hook hook);

/* Lets the process-wide pool keep up to `slots` freed memories'
 * reservations for the next memories (it only grows; with explicit bounds
 * checks it stays empty). */
void cmhost_rt_grow_pool(size_t slots);
/* Memories the calling thread frees from now on go to the pool when it has
 * room and they hold at most `max_bytes` (0: none do). */
void cmhost_rt_pool_frees(uint64_t max_bytes);
/* Whether this build's memories rely on guard pages (the pool's
 * condition); CMHOST_RT_GUARD_PAGES says it only where rt.c's flags hold. */
int cmhost_rt_uses_guard_pages(void);
/* How many reservations wait in the pool now. */
size_t cmhost_rt_pooled_memories(void);

/* The registered id of a function type (what funcrefs carry); `codes` are
 * wasm_rt_type_t values, params then results. */
uint32_t cmhost_rt_type_id(uint32_t params, uint32_t results, const int* codes);

/* Records an artifact's code, so that faults in it are classified. */
void cmhost_rt_register_code(uintptr_t begin, uintptr_t end);

/* Words for a trap code, as close to the interpreter's as the code allows. */
const char* cmhost_rt_trap_message(int code);

#ifdef __cplusplus
}
#endif

#endif /* CMHOST_RT_H_ */
