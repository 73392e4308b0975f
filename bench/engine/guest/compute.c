/* The compute guest: the kernels (kernels.c) behind the world's exports. All
 * its functions take and return numbers, so the canonical ABI needs no glue
 * beyond the export and import names. */
#include <stdint.h>

#include "kernels.h"

#define EXPORT(name) __attribute__((export_name(name)))

__attribute__((import_module("$root"), import_name("host-inc"))) extern uint32_t host_inc(uint32_t x);

EXPORT("sort-hash") uint64_t sort_hash(uint32_t n) { return kernel_sort_hash(n); }
EXPORT("fib") uint64_t fib(uint32_t n) { return kernel_fib(n); }
EXPORT("float-loop") double float_loop(uint32_t n) { return kernel_float_loop(n); }
EXPORT("mem-loop") uint64_t mem_loop(uint32_t n) { return kernel_mem_loop(n); }
EXPORT("inc") uint32_t inc(uint32_t x) { return x + 1; }

EXPORT("call-host") uint32_t call_host(uint32_t n) {
  uint32_t x = 0;
  for (uint32_t i = 0; i < n; ++i) x = host_inc(x);
  return x;
}
