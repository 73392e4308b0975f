#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static void merge_sort(uint32_t* a, uint32_t* scratch, uint32_t n) {
  if (n < 2) return;
  const uint32_t half = n / 2;
  merge_sort(a, scratch, half);
  merge_sort(a + half, scratch, n - half);
  uint32_t i = 0, j = half, k = 0;
  while (i < half && j < n) scratch[k++] = a[i] <= a[j] ? a[i++] : a[j++];
  while (i < half) scratch[k++] = a[i++];
  while (j < n) scratch[k++] = a[j++];
  memcpy(a, scratch, n * sizeof *a);
}

uint64_t kernel_sort_hash(uint32_t n) {
  uint32_t* a = malloc((size_t)n * sizeof *a);
  uint32_t* scratch = malloc((size_t)n * sizeof *scratch);
  if (!a || !scratch) return 0;
  uint32_t state = 2463534242u;
  for (uint32_t i = 0; i < n; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    a[i] = state;
  }
  merge_sort(a, scratch, n);
  uint64_t hash = 1469598103934665603ull; /* FNV-1a over the sorted words */
  for (uint32_t i = 0; i < n; ++i) {
    hash ^= a[i];
    hash *= 1099511628211ull;
  }
  free(a);
  free(scratch);
  return hash;
}

uint64_t kernel_fib(uint32_t n) { return n < 2 ? n : kernel_fib(n - 1) + kernel_fib(n - 2); }

double kernel_float_loop(uint32_t n) {
  double sum = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    const double cr = -0.75 + (double)(i % 1000) * 1e-4, ci = 0.1 + (double)(i % 777) * 1e-4;
    double zr = 0.0, zi = 0.0;
    for (int k = 0; k < 32; ++k) {
      const double t = zr * zr - zi * zi + cr;
      zi = 2.0 * zr * zi + ci;
      zr = t;
    }
    sum += zr * zr + zi * zi < 4.0 ? zr : 1.0;
  }
  return sum;
}

uint64_t kernel_mem_loop(uint32_t n) {
  enum { kBytes = 65536 };
  unsigned char* a = malloc(kBytes);
  unsigned char* b = malloc(kBytes);
  if (!a || !b) return 0;
  uint64_t sum = 0;
  for (uint32_t r = 0; r < n; ++r) {
    memset(a, (int)(r & 0xff), kBytes);
    a[r % kBytes] = (unsigned char)r;
    memcpy(b, a, kBytes);
    memcpy(a + 1, b, kBytes - 1);
    sum += (uint64_t)a[(r * 7919u) % kBytes] + b[(r * 104729u) % kBytes];
  }
  free(a);
  free(b);
  return sum;
}
