// Bindings of the world `greeter` (greeter.wit), written by hand in the
// shape wit-bindgen's C generator emits: types, the imported functions the
// bindings provide, the exported functions guest.c implements.
#ifndef __BINDINGS_GREETER_H
#define __BINDINGS_GREETER_H
#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct greeter_string_t {
  uint8_t *ptr;
  size_t len;
} greeter_string_t;

typedef uint8_t cmhost_test_env_level_t;

#define CMHOST_TEST_ENV_LEVEL_INFO 0
#define CMHOST_TEST_ENV_LEVEL_WARN 1

typedef struct greeter_option_string_t {
  bool is_some;
  greeter_string_t val;
} greeter_option_string_t;

typedef struct greeter_list_string_t {
  greeter_string_t *ptr;
  size_t len;
} greeter_list_string_t;

// Imported functions. Arguments stay the caller's (the host only reads
// them); results are allocated in guest memory by the host through
// cabi_realloc and belong to the caller, which frees them.
void cmhost_test_env_log(cmhost_test_env_level_t level, greeter_string_t *msg);
bool cmhost_test_env_get(greeter_string_t *key, greeter_string_t *ret);
void cmhost_test_env_keys(greeter_list_string_t *ret);

// Exported functions, implemented by the guest. Arguments belong to the
// callee; results belong to the bindings, freed in post-return functions.
void exports_greeter_greet(greeter_string_t *name, greeter_string_t *ret);
void exports_greeter_describe(greeter_list_string_t *ret);
uint32_t exports_greeter_live_allocations(void);

void greeter_string_set(greeter_string_t *ret, const char *s);
void greeter_string_free(greeter_string_t *ret);
void greeter_list_string_free(greeter_list_string_t *ptr);

// The guest's allocator (guest.c): realloc and free that count live blocks.
void *greeter_realloc(void *ptr, size_t size);
void greeter_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
