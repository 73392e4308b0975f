// Bindings of the world `strings` (strings.wit), written by hand in the
// shape wit-bindgen's C generator emits for it: one header of types and the
// functions the guest implements, one strings.c of canonical ABI glue.
// guest.c implements the functions.
#ifndef __BINDINGS_STRINGS_H
#define __BINDINGS_STRINGS_H
#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct strings_string_t {
  uint8_t *ptr;
  size_t len;
} strings_string_t;

typedef uint8_t exports_cmhost_test_text_case_kind_t;

#define EXPORTS_CMHOST_TEST_TEXT_CASE_KIND_LOWER 0
#define EXPORTS_CMHOST_TEST_TEXT_CASE_KIND_UPPER 1

typedef struct strings_option_string_t {
  bool is_some;
  strings_string_t val;
} strings_option_string_t;

typedef struct exports_cmhost_test_text_stats_t {
  uint32_t bytes;
  uint32_t words;
  strings_option_string_t longest;
} exports_cmhost_test_text_stats_t;

// Lists are passed by pointer into guest memory, so the C layout of each
// element must be its canonical ABI layout: here tag at 0, payload at 8,
// 16 bytes, aligned to 8.
typedef struct exports_cmhost_test_text_token_t {
  uint8_t tag;
  union {
    strings_string_t word;
    uint64_t number;
    uint32_t punct;
  } val;
} exports_cmhost_test_text_token_t;

#define EXPORTS_CMHOST_TEST_TEXT_TOKEN_WORD 0
#define EXPORTS_CMHOST_TEST_TEXT_TOKEN_NUMBER 1
#define EXPORTS_CMHOST_TEST_TEXT_TOKEN_PUNCT 2

typedef struct exports_cmhost_test_text_parse_error_t {
  uint8_t tag;
  union {
    uint32_t bad_digit;
  } val;
} exports_cmhost_test_text_parse_error_t;

#define EXPORTS_CMHOST_TEST_TEXT_PARSE_ERROR_EMPTY 0
#define EXPORTS_CMHOST_TEST_TEXT_PARSE_ERROR_BAD_DIGIT 1
#define EXPORTS_CMHOST_TEST_TEXT_PARSE_ERROR_OVERFLOW 2

typedef struct exports_cmhost_test_text_own_buffer_t {
  int32_t __handle;
} exports_cmhost_test_text_own_buffer_t;

// The representation of a buffer is the guest's own (guest.c); a borrowed
// buffer reaches an export as that representation.
typedef struct exports_cmhost_test_text_buffer_t exports_cmhost_test_text_buffer_t;
typedef exports_cmhost_test_text_buffer_t *exports_cmhost_test_text_borrow_buffer_t;

typedef struct strings_list_string_t {
  strings_string_t *ptr;
  size_t len;
} strings_list_string_t;

typedef struct strings_list_u32_t {
  uint32_t *ptr;
  size_t len;
} strings_list_u32_t;

typedef struct exports_cmhost_test_text_list_token_t {
  exports_cmhost_test_text_token_t *ptr;
  size_t len;
} exports_cmhost_test_text_list_token_t;

// Implemented by the guest. Arguments passed by pointer belong to the
// callee, which frees them; results written through `ret` belong to the
// bindings, which free them in the post-return functions.
void exports_cmhost_test_text_convert(strings_string_t *s, exports_cmhost_test_text_case_kind_t to,
                                      strings_string_t *ret);
void exports_cmhost_test_text_join(strings_list_string_t *parts, strings_string_t *sep, strings_string_t *ret);
void exports_cmhost_test_text_split(strings_string_t *s, uint32_t sep, strings_list_string_t *ret);
uint64_t exports_cmhost_test_text_sum(strings_list_u32_t *values);
void exports_cmhost_test_text_measure(strings_string_t *s, exports_cmhost_test_text_stats_t *ret);
void exports_cmhost_test_text_tokenize(strings_string_t *s, exports_cmhost_test_text_list_token_t *ret);
bool exports_cmhost_test_text_parse(strings_string_t *s, uint32_t *ret, exports_cmhost_test_text_parse_error_t *err);
bool exports_cmhost_test_text_find(strings_list_string_t *haystack, strings_string_t *needle, uint32_t *ret);
uint32_t exports_cmhost_test_text_live_allocations(void);
uint32_t exports_cmhost_test_text_post_returns(void);
void exports_cmhost_test_text_fail(strings_string_t *msg);

exports_cmhost_test_text_own_buffer_t exports_cmhost_test_text_constructor_buffer(strings_string_t *init);
void exports_cmhost_test_text_method_buffer_append(exports_cmhost_test_text_borrow_buffer_t self,
                                                   strings_string_t *s);
void exports_cmhost_test_text_method_buffer_contents(exports_cmhost_test_text_borrow_buffer_t self,
                                                     strings_string_t *ret);
uint32_t exports_cmhost_test_text_method_buffer_len(exports_cmhost_test_text_borrow_buffer_t self);
void exports_cmhost_test_text_buffer_destructor(exports_cmhost_test_text_buffer_t *rep);

// Provided by the bindings: a new own handle for a representation.
exports_cmhost_test_text_own_buffer_t exports_cmhost_test_text_buffer_new(exports_cmhost_test_text_buffer_t *rep);

// Helpers of the bindings, as wit-bindgen emits them: free what a value owns
// (empty strings and lists own nothing: their pointer is only aligned).
void strings_string_free(strings_string_t *ret);
void strings_string_dup(strings_string_t *ret, const char *s);
void strings_list_string_free(strings_list_string_t *ptr);
void strings_list_u32_free(strings_list_u32_t *ptr);
void exports_cmhost_test_text_token_free(exports_cmhost_test_text_token_t *ptr);
void exports_cmhost_test_text_list_token_free(exports_cmhost_test_text_list_token_t *ptr);
void exports_cmhost_test_text_stats_free(exports_cmhost_test_text_stats_t *ptr);

// The guest's allocator (guest.c). wit-bindgen's glue calls realloc and
// free directly; these count live blocks too, so a test can see that
// post-return functions ran.
void *strings_realloc(void *ptr, size_t size);
void strings_free(void *ptr);
void strings_note_post_return(void);

#ifdef __cplusplus
}
#endif
#endif
