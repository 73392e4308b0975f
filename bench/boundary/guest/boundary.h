// Types of the world `boundary` (boundary.wit) and the functions the guest
// implements (boundary.c) for its glue (glue.c).
//
// Results are lists in guest memory that the host reads in place, so every
// type here is laid out as the canonical ABI lays it out in a 32-bit memory
// (glue.c checks sizes and offsets at compile time): a variant is its
// discriminant then a union aligned to its most aligned case, an
// option<u16> a bool then the u16.
#ifndef BOUNDARY_H
#define BOUNDARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct boundary_string_t {
  const uint8_t *ptr;
  size_t len;
} boundary_string_t;

typedef struct boundary_list_u8_t {
  const uint8_t *ptr;
  size_t len;
} boundary_list_u8_t;

typedef struct boundary_list_u32_t {
  const uint32_t *ptr;
  size_t len;
} boundary_list_u32_t;

typedef struct boundary_option_str_ref_t {
  bool is_some;
  uint16_t val;
} boundary_option_str_ref_t;

typedef struct boundary_cache_string_t {
  uint16_t id;
  boundary_string_t str;
} boundary_cache_string_t;

typedef struct boundary_template_attr_t {
  uint16_t name;
  boundary_option_str_ref_t ns;
  boundary_string_t value;
} boundary_template_attr_t;

typedef struct boundary_list_template_attr_t {
  const boundary_template_attr_t *ptr;
  size_t len;
} boundary_list_template_attr_t;

typedef struct boundary_template_element_t {
  uint16_t tag;
  boundary_option_str_ref_t ns;
  boundary_list_template_attr_t attrs;
  boundary_list_u32_t children;
} boundary_template_element_t;

#define BOUNDARY_TEMPLATE_NODE_ELEMENT 0
#define BOUNDARY_TEMPLATE_NODE_TEXT 1
#define BOUNDARY_TEMPLATE_NODE_DYNAMIC 2

typedef struct boundary_template_node_t {
  uint8_t tag;
  union {
    boundary_template_element_t element;
    boundary_string_t text;
  } val;
} boundary_template_node_t;

typedef struct boundary_list_template_node_t {
  const boundary_template_node_t *ptr;
  size_t len;
} boundary_list_template_node_t;

typedef struct boundary_register_template_t {
  uint16_t id;
  boundary_list_template_node_t nodes;
  boundary_list_u32_t roots;
} boundary_register_template_t;

typedef struct boundary_stack_op_t {
  uint32_t id;
  uint32_t m;
} boundary_stack_op_t;

typedef struct boundary_path_op_t {
  boundary_list_u8_t path;
  uint32_t m;
} boundary_path_op_t;

typedef struct boundary_assign_id_t {
  boundary_list_u8_t path;
  uint32_t id;
} boundary_assign_id_t;

typedef struct boundary_create_text_node_t {
  uint32_t id;
  boundary_string_t text;
} boundary_create_text_node_t;

typedef struct boundary_load_template_t {
  uint32_t id;
  uint16_t tmpl;
  uint16_t root;
} boundary_load_template_t;

typedef struct boundary_set_text_t {
  uint32_t id;
  boundary_string_t text;
} boundary_set_text_t;

#define BOUNDARY_ATTR_VALUE_TEXT 0
#define BOUNDARY_ATTR_VALUE_FLOAT 1
#define BOUNDARY_ATTR_VALUE_INT 2
#define BOUNDARY_ATTR_VALUE_BOOLEAN 3
#define BOUNDARY_ATTR_VALUE_NONE 4

typedef struct boundary_attr_value_t {
  uint8_t tag;
  union {
    boundary_string_t text;
    double float_;
    int64_t int_;
    bool boolean;
  } val;
} boundary_attr_value_t;

typedef struct boundary_set_attribute_t {
  uint32_t id;
  uint16_t name;
  boundary_option_str_ref_t ns;
  boundary_attr_value_t value;
} boundary_set_attribute_t;

typedef struct boundary_event_listener_t {
  uint32_t id;
  uint16_t name;
  bool bubbles;
} boundary_event_listener_t;

// Case indices of `operation`; the byte protocol's opcodes are these + 1.
#define BOUNDARY_OP_CACHE_STRING 0
#define BOUNDARY_OP_REGISTER_TEMPLATE 1
#define BOUNDARY_OP_APPEND_CHILDREN 2
#define BOUNDARY_OP_ASSIGN_ID 3
#define BOUNDARY_OP_CREATE_PLACEHOLDER 4
#define BOUNDARY_OP_CREATE_TEXT_NODE 5
#define BOUNDARY_OP_LOAD_TEMPLATE 6
#define BOUNDARY_OP_REPLACE_WITH 7
#define BOUNDARY_OP_REPLACE_PLACEHOLDER 8
#define BOUNDARY_OP_INSERT_AFTER 9
#define BOUNDARY_OP_INSERT_BEFORE 10
#define BOUNDARY_OP_SET_ATTRIBUTE 11
#define BOUNDARY_OP_SET_TEXT 12
#define BOUNDARY_OP_NEW_EVENT_LISTENER 13
#define BOUNDARY_OP_REMOVE_EVENT_LISTENER 14
#define BOUNDARY_OP_REMOVE 15
#define BOUNDARY_OP_PUSH_ROOT 16

typedef struct boundary_operation_t {
  uint8_t tag;
  union {
    boundary_cache_string_t cache_string;
    boundary_register_template_t register_template;
    boundary_stack_op_t append_children;
    boundary_assign_id_t assign_id;
    uint32_t create_placeholder;
    boundary_create_text_node_t create_text_node;
    boundary_load_template_t load_template;
    boundary_stack_op_t replace_with;
    boundary_path_op_t replace_placeholder;
    boundary_stack_op_t insert_after;
    boundary_stack_op_t insert_before;
    boundary_set_attribute_t set_attribute;
    boundary_set_text_t set_text;
    boundary_event_listener_t new_event_listener;
    boundary_event_listener_t remove_event_listener;
    uint32_t remove;
    uint32_t push_root;
  } val;
} boundary_operation_t;

typedef struct boundary_list_operation_t {
  const boundary_operation_t *ptr;
  size_t len;
} boundary_list_operation_t;

// Implemented by boundary.c. A built batch, typed or bytes, is one heap
// block that starts at the list's pointer; boundary_batch_free frees it.
// Taken batches stay the guest's until the next prepare.
void boundary_prepare(uint32_t rows);
void boundary_prepare_coverage(void);
void boundary_take_typed(boundary_list_operation_t *ret);
void boundary_take_bytes(boundary_list_u8_t *ret);
void boundary_build_typed(uint32_t rows, boundary_list_operation_t *ret);
void boundary_build_bytes(uint32_t rows, boundary_list_u8_t *ret);
void boundary_batch_free(const void *batch);

// A batch in frames of the byte protocol, back to back in one block (freed
// with boundary_batch_free(bytes.ptr)); frame i ends at byte ends[i].
typedef struct boundary_frames_t {
  boundary_list_u8_t bytes;
  const size_t *ends;
  size_t count;
} boundary_frames_t;
// Frames of `k` operations each (0: the whole batch in one).
void boundary_encode_frames(boundary_list_operation_t batch, size_t k, boundary_frames_t *ret);
// Called by prepare: the stream exports' chunked frames of the previous
// batch are stale (streams.c).
void boundary_streams_forget(void);

#endif
