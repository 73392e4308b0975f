// Canonical ABI glue of the world `greeter` (greeter.wit), written by hand
// the way wit-bindgen's C generator emits it: imports from
// `cmhost:test/env@0.1.0` whose results do not fit one core value are
// written by the host into a return area on the guest's stack; root exports
// are named as in the world (`greet`), with `cabi_post_greet`; and
// `cabi_realloc` lets the host allocate arguments and import results.
// Allocation goes through the counting greeter_realloc/greeter_free
// (guest.c) instead of realloc/free, so tests can see leaks.
#include "greeter.h"

#include <stdlib.h>
#include <string.h>

__attribute__((__aligned__(4))) static uint8_t RET_AREA[8];

__attribute__((__weak__, __export_name__("cabi_realloc"))) void *cabi_realloc(void *ptr, size_t old_size,
                                                                                size_t align, size_t new_size) {
  (void)old_size;
  // Empty strings and lists get an aligned pointer that is never freed.
  if (new_size == 0) return (void *)align;
  void *ret = greeter_realloc(ptr, new_size);
  if (!ret) abort();
  return ret;
}

// ---- Helpers ----

// Borrows `s`: for arguments to imports, which the host only reads.
void greeter_string_set(greeter_string_t *ret, const char *s) {
  ret->ptr = (uint8_t *)s;
  ret->len = strlen(s);
}

void greeter_string_free(greeter_string_t *ret) {
  if (ret->len > 0) greeter_free(ret->ptr);
  ret->ptr = NULL;
  ret->len = 0;
}

void greeter_list_string_free(greeter_list_string_t *ptr) {
  for (size_t i = 0; i < ptr->len; i++) greeter_string_free(&ptr->ptr[i]);
  if (ptr->len > 0) greeter_free(ptr->ptr);
  ptr->ptr = NULL;
  ptr->len = 0;
}

// ---- Imported functions ----

__attribute__((__import_module__("cmhost:test/env@0.1.0"), __import_name__("log")))
extern void __wasm_import_cmhost_test_env_log(int32_t, uint8_t *, size_t);

__attribute__((__import_module__("cmhost:test/env@0.1.0"), __import_name__("get")))
extern void __wasm_import_cmhost_test_env_get(uint8_t *, size_t, uint8_t *);

__attribute__((__import_module__("cmhost:test/env@0.1.0"), __import_name__("keys")))
extern void __wasm_import_cmhost_test_env_keys(uint8_t *);

void cmhost_test_env_log(cmhost_test_env_level_t level, greeter_string_t *msg) {
  __wasm_import_cmhost_test_env_log((int32_t)level, (uint8_t *)(*msg).ptr, (*msg).len);
}

bool cmhost_test_env_get(greeter_string_t *key, greeter_string_t *ret) {
  __attribute__((__aligned__(4))) uint8_t ret_area[12];
  uint8_t *ptr = (uint8_t *)&ret_area;
  __wasm_import_cmhost_test_env_get((uint8_t *)(*key).ptr, (*key).len, ptr);
  greeter_option_string_t option;
  switch ((int32_t)(*((uint8_t *)(ptr + 0)))) {
    case 0: {
      option.is_some = false;
      break;
    }
    case 1: {
      option.is_some = true;
      option.val = (greeter_string_t){(uint8_t *)(*((uint8_t **)(ptr + 4))), (*((size_t *)(ptr + 8)))};
      break;
    }
    default: abort();
  }
  *ret = option.val;
  return option.is_some;
}

void cmhost_test_env_keys(greeter_list_string_t *ret) {
  __attribute__((__aligned__(4))) uint8_t ret_area[8];
  uint8_t *ptr = (uint8_t *)&ret_area;
  __wasm_import_cmhost_test_env_keys(ptr);
  *ret = (greeter_list_string_t){(greeter_string_t *)(*((uint8_t **)(ptr + 0))), (*((size_t *)(ptr + 4)))};
}

// ---- Exported functions ----

__attribute__((__export_name__("greet"))) uint8_t *__wasm_export_exports_greeter_greet(uint8_t *arg, size_t arg0) {
  greeter_string_t arg1 = (greeter_string_t){(uint8_t *)(arg), (arg0)};
  greeter_string_t ret;
  exports_greeter_greet(&arg1, &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((size_t *)(ptr + 4)) = ret.len;
  *((uint8_t **)(ptr + 0)) = (uint8_t *)ret.ptr;
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_greet"))) void __wasm_export_exports_greeter_greet_post_return(
    uint8_t *arg0) {
  if ((*((size_t *)(arg0 + 4))) > 0) {
    greeter_free(*((uint8_t **)(arg0 + 0)));
  }
}

__attribute__((__export_name__("describe"))) uint8_t *__wasm_export_exports_greeter_describe(void) {
  greeter_list_string_t ret;
  exports_greeter_describe(&ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((size_t *)(ptr + 4)) = ret.len;
  *((uint8_t **)(ptr + 0)) = (uint8_t *)ret.ptr;
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_describe"))) void
__wasm_export_exports_greeter_describe_post_return(uint8_t *arg0) {
  uint8_t *base = *((uint8_t **)(arg0 + 0));
  size_t len = *((size_t *)(arg0 + 4));
  for (size_t i = 0; i < len; i++) {
    uint8_t *base1 = base + i * 8;
    if ((*((size_t *)(base1 + 4))) > 0) {
      greeter_free(*((uint8_t **)(base1 + 0)));
    }
  }
  if (len > 0) {
    greeter_free(base);
  }
}

__attribute__((__export_name__("live-allocations"))) int32_t __wasm_export_exports_greeter_live_allocations(void) {
  uint32_t ret = exports_greeter_live_allocations();
  return (int32_t)(ret);
}
