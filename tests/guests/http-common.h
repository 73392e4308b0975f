// What the C wasi:http guests (http-service, http-proxy, http-middleware)
// share: the allocator the host calls, the import attribute, and the
// `method` variant, whose cases and memory layout 0.2 and 0.3 have alike.
#ifndef CMHOST_TEST_HTTP_COMMON_H
#define CMHOST_TEST_HTTP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT(module, name) __attribute__((__import_module__(module), __import_name__(name)))

__attribute__((__weak__, __export_name__("cabi_realloc"))) void *cabi_realloc(void *ptr, size_t old_size,
                                                                                size_t align, size_t new_size) {
  (void)old_size;
  // Empty strings and lists get an aligned pointer that is never freed.
  if (new_size == 0) return (void *)align;
  void *ret = realloc(ptr, new_size);
  if (!ret) __builtin_trap();
  return ret;
}

// `method`'s cases (variant discriminants, in WIT order).
enum http_method {
  HTTP_METHOD_GET,
  HTTP_METHOD_HEAD,
  HTTP_METHOD_POST,
  HTTP_METHOD_PUT,
  HTTP_METHOD_DELETE,
  HTTP_METHOD_CONNECT,
  HTTP_METHOD_OPTIONS,
  HTTP_METHOD_TRACE,
  HTTP_METHOD_PATCH,
  HTTP_METHOD_OTHER,  // other(string)
};

// `method` in memory (3 flat values: returned through a pointer).
typedef struct http_method_result {
  uint8_t tag;  // enum http_method
  uint8_t *other_ptr;
  size_t other_len;
} http_method_result_t;

// Whether the method is other(`name`).
static inline bool is_other_method(const http_method_result_t *method, const char *name) {
  return method->tag == HTTP_METHOD_OTHER && method->other_len == strlen(name) &&
         memcmp(method->other_ptr, name, method->other_len) == 0;
}

#endif
