// The guest of the world `strings`: functions over strings and lists, a
// record, variants, an option and a result, and a `buffer` resource. Every
// argument the host passes in is owned and freed here, and every block the
// guest allocates is counted, so `live-allocations` is 0 between calls when
// the host ran each post-return function and every destructor.
#include <stdlib.h>
#include <string.h>

#include "strings.h"

static uint32_t live_blocks;
static uint32_t post_returns;

void *strings_realloc(void *ptr, size_t size) {
  void *ret = realloc(ptr, size);
  if (ret && !ptr) live_blocks++;
  return ret;
}

void strings_free(void *ptr) {
  if (!ptr) return;
  live_blocks--;
  free(ptr);
}

void strings_note_post_return(void) { post_returns++; }

uint32_t exports_cmhost_test_text_live_allocations(void) { return live_blocks; }

uint32_t exports_cmhost_test_text_post_returns(void) { return post_returns; }

static uint8_t *alloc_bytes(size_t len) {
  if (len == 0) return NULL;
  uint8_t *p = strings_realloc(NULL, len);
  if (!p) abort();
  return p;
}

void exports_cmhost_test_text_convert(strings_string_t *s, exports_cmhost_test_text_case_kind_t to,
                                      strings_string_t *ret) {
  ret->len = s->len;
  ret->ptr = alloc_bytes(s->len);
  // ASCII letters only: other bytes, including UTF-8 sequences, are kept.
  for (size_t i = 0; i < s->len; i++) {
    uint8_t c = s->ptr[i];
    if (to == EXPORTS_CMHOST_TEST_TEXT_CASE_KIND_UPPER && c >= 'a' && c <= 'z') c -= 'a' - 'A';
    if (to == EXPORTS_CMHOST_TEST_TEXT_CASE_KIND_LOWER && c >= 'A' && c <= 'Z') c += 'a' - 'A';
    ret->ptr[i] = c;
  }
  strings_string_free(s);
}

void exports_cmhost_test_text_join(strings_list_string_t *parts, strings_string_t *sep, strings_string_t *ret) {
  size_t len = 0;
  for (size_t i = 0; i < parts->len; i++) len += parts->ptr[i].len + (i > 0 ? sep->len : 0);
  ret->len = len;
  ret->ptr = alloc_bytes(len);
  size_t at = 0;
  for (size_t i = 0; i < parts->len; i++) {
    if (i > 0 && sep->len > 0) {
      memcpy(ret->ptr + at, sep->ptr, sep->len);
      at += sep->len;
    }
    if (parts->ptr[i].len > 0) {
      memcpy(ret->ptr + at, parts->ptr[i].ptr, parts->ptr[i].len);
      at += parts->ptr[i].len;
    }
  }
  strings_list_string_free(parts);
  strings_string_free(sep);
}

static size_t encode_utf8(uint32_t c, uint8_t out[4]) {
  if (c < 0x80) {
    out[0] = (uint8_t)c;
    return 1;
  }
  if (c < 0x800) {
    out[0] = (uint8_t)(0xC0 | (c >> 6));
    out[1] = (uint8_t)(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = (uint8_t)(0xE0 | (c >> 12));
    out[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | (c >> 18));
  out[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (c & 0x3F));
  return 4;
}

// The host passes well-formed UTF-8 (the canonical ABI checks it).
static uint32_t decode_utf8(const uint8_t *p, size_t *len) {
  if (p[0] < 0x80) {
    *len = 1;
    return p[0];
  }
  if (p[0] < 0xE0) {
    *len = 2;
    return ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
  }
  if (p[0] < 0xF0) {
    *len = 3;
    return ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
  }
  *len = 4;
  return ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) | ((uint32_t)(p[2] & 0x3F) << 6) |
         (p[3] & 0x3F);
}

static bool matches_at(const strings_string_t *s, size_t at, const uint8_t *pat, size_t n) {
  return at + n <= s->len && memcmp(s->ptr + at, pat, n) == 0;
}

static void copy_range(strings_string_t *out, const uint8_t *from, size_t len) {
  out->len = len;
  out->ptr = alloc_bytes(len);
  if (len > 0) memcpy(out->ptr, from, len);
}

// Like Rust's str::split: n separators give n + 1 pieces, empty ones too.
void exports_cmhost_test_text_split(strings_string_t *s, uint32_t sep, strings_list_string_t *ret) {
  uint8_t pat[4];
  const size_t n = encode_utf8(sep, pat);
  size_t pieces = 1;
  for (size_t i = 0; i < s->len; i++) {
    if (matches_at(s, i, pat, n)) {
      pieces++;
      i += n - 1;
    }
  }
  ret->len = pieces;
  ret->ptr = (strings_string_t *)alloc_bytes(pieces * sizeof(strings_string_t));
  size_t start = 0, k = 0;
  for (size_t i = 0; i <= s->len; i++) {
    if (i == s->len || matches_at(s, i, pat, n)) {
      copy_range(&ret->ptr[k++], s->ptr + start, i - start);
      start = i + n;
      i += n - 1;
    }
  }
  strings_string_free(s);
}

uint64_t exports_cmhost_test_text_sum(strings_list_u32_t *values) {
  uint64_t sum = 0;
  for (size_t i = 0; i < values->len; i++) sum += values->ptr[i];
  strings_list_u32_free(values);
  return sum;
}

static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void exports_cmhost_test_text_measure(strings_string_t *s, exports_cmhost_test_text_stats_t *ret) {
  ret->bytes = (uint32_t)s->len;
  ret->words = 0;
  size_t best_at = 0, best_len = 0;
  for (size_t i = 0; i < s->len;) {
    if (is_space(s->ptr[i])) {
      i++;
      continue;
    }
    size_t start = i;
    while (i < s->len && !is_space(s->ptr[i])) i++;
    ret->words++;
    if (i - start > best_len) {
      best_at = start;
      best_len = i - start;
    }
  }
  ret->longest.is_some = ret->words > 0;
  if (ret->longest.is_some) copy_range(&ret->longest.val, s->ptr + best_at, best_len);
  strings_string_free(s);
}

static bool is_letter(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

// Words are runs of ASCII letters, numbers runs of digits; any other
// character but white space is a punct token of its own.
void exports_cmhost_test_text_tokenize(strings_string_t *s, exports_cmhost_test_text_list_token_t *ret) {
  // At most one token per byte; the list is shrunk to fit afterwards.
  exports_cmhost_test_text_token_t *tokens =
      (exports_cmhost_test_text_token_t *)alloc_bytes(s->len * sizeof(exports_cmhost_test_text_token_t));
  size_t count = 0;
  for (size_t i = 0; i < s->len;) {
    const uint8_t c = s->ptr[i];
    exports_cmhost_test_text_token_t *t = &tokens[count];
    if (is_space(c)) {
      i++;
      continue;
    }
    if (is_letter(c)) {
      size_t start = i;
      while (i < s->len && is_letter(s->ptr[i])) i++;
      t->tag = EXPORTS_CMHOST_TEST_TEXT_TOKEN_WORD;
      copy_range(&t->val.word, s->ptr + start, i - start);
    } else if (is_digit(c)) {
      uint64_t v = 0;
      while (i < s->len && is_digit(s->ptr[i])) v = v * 10 + (uint64_t)(s->ptr[i++] - '0');
      t->tag = EXPORTS_CMHOST_TEST_TEXT_TOKEN_NUMBER;
      t->val.number = v;
    } else {
      size_t n;
      t->tag = EXPORTS_CMHOST_TEST_TEXT_TOKEN_PUNCT;
      t->val.punct = decode_utf8(s->ptr + i, &n);
      i += n;
    }
    count++;
  }
  if (count == 0) {
    strings_free(tokens);
    tokens = NULL;
  } else if (count < s->len) {
    tokens = (exports_cmhost_test_text_token_t *)strings_realloc(tokens, count * sizeof(*tokens));
  }
  ret->ptr = tokens;
  ret->len = count;
  strings_string_free(s);
}

bool exports_cmhost_test_text_parse(strings_string_t *s, uint32_t *ret, exports_cmhost_test_text_parse_error_t *err) {
  bool ok = true;
  uint64_t v = 0;
  if (s->len == 0) {
    err->tag = EXPORTS_CMHOST_TEST_TEXT_PARSE_ERROR_EMPTY;
    ok = false;
  }
  for (size_t i = 0; ok && i < s->len; i++) {
    if (!is_digit(s->ptr[i])) {
      err->tag = EXPORTS_CMHOST_TEST_TEXT_PARSE_ERROR_BAD_DIGIT;
      err->val.bad_digit = (uint32_t)i;
      ok = false;
    } else if ((v = v * 10 + (uint64_t)(s->ptr[i] - '0')) > UINT32_MAX) {
      err->tag = EXPORTS_CMHOST_TEST_TEXT_PARSE_ERROR_OVERFLOW;
      ok = false;
    }
  }
  if (ok) *ret = (uint32_t)v;
  strings_string_free(s);
  return ok;
}

bool exports_cmhost_test_text_find(strings_list_string_t *haystack, strings_string_t *needle, uint32_t *ret) {
  bool found = false;
  for (size_t i = 0; !found && i < haystack->len; i++) {
    const strings_string_t *h = &haystack->ptr[i];
    if (h->len == needle->len && (h->len == 0 || memcmp(h->ptr, needle->ptr, h->len) == 0)) {
      *ret = (uint32_t)i;
      found = true;
    }
  }
  strings_list_string_free(haystack);
  strings_string_free(needle);
  return found;
}

void exports_cmhost_test_text_fail(strings_string_t *msg) {
  strings_string_free(msg);
  abort();  // `unreachable` in wasi-libc
}

// ---- buffer ----

struct exports_cmhost_test_text_buffer_t {
  strings_string_t text;
};

exports_cmhost_test_text_own_buffer_t exports_cmhost_test_text_constructor_buffer(strings_string_t *init) {
  exports_cmhost_test_text_buffer_t *b = (exports_cmhost_test_text_buffer_t *)alloc_bytes(sizeof(*b));
  // An empty string's pointer is only aligned, not allocated: keep none.
  b->text = init->len > 0 ? *init : (strings_string_t){NULL, 0};
  return exports_cmhost_test_text_buffer_new(b);
}

void exports_cmhost_test_text_method_buffer_append(exports_cmhost_test_text_borrow_buffer_t self,
                                                   strings_string_t *s) {
  if (s->len > 0) {
    uint8_t *p = (uint8_t *)strings_realloc(self->text.ptr, self->text.len + s->len);
    if (!p) abort();
    memcpy(p + self->text.len, s->ptr, s->len);
    self->text.ptr = p;
    self->text.len += s->len;
  }
  strings_string_free(s);
}

void exports_cmhost_test_text_method_buffer_contents(exports_cmhost_test_text_borrow_buffer_t self,
                                                     strings_string_t *ret) {
  copy_range(ret, self->text.ptr, self->text.len);
}

uint32_t exports_cmhost_test_text_method_buffer_len(exports_cmhost_test_text_borrow_buffer_t self) {
  return (uint32_t)self->text.len;
}

void exports_cmhost_test_text_buffer_destructor(exports_cmhost_test_text_buffer_t *rep) {
  strings_string_free(&rep->text);
  strings_free(rep);
}
