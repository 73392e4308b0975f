// The guest of the world `greeter`: greetings built from what the host's
// `env` interface returns. Every block is counted (`live-allocations`), so
// tests see that the guest can free what the host allocated in its memory
// and that the host ran the post-return functions.
#include <stdlib.h>
#include <string.h>

#include "greeter.h"

static uint32_t live_blocks;

void *greeter_realloc(void *ptr, size_t size) {
  void *ret = realloc(ptr, size);
  if (ret && !ptr) live_blocks++;
  return ret;
}

void greeter_free(void *ptr) {
  if (!ptr) return;
  live_blocks--;
  free(ptr);
}

uint32_t exports_greeter_live_allocations(void) { return live_blocks; }

// `a` + `b` + `c` + `d` into a new string.
static void concat4(greeter_string_t *ret, greeter_string_t a, const char *b, greeter_string_t c, const char *d) {
  const size_t nb = strlen(b), nd = strlen(d);
  ret->len = a.len + nb + c.len + nd;
  ret->ptr = ret->len > 0 ? (uint8_t *)greeter_realloc(NULL, ret->len) : NULL;
  if (ret->len > 0 && !ret->ptr) abort();
  uint8_t *at = ret->ptr;
  if (a.len) memcpy(at, a.ptr, a.len);
  at += a.len;
  if (nb) memcpy(at, b, nb);
  at += nb;
  if (c.len) memcpy(at, c.ptr, c.len);
  at += c.len;
  if (nd) memcpy(at, d, nd);
}

// "<greeting>, <name>!" where the greeting is env `greeting`, or "Hello".
void exports_greeter_greet(greeter_string_t *name, greeter_string_t *ret) {
  greeter_string_t key, greeting, fallback;
  greeter_string_set(&key, "greeting");
  const bool found = cmhost_test_env_get(&key, &greeting);
  if (!found) {
    greeter_string_t msg;
    greeter_string_set(&msg, "no greeting set");
    cmhost_test_env_log(CMHOST_TEST_ENV_LEVEL_WARN, &msg);
  }
  greeter_string_set(&fallback, "Hello");
  concat4(ret, found ? greeting : fallback, ", ", *name, "!");
  cmhost_test_env_log(CMHOST_TEST_ENV_LEVEL_INFO, ret);
  if (found) greeter_string_free(&greeting);
  greeter_string_free(name);
}

// "key=value" for every key the host lists, "key" alone when it has no value.
void exports_greeter_describe(greeter_list_string_t *ret) {
  greeter_list_string_t keys;
  cmhost_test_env_keys(&keys);
  ret->len = keys.len;
  ret->ptr = keys.len > 0 ? (greeter_string_t *)greeter_realloc(NULL, keys.len * sizeof(greeter_string_t)) : NULL;
  for (size_t i = 0; i < keys.len; i++) {
    greeter_string_t value, empty = {NULL, 0};
    if (cmhost_test_env_get(&keys.ptr[i], &value)) {
      concat4(&ret->ptr[i], keys.ptr[i], "=", value, "");
      greeter_string_free(&value);
    } else {
      concat4(&ret->ptr[i], keys.ptr[i], "", empty, "");
    }
  }
  greeter_list_string_free(&keys);
}
