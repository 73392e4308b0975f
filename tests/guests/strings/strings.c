// Canonical ABI glue of the world `strings` (strings.wit), written by hand
// the way wit-bindgen's C generator emits it: exports named
// `cmhost:test/text@0.1.0#name`, results that do not fit one core value
// stored in a static return area and returned by pointer, one
// `cabi_post_<export>` per function whose result owns memory (freeing it
// after the host has read it), `cabi_realloc`, and the resource intrinsics
// imported from `[export]cmhost:test/text@0.1.0`. Offsets are those of the
// canonical ABI for a 32-bit memory.
//
// Two deliberate differences from generated code: allocation goes through
// strings_realloc/strings_free (counted, see guest.c), and post-return
// functions call strings_note_post_return, so tests can observe both.
#include "strings.h"

#include <stdlib.h>
#include <string.h>

// The largest result kept in memory: measure's stats (20 bytes, aligned to 4).
__attribute__((__aligned__(4))) static uint8_t RET_AREA[20];

__attribute__((__weak__, __export_name__("cabi_realloc"))) void *cabi_realloc(void *ptr, size_t old_size,
                                                                                size_t align, size_t new_size) {
  (void)old_size;
  // The host asks for empty strings and lists too: any aligned non-null
  // pointer will do, and free functions never free an empty value.
  if (new_size == 0) return (void *)align;
  void *ret = strings_realloc(ptr, new_size);
  if (!ret) abort();
  return ret;
}

// ---- Helpers ----

void strings_string_free(strings_string_t *ret) {
  if (ret->len > 0) strings_free(ret->ptr);
  ret->ptr = NULL;
  ret->len = 0;
}

void strings_string_dup(strings_string_t *ret, const char *s) {
  ret->len = strlen(s);
  ret->ptr = ret->len > 0 ? (uint8_t *)strings_realloc(NULL, ret->len) : NULL;
  if (ret->len > 0) memcpy(ret->ptr, s, ret->len);
}

void strings_list_string_free(strings_list_string_t *ptr) {
  for (size_t i = 0; i < ptr->len; i++) strings_string_free(&ptr->ptr[i]);
  if (ptr->len > 0) strings_free(ptr->ptr);
  ptr->ptr = NULL;
  ptr->len = 0;
}

void strings_list_u32_free(strings_list_u32_t *ptr) {
  if (ptr->len > 0) strings_free(ptr->ptr);
  ptr->ptr = NULL;
  ptr->len = 0;
}

void exports_cmhost_test_text_token_free(exports_cmhost_test_text_token_t *ptr) {
  switch ((int32_t)ptr->tag) {
    case EXPORTS_CMHOST_TEST_TEXT_TOKEN_WORD: strings_string_free(&ptr->val.word); break;
    default: break;
  }
}

void exports_cmhost_test_text_list_token_free(exports_cmhost_test_text_list_token_t *ptr) {
  for (size_t i = 0; i < ptr->len; i++) exports_cmhost_test_text_token_free(&ptr->ptr[i]);
  if (ptr->len > 0) strings_free(ptr->ptr);
  ptr->ptr = NULL;
  ptr->len = 0;
}

void exports_cmhost_test_text_stats_free(exports_cmhost_test_text_stats_t *ptr) {
  if (ptr->longest.is_some) strings_string_free(&ptr->longest.val);
}

// ---- Resource intrinsics ----

__attribute__((__import_module__("[export]cmhost:test/text@0.1.0"), __import_name__("[resource-new]buffer")))
extern int32_t __wasm_import_exports_cmhost_test_text_buffer_new(int32_t);

exports_cmhost_test_text_own_buffer_t exports_cmhost_test_text_buffer_new(exports_cmhost_test_text_buffer_t *rep) {
  return (exports_cmhost_test_text_own_buffer_t){__wasm_import_exports_cmhost_test_text_buffer_new((int32_t)rep)};
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#[dtor]buffer"))) void
__wasm_export_exports_cmhost_test_text_buffer_dtor(exports_cmhost_test_text_buffer_t *arg) {
  exports_cmhost_test_text_buffer_destructor(arg);
}

// ---- Exports ----

__attribute__((__export_name__("cmhost:test/text@0.1.0#convert"))) uint8_t *
__wasm_export_exports_cmhost_test_text_convert(uint8_t *arg, size_t arg0, int32_t arg1) {
  strings_string_t arg2 = (strings_string_t){(uint8_t *)(arg), (arg0)};
  strings_string_t ret;
  exports_cmhost_test_text_convert(&arg2, arg1, &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((size_t *)(ptr + 4)) = ret.len;
  *((uint8_t **)(ptr + 0)) = (uint8_t *)ret.ptr;
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_cmhost:test/text@0.1.0#convert"))) void
__wasm_export_exports_cmhost_test_text_convert_post_return(uint8_t *arg0) {
  if ((*((size_t *)(arg0 + 4))) > 0) {
    strings_free(*((uint8_t **)(arg0 + 0)));
  }
  strings_note_post_return();
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#join"))) uint8_t *
__wasm_export_exports_cmhost_test_text_join(uint8_t *arg, size_t arg0, uint8_t *arg1, size_t arg2) {
  strings_list_string_t arg3 = (strings_list_string_t){(strings_string_t *)(arg), (arg0)};
  strings_string_t arg4 = (strings_string_t){(uint8_t *)(arg1), (arg2)};
  strings_string_t ret;
  exports_cmhost_test_text_join(&arg3, &arg4, &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((size_t *)(ptr + 4)) = ret.len;
  *((uint8_t **)(ptr + 0)) = (uint8_t *)ret.ptr;
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_cmhost:test/text@0.1.0#join"))) void
__wasm_export_exports_cmhost_test_text_join_post_return(uint8_t *arg0) {
  if ((*((size_t *)(arg0 + 4))) > 0) {
    strings_free(*((uint8_t **)(arg0 + 0)));
  }
  strings_note_post_return();
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#split"))) uint8_t *
__wasm_export_exports_cmhost_test_text_split(uint8_t *arg, size_t arg0, int32_t arg1) {
  strings_string_t arg2 = (strings_string_t){(uint8_t *)(arg), (arg0)};
  strings_list_string_t ret;
  exports_cmhost_test_text_split(&arg2, (uint32_t)(arg1), &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((size_t *)(ptr + 4)) = ret.len;
  *((uint8_t **)(ptr + 0)) = (uint8_t *)ret.ptr;
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_cmhost:test/text@0.1.0#split"))) void
__wasm_export_exports_cmhost_test_text_split_post_return(uint8_t *arg0) {
  uint8_t *base = *((uint8_t **)(arg0 + 0));
  size_t len = *((size_t *)(arg0 + 4));
  for (size_t i = 0; i < len; i++) {
    uint8_t *base1 = base + i * 8;
    if ((*((size_t *)(base1 + 4))) > 0) {
      strings_free(*((uint8_t **)(base1 + 0)));
    }
  }
  if (len > 0) {
    strings_free(base);
  }
  strings_note_post_return();
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#sum"))) int64_t
__wasm_export_exports_cmhost_test_text_sum(uint8_t *arg, size_t arg0) {
  strings_list_u32_t arg1 = (strings_list_u32_t){(uint32_t *)(arg), (arg0)};
  uint64_t ret = exports_cmhost_test_text_sum(&arg1);
  return (int64_t)(ret);
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#measure"))) uint8_t *
__wasm_export_exports_cmhost_test_text_measure(uint8_t *arg, size_t arg0) {
  strings_string_t arg1 = (strings_string_t){(uint8_t *)(arg), (arg0)};
  exports_cmhost_test_text_stats_t ret;
  exports_cmhost_test_text_measure(&arg1, &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((int32_t *)(ptr + 0)) = (int32_t)((ret).bytes);
  *((int32_t *)(ptr + 4)) = (int32_t)((ret).words);
  if (((ret).longest).is_some) {
    const strings_string_t *payload2 = &((ret).longest).val;
    *((int8_t *)(ptr + 8)) = 1;
    *((size_t *)(ptr + 16)) = (*payload2).len;
    *((uint8_t **)(ptr + 12)) = (uint8_t *)(*payload2).ptr;
  } else {
    *((int8_t *)(ptr + 8)) = 0;
  }
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_cmhost:test/text@0.1.0#measure"))) void
__wasm_export_exports_cmhost_test_text_measure_post_return(uint8_t *arg0) {
  switch ((int32_t)(*((uint8_t *)(arg0 + 8)))) {
    case 0: {
      break;
    }
    case 1: {
      if ((*((size_t *)(arg0 + 16))) > 0) {
        strings_free(*((uint8_t **)(arg0 + 12)));
      }
      break;
    }
  }
  strings_note_post_return();
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#tokenize"))) uint8_t *
__wasm_export_exports_cmhost_test_text_tokenize(uint8_t *arg, size_t arg0) {
  strings_string_t arg1 = (strings_string_t){(uint8_t *)(arg), (arg0)};
  exports_cmhost_test_text_list_token_t ret;
  exports_cmhost_test_text_tokenize(&arg1, &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((size_t *)(ptr + 4)) = ret.len;
  *((uint8_t **)(ptr + 0)) = (uint8_t *)ret.ptr;
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_cmhost:test/text@0.1.0#tokenize"))) void
__wasm_export_exports_cmhost_test_text_tokenize_post_return(uint8_t *arg0) {
  uint8_t *base = *((uint8_t **)(arg0 + 0));
  size_t len = *((size_t *)(arg0 + 4));
  for (size_t i = 0; i < len; i++) {
    uint8_t *base1 = base + i * 16;
    switch ((int32_t)(*((uint8_t *)(base1 + 0)))) {
      case 0: {
        if ((*((size_t *)(base1 + 12))) > 0) {
          strings_free(*((uint8_t **)(base1 + 8)));
        }
        break;
      }
      case 1: {
        break;
      }
      case 2: {
        break;
      }
    }
  }
  if (len > 0) {
    strings_free(base);
  }
  strings_note_post_return();
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#parse"))) uint8_t *
__wasm_export_exports_cmhost_test_text_parse(uint8_t *arg, size_t arg0) {
  strings_string_t arg1 = (strings_string_t){(uint8_t *)(arg), (arg0)};
  uint32_t ok;
  exports_cmhost_test_text_parse_error_t err;
  bool is_ok = exports_cmhost_test_text_parse(&arg1, &ok, &err);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  if (!is_ok) {
    const exports_cmhost_test_text_parse_error_t *payload2 = &err;
    *((int8_t *)(ptr + 0)) = 1;
    switch ((int32_t)(*payload2).tag) {
      case 0: {
        *((int8_t *)(ptr + 4)) = 0;
        break;
      }
      case 1: {
        const uint32_t *payload4 = &(*payload2).val.bad_digit;
        *((int8_t *)(ptr + 4)) = 1;
        *((int32_t *)(ptr + 8)) = (int32_t)(*payload4);
        break;
      }
      case 2: {
        *((int8_t *)(ptr + 4)) = 2;
        break;
      }
    }
  } else {
    *((int8_t *)(ptr + 0)) = 0;
    *((int32_t *)(ptr + 4)) = (int32_t)(ok);
  }
  return ptr;
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#find"))) uint8_t *
__wasm_export_exports_cmhost_test_text_find(uint8_t *arg, size_t arg0, uint8_t *arg1, size_t arg2) {
  strings_list_string_t arg3 = (strings_list_string_t){(strings_string_t *)(arg), (arg0)};
  strings_string_t arg4 = (strings_string_t){(uint8_t *)(arg1), (arg2)};
  uint32_t ret;
  bool is_some = exports_cmhost_test_text_find(&arg3, &arg4, &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  if (is_some) {
    *((int8_t *)(ptr + 0)) = 1;
    *((int32_t *)(ptr + 4)) = (int32_t)(ret);
  } else {
    *((int8_t *)(ptr + 0)) = 0;
  }
  return ptr;
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#live-allocations"))) int32_t
__wasm_export_exports_cmhost_test_text_live_allocations(void) {
  uint32_t ret = exports_cmhost_test_text_live_allocations();
  return (int32_t)(ret);
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#post-returns"))) int32_t
__wasm_export_exports_cmhost_test_text_post_returns(void) {
  uint32_t ret = exports_cmhost_test_text_post_returns();
  return (int32_t)(ret);
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#fail"))) void
__wasm_export_exports_cmhost_test_text_fail(uint8_t *arg, size_t arg0) {
  strings_string_t arg1 = (strings_string_t){(uint8_t *)(arg), (arg0)};
  exports_cmhost_test_text_fail(&arg1);
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#[constructor]buffer"))) int32_t
__wasm_export_exports_cmhost_test_text_constructor_buffer(uint8_t *arg, size_t arg0) {
  strings_string_t arg1 = (strings_string_t){(uint8_t *)(arg), (arg0)};
  exports_cmhost_test_text_own_buffer_t ret = exports_cmhost_test_text_constructor_buffer(&arg1);
  return (ret).__handle;
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#[method]buffer.append"))) void
__wasm_export_exports_cmhost_test_text_method_buffer_append(int32_t arg, uint8_t *arg0, size_t arg1) {
  strings_string_t arg2 = (strings_string_t){(uint8_t *)(arg0), (arg1)};
  exports_cmhost_test_text_method_buffer_append((exports_cmhost_test_text_buffer_t *)arg, &arg2);
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#[method]buffer.contents"))) uint8_t *
__wasm_export_exports_cmhost_test_text_method_buffer_contents(int32_t arg) {
  strings_string_t ret;
  exports_cmhost_test_text_method_buffer_contents((exports_cmhost_test_text_buffer_t *)arg, &ret);
  uint8_t *ptr = (uint8_t *)&RET_AREA;
  *((size_t *)(ptr + 4)) = ret.len;
  *((uint8_t **)(ptr + 0)) = (uint8_t *)ret.ptr;
  return ptr;
}

__attribute__((__weak__, __export_name__("cabi_post_cmhost:test/text@0.1.0#[method]buffer.contents"))) void
__wasm_export_exports_cmhost_test_text_method_buffer_contents_post_return(uint8_t *arg0) {
  if ((*((size_t *)(arg0 + 4))) > 0) {
    strings_free(*((uint8_t **)(arg0 + 0)));
  }
  strings_note_post_return();
}

__attribute__((__export_name__("cmhost:test/text@0.1.0#[method]buffer.len"))) int32_t
__wasm_export_exports_cmhost_test_text_method_buffer_len(int32_t arg) {
  uint32_t ret = exports_cmhost_test_text_method_buffer_len((exports_cmhost_test_text_buffer_t *)arg);
  return (int32_t)(ret);
}
