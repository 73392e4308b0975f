// The batch of the boundary benchmark, "create N rows" of a table, built
// as typed operations or as the byte protocol of PROTOCOL.md. It is the
// batch bench/common/dom_batch.cpp builds on the host (same strings, ids,
// words and order), so the host can compare the two Val for Val.
//
// Each batch is one heap block: building allocates once and freeing is one
// free, whatever the size. Texts that never change (cached strings, the
// template, "danger") point into the module's data; only row numbers and
// labels are written per row.
#include <stdlib.h>
#include <string.h>

#include "boundary.h"

#define TEXT(s) \
  { (const uint8_t *)(s), sizeof(s) - 1 }

// ---- What the batch says ----

enum { STR_TR, STR_TD, STR_A, STR_SPAN, STR_CLASS, STR_CLICK, STR_COUNT };
static const boundary_string_t STRINGS[STR_COUNT] = {TEXT("tr"),   TEXT("td"),    TEXT("a"),
                                                     TEXT("span"), TEXT("class"), TEXT("click")};

static const boundary_string_t ADJECTIVES[] = {
    TEXT("pretty"),    TEXT("large"),       TEXT("big"),      TEXT("small"),     TEXT("tall"),
    TEXT("short"),     TEXT("long"),        TEXT("handsome"), TEXT("plain"),     TEXT("quaint"),
    TEXT("clean"),     TEXT("elegant"),     TEXT("easy"),     TEXT("angry"),     TEXT("crazy"),
    TEXT("helpful"),   TEXT("mushy"),       TEXT("odd"),      TEXT("unsightly"), TEXT("adorable"),
    TEXT("important"), TEXT("inexpensive"), TEXT("cheap"),    TEXT("expensive"), TEXT("fancy")};
static const boundary_string_t COLOURS[] = {TEXT("red"),   TEXT("yellow"), TEXT("blue"),   TEXT("green"),
                                            TEXT("pink"),  TEXT("brown"),  TEXT("purple"), TEXT("white"),
                                            TEXT("black"), TEXT("orange"), TEXT("grey")};
static const boundary_string_t NOUNS[] = {
    TEXT("table"),  TEXT("chair"),    TEXT("house"),  TEXT("bbq"),   TEXT("desk"),  TEXT("car"),     TEXT("pony"),
    TEXT("cookie"), TEXT("sandwich"), TEXT("burger"), TEXT("pizza"), TEXT("mouse"), TEXT("keyboard")};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const boundary_string_t DANGER = TEXT("danger");
static const uint8_t PATH_FIRST_CELL[2] = {0, 0};
static const uint8_t PATH_ANCHOR[2] = {1, 0};

// The row template: tr[td[text ""], td[a[dynamic]], td[span(class)[text "x"]]].
// The nodes are listed in pre-order, which is what lets the byte form leave
// indices out (PROTOCOL.md): a decoder numbering nodes as they come gets
// these indices back.
static const uint32_t TR_CHILDREN[] = {1, 3, 6};
static const uint32_t NUMBER_CELL_CHILDREN[] = {2};
static const uint32_t LABEL_CELL_CHILDREN[] = {4};
static const uint32_t ANCHOR_CHILDREN[] = {5};
static const uint32_t REMOVE_CELL_CHILDREN[] = {7};
static const uint32_t SPAN_CHILDREN[] = {8};
static const uint32_t TEMPLATE_ROOTS[] = {0};
static const boundary_template_attr_t SPAN_ATTRS[] = {{STR_CLASS, {false, 0}, TEXT("glyphicon glyphicon-remove")}};

#define ELEMENT(tag_, attrs_, n_attrs, children_)           \
  {                                                         \
    .tag = BOUNDARY_TEMPLATE_NODE_ELEMENT, .val.element = { \
      (tag_),                                               \
      {false, 0},                                           \
      {(attrs_), (n_attrs)},                                \
      {(children_), COUNT(children_)}                       \
    }                                                       \
  }
static const boundary_template_node_t TEMPLATE_NODES[] = {
    ELEMENT(STR_TR, NULL, 0, TR_CHILDREN),
    ELEMENT(STR_TD, NULL, 0, NUMBER_CELL_CHILDREN),
    {.tag = BOUNDARY_TEMPLATE_NODE_TEXT, .val.text = TEXT("")},
    ELEMENT(STR_TD, NULL, 0, LABEL_CELL_CHILDREN),
    ELEMENT(STR_A, NULL, 0, ANCHOR_CHILDREN),
    {.tag = BOUNDARY_TEMPLATE_NODE_DYNAMIC},
    ELEMENT(STR_TD, NULL, 0, REMOVE_CELL_CHILDREN),
    ELEMENT(STR_SPAN, SPAN_ATTRS, COUNT(SPAN_ATTRS), SPAN_CHILDREN),
    {.tag = BOUNDARY_TEMPLATE_NODE_TEXT, .val.text = TEXT("x")},
};
#define TEMPLATE_ID 0

// The prelude: the cached strings, then the template.
#define PRELUDE_OPS (STR_COUNT + 1)
#define OPS_PER_ROW 8

// The row's label, e.g. "pretty red table", picked by the same arithmetic as
// the host's batch (32-bit, so large row numbers wrap the same way).
static const boundary_string_t *adjective(uint32_t row) { return &ADJECTIVES[(row * 7) % COUNT(ADJECTIVES)]; }
static const boundary_string_t *colour(uint32_t row) { return &COLOURS[(row * 3) % COUNT(COLOURS)]; }
static const boundary_string_t *noun(uint32_t row) { return &NOUNS[(row * 5) % COUNT(NOUNS)]; }

static size_t label_len(uint32_t row) { return adjective(row)->len + 1 + colour(row)->len + 1 + noun(row)->len; }

static uint8_t *write_label(uint8_t *at, uint32_t row) {
  const boundary_string_t *words[3] = {adjective(row), colour(row), noun(row)};
  for (int i = 0; i < 3; i++) {
    if (i > 0) *at++ = ' ';
    memcpy(at, words[i]->ptr, words[i]->len);
    at += words[i]->len;
  }
  return at;
}

static size_t decimal_len(uint32_t v) {
  size_t n = 1;
  while (v >= 10) v /= 10, n++;
  return n;
}

static uint8_t *write_decimal(uint8_t *at, uint32_t v) {
  uint8_t *end = at + decimal_len(v);
  for (uint8_t *p = end; p > at; v /= 10) *--p = (uint8_t)('0' + v % 10);
  return end;
}

// Bytes of the texts written per row: the row number (1-based) and the label.
static size_t row_text_len(uint32_t row) { return decimal_len(row + 1) + label_len(row); }

// The block size, or abort (a trap for the host) when it does not fit the
// 32-bit address space.
static size_t block_size(uint64_t size) {
  if (size > (uint64_t)SIZE_MAX / 2) abort();
  return (size_t)size;
}

static void *allocate(size_t size) {
  void *block = malloc(size);
  if (!block) abort();
  return block;
}

void boundary_batch_free(const void *batch) { free((void *)batch); }

// Without the stream exports (streams.c, which defines the real one), there
// is nothing to forget.
__attribute__((weak)) void boundary_streams_forget(void) {}

// ---- Typed ----

// One block: the operations, then the texts written per row.
void boundary_build_typed(uint32_t rows, boundary_list_operation_t *ret) {
  const uint64_t n = PRELUDE_OPS + (uint64_t)OPS_PER_ROW * rows;
  uint64_t texts = 0;
  for (uint32_t row = 0; row < rows; row++) texts += row_text_len(row);
  boundary_operation_t *ops = allocate(block_size(n * sizeof(boundary_operation_t) + texts));
  uint8_t *text = (uint8_t *)(ops + n);
  boundary_operation_t *op = ops;

  for (uint16_t i = 0; i < STR_COUNT; i++)
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_CACHE_STRING, .val.cache_string = {i, STRINGS[i]}};
  *op++ = (boundary_operation_t){
      .tag = BOUNDARY_OP_REGISTER_TEMPLATE,
      .val.register_template = {
          TEMPLATE_ID, {TEMPLATE_NODES, COUNT(TEMPLATE_NODES)}, {TEMPLATE_ROOTS, COUNT(TEMPLATE_ROOTS)}}};

  for (uint32_t row = 0; row < rows; row++) {
    const uint32_t id = 1 + 3 * row;
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_LOAD_TEMPLATE, .val.load_template = {id, TEMPLATE_ID, 0}};
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_ASSIGN_ID, .val.assign_id = {{PATH_FIRST_CELL, 2}, id + 1}};
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_ASSIGN_ID, .val.assign_id = {{PATH_ANCHOR, 2}, id + 2}};
    uint8_t *end = write_decimal(text, row + 1);
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_SET_TEXT, .val.set_text = {id + 1, {text, (size_t)(end - text)}}};
    text = end;
    end = write_label(text, row);
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_SET_TEXT, .val.set_text = {id + 2, {text, (size_t)(end - text)}}};
    text = end;
    boundary_attr_value_t value = {.tag = BOUNDARY_ATTR_VALUE_NONE};
    if (row % 10 == 0) value = (boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_TEXT, .val.text = DANGER};
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_SET_ATTRIBUTE,
                                   .val.set_attribute = {id, STR_CLASS, {false, 0}, value}};
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_NEW_EVENT_LISTENER,
                                   .val.new_event_listener = {id + 2, STR_CLICK, true}};
    *op++ = (boundary_operation_t){.tag = BOUNDARY_OP_APPEND_CHILDREN, .val.append_children = {0, 1}};
  }
  ret->ptr = ops;
  ret->len = (size_t)n;
}

// ---- Bytes (PROTOCOL.md) ----

// Operations are appended at `ops`, texts at `text`; both segments were
// sized before writing (the string segment comes first, so its size must be
// known up front), so nothing is checked per byte.
typedef struct writer_t {
  uint8_t *ops;
  uint8_t *text;
} writer_t;

#define ABSENT_REF 0xffff
#define LONG_TEXT 0xffff

static void put_u8(writer_t *w, uint8_t v) { *w->ops++ = v; }
// Little-endian, unaligned: wasm is little-endian, memcpy becomes one store.
static void put_u16(writer_t *w, uint16_t v) {
  memcpy(w->ops, &v, 2);
  w->ops += 2;
}
static void put_u32(writer_t *w, uint32_t v) {
  memcpy(w->ops, &v, 4);
  w->ops += 4;
}
static void put_ns(writer_t *w, boundary_option_str_ref_t ns) { put_u16(w, ns.is_some ? ns.val : ABSENT_REF); }

// What the byte protocol cannot carry (PROTOCOL.md): `some(0xffff)`, paths
// over 255 bytes, more than 0xffff attributes, children or roots. The
// measuring walks check, so an encoder never writes a wrong frame.
static void encodable(bool ok) {
  if (!ok) abort();
}
static void check_ns(boundary_option_str_ref_t ns) { encodable(!ns.is_some || ns.val != ABSENT_REF); }

// The operand holds the length; the bytes go to the string segment.
static size_t text_operand_len(size_t len) { return len < LONG_TEXT ? 2 : 6; }
static void put_text_len(writer_t *w, size_t len) {
  if (len < LONG_TEXT) {
    put_u16(w, (uint16_t)len);
  } else {
    put_u16(w, LONG_TEXT);
    put_u32(w, (uint32_t)len);
  }
}
static void put_text(writer_t *w, boundary_string_t s) {
  put_text_len(w, s.len);
  memcpy(w->text, s.ptr, s.len);
  w->text += s.len;
}

// A template node of `nodes` and its subtree, in pre-order.
static void put_node(writer_t *w, const boundary_template_node_t *nodes, uint32_t index) {
  const boundary_template_node_t *node = &nodes[index];
  put_u8(w, node->tag);
  if (node->tag == BOUNDARY_TEMPLATE_NODE_TEXT) put_text(w, node->val.text);
  if (node->tag != BOUNDARY_TEMPLATE_NODE_ELEMENT) return;
  const boundary_template_element_t *e = &node->val.element;
  put_u16(w, e->tag);
  put_ns(w, e->ns);
  put_u16(w, (uint16_t)e->attrs.len);
  for (size_t i = 0; i < e->attrs.len; i++) {
    put_u16(w, e->attrs.ptr[i].name);
    put_ns(w, e->attrs.ptr[i].ns);
    put_text(w, e->attrs.ptr[i].value);
  }
  put_u16(w, (uint16_t)e->children.len);
  for (size_t i = 0; i < e->children.len; i++) put_node(w, nodes, e->children.ptr[i]);
}

// Bytes of the template in both segments, counted by the same walk.
static void measure_node(const boundary_template_node_t *nodes, uint32_t index, size_t *ops, size_t *text) {
  const boundary_template_node_t *node = &nodes[index];
  *ops += 1;
  if (node->tag == BOUNDARY_TEMPLATE_NODE_TEXT) {
    *ops += text_operand_len(node->val.text.len);
    *text += node->val.text.len;
  }
  if (node->tag != BOUNDARY_TEMPLATE_NODE_ELEMENT) return;
  const boundary_template_element_t *e = &node->val.element;
  check_ns(e->ns);
  encodable(e->attrs.len <= 0xffff && e->children.len <= 0xffff);
  *ops += 2 + 2 + 2 + 2;
  for (size_t i = 0; i < e->attrs.len; i++) {
    check_ns(e->attrs.ptr[i].ns);
    *ops += 2 + 2 + text_operand_len(e->attrs.ptr[i].value.len);
    *text += e->attrs.ptr[i].value.len;
  }
  for (size_t i = 0; i < e->children.len; i++) measure_node(nodes, e->children.ptr[i], ops, text);
}

// Operand bytes of a row's operations besides its two texts' lengths:
// load-template 9, assign-id 8 + 8, set-text 5 + 5, set-attribute 10,
// new-event-listener 8, append-children 9.
#define ROW_FIXED_OPS_BYTES (9 + 8 + 8 + 5 + 5 + 10 + 8 + 9)

// One frame: u32 frame length, u32 string segment length, strings, ops.
void boundary_build_bytes(uint32_t rows, boundary_list_u8_t *ret) {
  size_t prelude_ops = 0, prelude_text = 0;
  for (uint16_t i = 0; i < STR_COUNT; i++) {
    prelude_ops += 1 + 2 + text_operand_len(STRINGS[i].len);
    prelude_text += STRINGS[i].len;
  }
  prelude_ops += 1 + 2 + 2;
  for (size_t i = 0; i < COUNT(TEMPLATE_ROOTS); i++)
    measure_node(TEMPLATE_NODES, TEMPLATE_ROOTS[i], &prelude_ops, &prelude_text);

  uint64_t ops_len = prelude_ops, text_len = prelude_text;
  for (uint32_t row = 0; row < rows; row++) {
    const size_t number = decimal_len(row + 1), label = label_len(row);
    ops_len += ROW_FIXED_OPS_BYTES + text_operand_len(number) + text_operand_len(label);
    text_len += number + label;
    if (row % 10 == 0) {
      ops_len += text_operand_len(DANGER.len);
      text_len += DANGER.len;
    }
  }
  const uint64_t frame_len = 8 + text_len + ops_len;
  if (frame_len > UINT32_MAX) abort();
  uint8_t *frame = allocate(block_size(frame_len));
  writer_t w = {frame, frame + 8};
  put_u32(&w, (uint32_t)frame_len);
  put_u32(&w, (uint32_t)text_len);
  w.ops = frame + 8 + text_len;

  for (uint16_t i = 0; i < STR_COUNT; i++) {
    put_u8(&w, BOUNDARY_OP_CACHE_STRING + 1);
    put_u16(&w, i);
    put_text(&w, STRINGS[i]);
  }
  put_u8(&w, BOUNDARY_OP_REGISTER_TEMPLATE + 1);
  put_u16(&w, TEMPLATE_ID);
  put_u16(&w, (uint16_t)COUNT(TEMPLATE_ROOTS));
  for (size_t i = 0; i < COUNT(TEMPLATE_ROOTS); i++) put_node(&w, TEMPLATE_NODES, TEMPLATE_ROOTS[i]);

  for (uint32_t row = 0; row < rows; row++) {
    const uint32_t id = 1 + 3 * row;
    put_u8(&w, BOUNDARY_OP_LOAD_TEMPLATE + 1);
    put_u32(&w, id);
    put_u16(&w, TEMPLATE_ID);
    put_u16(&w, 0);

    put_u8(&w, BOUNDARY_OP_ASSIGN_ID + 1);
    put_u8(&w, 2);
    put_u8(&w, PATH_FIRST_CELL[0]);
    put_u8(&w, PATH_FIRST_CELL[1]);
    put_u32(&w, id + 1);

    put_u8(&w, BOUNDARY_OP_ASSIGN_ID + 1);
    put_u8(&w, 2);
    put_u8(&w, PATH_ANCHOR[0]);
    put_u8(&w, PATH_ANCHOR[1]);
    put_u32(&w, id + 2);

    put_u8(&w, BOUNDARY_OP_SET_TEXT + 1);
    put_u32(&w, id + 1);
    uint8_t *end = write_decimal(w.text, row + 1);
    put_text_len(&w, (size_t)(end - w.text));
    w.text = end;

    put_u8(&w, BOUNDARY_OP_SET_TEXT + 1);
    put_u32(&w, id + 2);
    end = write_label(w.text, row);
    put_text_len(&w, (size_t)(end - w.text));
    w.text = end;

    put_u8(&w, BOUNDARY_OP_SET_ATTRIBUTE + 1);
    put_u32(&w, id);
    put_u16(&w, STR_CLASS);
    put_u16(&w, ABSENT_REF);
    if (row % 10 == 0) {
      put_u8(&w, BOUNDARY_ATTR_VALUE_TEXT);
      put_text(&w, DANGER);
    } else {
      put_u8(&w, BOUNDARY_ATTR_VALUE_NONE);
    }

    put_u8(&w, BOUNDARY_OP_NEW_EVENT_LISTENER + 1);
    put_u32(&w, id + 2);
    put_u16(&w, STR_CLICK);
    put_u8(&w, 1);

    put_u8(&w, BOUNDARY_OP_APPEND_CHILDREN + 1);
    put_u32(&w, 0);
    put_u32(&w, 1);
  }
  // The sizes above and the writes must agree; a mismatch is a bug that
  // would corrupt the frame, so it traps rather than return it.
  if (w.text != frame + 8 + text_len || w.ops != frame + frame_len) abort();
  ret->ptr = frame;
  ret->len = (size_t)frame_len;
}

// ---- Any typed batch as bytes ----

// The bytes of one operation in both segments, and the operation written;
// the rows batch above has its own writer, made for speed, and this one
// for any batch.
static void path_bytes(boundary_list_u8_t path, size_t *ops) {
  encodable(path.len <= 0xff);
  *ops += 1 + path.len;
}
static void put_path(writer_t *w, boundary_list_u8_t path) {
  put_u8(w, (uint8_t)path.len);
  memcpy(w->ops, path.ptr, path.len);
  w->ops += path.len;
}
static void text_bytes(boundary_string_t s, size_t *ops, size_t *text) {
  *ops += text_operand_len(s.len);
  *text += s.len;
}

static void measure_op(const boundary_operation_t *op, size_t *ops, size_t *text) {
  *ops += 1;
  switch (op->tag) {
    case BOUNDARY_OP_CACHE_STRING: *ops += 2, text_bytes(op->val.cache_string.str, ops, text); break;
    case BOUNDARY_OP_REGISTER_TEMPLATE: {
      const boundary_register_template_t *t = &op->val.register_template;
      encodable(t->roots.len <= 0xffff);
      *ops += 2 + 2;
      for (size_t i = 0; i < t->roots.len; i++) measure_node(t->nodes.ptr, t->roots.ptr[i], ops, text);
      break;
    }
    case BOUNDARY_OP_ASSIGN_ID: path_bytes(op->val.assign_id.path, ops), *ops += 4; break;
    case BOUNDARY_OP_REPLACE_PLACEHOLDER: path_bytes(op->val.replace_placeholder.path, ops), *ops += 4; break;
    case BOUNDARY_OP_CREATE_PLACEHOLDER:
    case BOUNDARY_OP_REMOVE:
    case BOUNDARY_OP_PUSH_ROOT: *ops += 4; break;
    case BOUNDARY_OP_CREATE_TEXT_NODE: *ops += 4, text_bytes(op->val.create_text_node.text, ops, text); break;
    case BOUNDARY_OP_SET_TEXT: *ops += 4, text_bytes(op->val.set_text.text, ops, text); break;
    case BOUNDARY_OP_LOAD_TEMPLATE: *ops += 8; break;
    case BOUNDARY_OP_SET_ATTRIBUTE: {
      const boundary_attr_value_t *v = &op->val.set_attribute.value;
      check_ns(op->val.set_attribute.ns);
      *ops += 4 + 2 + 2 + 1;
      if (v->tag == BOUNDARY_ATTR_VALUE_TEXT) text_bytes(v->val.text, ops, text);
      if (v->tag == BOUNDARY_ATTR_VALUE_FLOAT || v->tag == BOUNDARY_ATTR_VALUE_INT) *ops += 8;
      if (v->tag == BOUNDARY_ATTR_VALUE_BOOLEAN) *ops += 1;
      break;
    }
    case BOUNDARY_OP_NEW_EVENT_LISTENER:
    case BOUNDARY_OP_REMOVE_EVENT_LISTENER: *ops += 4 + 2 + 1; break;
    default: *ops += 8; break;  // append-children, replace-with, insert-after, insert-before
  }
}

static void put_op(writer_t *w, const boundary_operation_t *op) {
  put_u8(w, (uint8_t)(op->tag + 1));
  switch (op->tag) {
    case BOUNDARY_OP_CACHE_STRING:
      put_u16(w, op->val.cache_string.id);
      put_text(w, op->val.cache_string.str);
      break;
    case BOUNDARY_OP_REGISTER_TEMPLATE: {
      const boundary_register_template_t *t = &op->val.register_template;
      put_u16(w, t->id);
      put_u16(w, (uint16_t)t->roots.len);
      for (size_t i = 0; i < t->roots.len; i++) put_node(w, t->nodes.ptr, t->roots.ptr[i]);
      break;
    }
    case BOUNDARY_OP_ASSIGN_ID:
      put_path(w, op->val.assign_id.path);
      put_u32(w, op->val.assign_id.id);
      break;
    case BOUNDARY_OP_REPLACE_PLACEHOLDER:
      put_path(w, op->val.replace_placeholder.path);
      put_u32(w, op->val.replace_placeholder.m);
      break;
    case BOUNDARY_OP_CREATE_PLACEHOLDER: put_u32(w, op->val.create_placeholder); break;
    case BOUNDARY_OP_REMOVE: put_u32(w, op->val.remove); break;
    case BOUNDARY_OP_PUSH_ROOT: put_u32(w, op->val.push_root); break;
    case BOUNDARY_OP_CREATE_TEXT_NODE:
      put_u32(w, op->val.create_text_node.id);
      put_text(w, op->val.create_text_node.text);
      break;
    case BOUNDARY_OP_SET_TEXT:
      put_u32(w, op->val.set_text.id);
      put_text(w, op->val.set_text.text);
      break;
    case BOUNDARY_OP_LOAD_TEMPLATE:
      put_u32(w, op->val.load_template.id);
      put_u16(w, op->val.load_template.tmpl);
      put_u16(w, op->val.load_template.root);
      break;
    case BOUNDARY_OP_SET_ATTRIBUTE: {
      const boundary_set_attribute_t *a = &op->val.set_attribute;
      put_u32(w, a->id);
      put_u16(w, a->name);
      put_ns(w, a->ns);
      put_u8(w, a->value.tag);
      if (a->value.tag == BOUNDARY_ATTR_VALUE_TEXT) put_text(w, a->value.val.text);
      if (a->value.tag == BOUNDARY_ATTR_VALUE_FLOAT) {
        memcpy(w->ops, &a->value.val.float_, 8);
        w->ops += 8;
      }
      if (a->value.tag == BOUNDARY_ATTR_VALUE_INT) {
        memcpy(w->ops, &a->value.val.int_, 8);
        w->ops += 8;
      }
      if (a->value.tag == BOUNDARY_ATTR_VALUE_BOOLEAN) put_u8(w, a->value.val.boolean ? 1 : 0);
      break;
    }
    case BOUNDARY_OP_NEW_EVENT_LISTENER:
    case BOUNDARY_OP_REMOVE_EVENT_LISTENER: {
      const boundary_event_listener_t *l = &op->val.new_event_listener;  // both cases have this layout
      put_u32(w, l->id);
      put_u16(w, l->name);
      put_u8(w, l->bubbles ? 1 : 0);
      break;
    }
    default: {  // append-children, replace-with, insert-after, insert-before
      const boundary_stack_op_t *s = &op->val.append_children;  // all four have this layout
      put_u32(w, s->id);
      put_u32(w, s->m);
      break;
    }
  }
}

// Bytes of the frame of `n` operations from `ops`: header, texts, ops.
static uint64_t frame_size(const boundary_operation_t *ops, size_t n, size_t *text_len) {
  size_t ops_len = 0;
  *text_len = 0;
  for (size_t i = 0; i < n; i++) measure_op(&ops[i], &ops_len, text_len);
  return 8 + (uint64_t)*text_len + ops_len;
}

// Writes the frame of `n` operations at `frame` (frame_size bytes).
static void put_frame(uint8_t *frame, const boundary_operation_t *ops, size_t n, uint64_t frame_len, size_t text_len) {
  writer_t w = {frame, frame + 8};
  put_u32(&w, (uint32_t)frame_len);
  put_u32(&w, (uint32_t)text_len);
  w.ops = frame + 8 + text_len;
  for (size_t i = 0; i < n; i++) put_op(&w, &ops[i]);
  if (w.text != frame + 8 + text_len || w.ops != frame + frame_len) abort();
}

// The batch as one frame of the byte protocol, in one new block.
static void encode_batch(boundary_list_operation_t batch, boundary_list_u8_t *ret) {
  size_t text_len = 0;
  const uint64_t frame_len = frame_size(batch.ptr, batch.len, &text_len);
  if (frame_len > UINT32_MAX) abort();
  uint8_t *frame = allocate(block_size(frame_len));
  put_frame(frame, batch.ptr, batch.len, frame_len, text_len);
  ret->ptr = frame;
  ret->len = (size_t)frame_len;
}

void boundary_encode_frames(boundary_list_operation_t batch, size_t k, boundary_frames_t *ret) {
  if (k == 0 || k > batch.len) k = batch.len ? batch.len : 1;
  const size_t count = (batch.len + k - 1) / k;
  // One block: the frames, then where each ends.
  uint64_t total = 0;
  for (size_t f = 0; f < count; f++) {
    size_t text_len = 0;
    const size_t n = batch.len - f * k < k ? batch.len - f * k : k;
    total += frame_size(batch.ptr + f * k, n, &text_len);
  }
  const uint64_t ends_at = (total + 3) / 4 * 4;
  uint8_t *block = allocate(block_size(ends_at + (uint64_t)count * sizeof(size_t)));
  size_t *ends = (size_t *)(block + ends_at);
  size_t at = 0;
  for (size_t f = 0; f < count; f++) {
    size_t text_len = 0;
    const size_t n = batch.len - f * k < k ? batch.len - f * k : k;
    const uint64_t frame_len = frame_size(batch.ptr + f * k, n, &text_len);
    if (frame_len > UINT32_MAX) abort();
    put_frame(block + at, batch.ptr + f * k, n, frame_len, text_len);
    at += (size_t)frame_len;
    ends[f] = at;
  }
  ret->bytes = (boundary_list_u8_t){block, at};
  ret->ends = ends;
  ret->count = count;
}

// ---- The coverage batch ----

// Every case of `operation` (set-attribute once per kind of value), template
// nodes of every kind with and without namespaces and attributes, two roots,
// texts in 1- to 4-byte UTF-8, an empty text and one longer than the byte
// protocol's short form, paths of 0 to 5 bytes, numbers at their extremes,
// floats whose sign and lowest bits matter. Its texts are static but the
// long one, which is written after the operations in the batch's block.
#define LONG_TEXT_LEN 70000

static const uint32_t COVERAGE_CHILDREN[] = {1, 2};
static const uint32_t COVERAGE_ROOTS[] = {0, 3};
static const boundary_template_attr_t COVERAGE_ATTRS[] = {{4, {true, 0xfffe}, TEXT("\xc3\xbc")}, {5, {false, 0}, TEXT("")}};
static const boundary_template_node_t COVERAGE_NODES[] = {
    {.tag = BOUNDARY_TEMPLATE_NODE_ELEMENT,
     .val.element = {1, {true, 2}, {COVERAGE_ATTRS, COUNT(COVERAGE_ATTRS)}, {COVERAGE_CHILDREN, COUNT(COVERAGE_CHILDREN)}}},
    {.tag = BOUNDARY_TEMPLATE_NODE_TEXT, .val.text = TEXT("x\xf0\x9f\x98\x80")},
    {.tag = BOUNDARY_TEMPLATE_NODE_DYNAMIC},
    {.tag = BOUNDARY_TEMPLATE_NODE_ELEMENT, .val.element = {65535, {false, 0}, {NULL, 0}, {NULL, 0}}},
};
static const uint8_t COVERAGE_PATH[] = {3, 1, 4, 1, 5};
static const uint8_t COVERAGE_PATH_EXTREMES[] = {0, 255, 7};

#define SET_ATTRIBUTE(id_, ns_, value_) \
  {.tag = BOUNDARY_OP_SET_ATTRIBUTE, .val.set_attribute = {(id_), 9, ns_, value_}}
static const boundary_operation_t COVERAGE_OPS[] = {
    {.tag = BOUNDARY_OP_CACHE_STRING, .val.cache_string = {65535, TEXT("h\xc3\xa9llo \xe2\x98\x83")}},
    {.tag = BOUNDARY_OP_REGISTER_TEMPLATE,
     .val.register_template = {7, {COVERAGE_NODES, COUNT(COVERAGE_NODES)}, {COVERAGE_ROOTS, COUNT(COVERAGE_ROOTS)}}},
    {.tag = BOUNDARY_OP_APPEND_CHILDREN, .val.append_children = {UINT32_MAX, 1}},
    {.tag = BOUNDARY_OP_ASSIGN_ID, .val.assign_id = {{NULL, 0}, 2}},
    {.tag = BOUNDARY_OP_ASSIGN_ID, .val.assign_id = {{COVERAGE_PATH_EXTREMES, COUNT(COVERAGE_PATH_EXTREMES)}, 3}},
    {.tag = BOUNDARY_OP_CREATE_PLACEHOLDER, .val.create_placeholder = 123456789},
    {.tag = BOUNDARY_OP_CREATE_TEXT_NODE, .val.create_text_node = {5, TEXT("")}},
    {.tag = BOUNDARY_OP_CREATE_TEXT_NODE, .val.create_text_node = {6, {NULL, LONG_TEXT_LEN}}},  // the long text
    {.tag = BOUNDARY_OP_LOAD_TEMPLATE, .val.load_template = {9, 65535, 1}},
    {.tag = BOUNDARY_OP_REPLACE_WITH, .val.replace_with = {1, 2}},
    {.tag = BOUNDARY_OP_REPLACE_PLACEHOLDER, .val.replace_placeholder = {{COVERAGE_PATH, COUNT(COVERAGE_PATH)}, 9}},
    {.tag = BOUNDARY_OP_INSERT_AFTER, .val.insert_after = {3, 4}},
    {.tag = BOUNDARY_OP_INSERT_BEFORE, .val.insert_before = {5, 6}},
    SET_ATTRIBUTE(10, ((boundary_option_str_ref_t){true, 7}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_TEXT, .val.text = TEXT("Gr\xc3\xbc\xc3\x9f" "e")})),
    SET_ATTRIBUTE(11, ((boundary_option_str_ref_t){false, 0}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_FLOAT, .val.float_ = -2.75})),
    SET_ATTRIBUTE(12, ((boundary_option_str_ref_t){false, 0}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_FLOAT, .val.float_ = 0x1.0000000000001p-1000})),
    SET_ATTRIBUTE(13, ((boundary_option_str_ref_t){false, 0}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_FLOAT, .val.float_ = -0.0})),
    SET_ATTRIBUTE(14, ((boundary_option_str_ref_t){false, 0}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_INT, .val.int_ = INT64_MIN})),
    SET_ATTRIBUTE(15, ((boundary_option_str_ref_t){false, 0}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_INT, .val.int_ = 123456789012345})),
    SET_ATTRIBUTE(16, ((boundary_option_str_ref_t){false, 0}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_BOOLEAN, .val.boolean = true})),
    SET_ATTRIBUTE(17, ((boundary_option_str_ref_t){false, 0}),
                  ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_BOOLEAN, .val.boolean = false})),
    SET_ATTRIBUTE(18, ((boundary_option_str_ref_t){true, 0}), ((boundary_attr_value_t){.tag = BOUNDARY_ATTR_VALUE_NONE})),
    {.tag = BOUNDARY_OP_SET_TEXT, .val.set_text = {19, TEXT("\xef\xac\x81x \xe2\x80\xa8")}},
    {.tag = BOUNDARY_OP_NEW_EVENT_LISTENER, .val.new_event_listener = {20, 8, false}},
    {.tag = BOUNDARY_OP_REMOVE_EVENT_LISTENER, .val.remove_event_listener = {20, 8, true}},
    {.tag = BOUNDARY_OP_REMOVE, .val.remove = 21},
    {.tag = BOUNDARY_OP_PUSH_ROOT, .val.push_root = 0},
};
#define LONG_TEXT_OP 7

// The long text: letters a to z over and over, then "\xc3\xa9" (UTF-8 to its last byte).
static void write_long_text(uint8_t *at) {
  for (size_t i = 0; i < LONG_TEXT_LEN - 2; i++) at[i] = (uint8_t)('a' + i % 26);
  at[LONG_TEXT_LEN - 2] = 0xc3;
  at[LONG_TEXT_LEN - 1] = 0xa9;
}

static void build_coverage(boundary_list_operation_t *ret) {
  const size_t n = COUNT(COVERAGE_OPS);
  boundary_operation_t *ops = allocate(n * sizeof(boundary_operation_t) + LONG_TEXT_LEN);
  uint8_t *long_text = (uint8_t *)(ops + n);
  memcpy(ops, COVERAGE_OPS, sizeof COVERAGE_OPS);
  write_long_text(long_text);
  ops[LONG_TEXT_OP].val.create_text_node.text.ptr = long_text;
  ret->ptr = ops;
  ret->len = n;
}

// ---- Prepared batches ----

static boundary_list_operation_t prepared_typed;
static boundary_list_u8_t prepared_bytes;

void boundary_prepare(uint32_t rows) {
  boundary_streams_forget();
  boundary_batch_free(prepared_typed.ptr);
  boundary_batch_free(prepared_bytes.ptr);
  boundary_build_typed(rows, &prepared_typed);
  boundary_build_bytes(rows, &prepared_bytes);
}

void boundary_prepare_coverage(void) {
  boundary_streams_forget();
  boundary_batch_free(prepared_typed.ptr);
  boundary_batch_free(prepared_bytes.ptr);
  build_coverage(&prepared_typed);
  encode_batch(prepared_typed, &prepared_bytes);
}

// Before any prepare: empty lists, whose pointer only has to be aligned.
void boundary_take_typed(boundary_list_operation_t *ret) {
  *ret = prepared_typed.ptr
             ? prepared_typed
             : (boundary_list_operation_t){(const boundary_operation_t *)_Alignof(boundary_operation_t), 0};
}

void boundary_take_bytes(boundary_list_u8_t *ret) {
  *ret = prepared_bytes.ptr ? prepared_bytes : (boundary_list_u8_t){(const uint8_t *)1, 0};
}
