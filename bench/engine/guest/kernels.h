/* The benchmark kernels, compiled into the compute guest (compute.c) and
 * natively into the benchmark binary. */
#ifndef CMHOST_BENCH_KERNELS_H
#define CMHOST_BENCH_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint64_t kernel_sort_hash(uint32_t n);
uint64_t kernel_fib(uint32_t n);
double kernel_float_loop(uint32_t n);
uint64_t kernel_mem_loop(uint32_t n);

#ifdef __cplusplus
}
#endif

#endif
