// Canonical ABI glue of the world `boundary` (boundary.wit), written by
// hand: the root exports with their core signatures, results returned
// through a static return area (a list is a pointer and a length, more than
// one core result), `cabi_post_build-*` freeing the batch the call built,
// and `cabi_realloc`.
//
// `take-*` have no post-return function: their batch stays the guest's
// until the next `prepare`, so the host reads it and nothing is freed.
#include <stdalign.h>
#include <stdlib.h>

#include "boundary.h"

// The host reads the batches in place, so the C layouts must be the
// canonical ABI's (32-bit memory); a mismatch fails the build here.
#define LAYOUT(type, size, align) _Static_assert(sizeof(type) == (size) && alignof(type) == (align), #type " layout")
#define OFFSET(type, field, offset) _Static_assert(offsetof(type, field) == (offset), #type "." #field " offset")
LAYOUT(boundary_string_t, 8, 4);
LAYOUT(boundary_option_str_ref_t, 4, 2);
OFFSET(boundary_option_str_ref_t, val, 2);
LAYOUT(boundary_cache_string_t, 12, 4);
OFFSET(boundary_cache_string_t, str, 4);
LAYOUT(boundary_template_attr_t, 16, 4);
OFFSET(boundary_template_attr_t, ns, 2);
OFFSET(boundary_template_attr_t, value, 8);
LAYOUT(boundary_template_element_t, 24, 4);
OFFSET(boundary_template_element_t, ns, 2);
OFFSET(boundary_template_element_t, attrs, 8);
OFFSET(boundary_template_element_t, children, 16);
LAYOUT(boundary_template_node_t, 28, 4);
OFFSET(boundary_template_node_t, val, 4);
LAYOUT(boundary_register_template_t, 20, 4);
OFFSET(boundary_register_template_t, nodes, 4);
OFFSET(boundary_register_template_t, roots, 12);
LAYOUT(boundary_stack_op_t, 8, 4);
LAYOUT(boundary_path_op_t, 12, 4);
OFFSET(boundary_path_op_t, m, 8);
LAYOUT(boundary_assign_id_t, 12, 4);
OFFSET(boundary_assign_id_t, id, 8);
LAYOUT(boundary_create_text_node_t, 12, 4);
OFFSET(boundary_create_text_node_t, text, 4);
LAYOUT(boundary_load_template_t, 8, 4);
OFFSET(boundary_load_template_t, tmpl, 4);
OFFSET(boundary_load_template_t, root, 6);
LAYOUT(boundary_set_text_t, 12, 4);
OFFSET(boundary_set_text_t, text, 4);
LAYOUT(boundary_attr_value_t, 16, 8);
OFFSET(boundary_attr_value_t, val, 8);
LAYOUT(boundary_set_attribute_t, 32, 8);
OFFSET(boundary_set_attribute_t, name, 4);
OFFSET(boundary_set_attribute_t, ns, 6);
OFFSET(boundary_set_attribute_t, value, 16);
LAYOUT(boundary_event_listener_t, 8, 4);
OFFSET(boundary_event_listener_t, name, 4);
OFFSET(boundary_event_listener_t, bubbles, 6);
LAYOUT(boundary_operation_t, 40, 8);
OFFSET(boundary_operation_t, val, 8);

// Every result is a list: pointer at 0, length at 4.
__attribute__((__aligned__(4))) static uint8_t RET_AREA[8];

static uint8_t *return_list(const void *ptr, size_t len) {
  uint8_t *area = (uint8_t *)&RET_AREA;
  *((const void **)(area + 0)) = ptr;
  *((size_t *)(area + 4)) = len;
  return area;
}

// No export takes a string or list, so the host never allocates in this
// guest today; wit-component still expects the function.
__attribute__((__weak__, __export_name__("cabi_realloc"))) void *cabi_realloc(void *ptr, size_t old_size, size_t align,
                                                                              size_t new_size) {
  (void)old_size;
  if (new_size == 0) return (void *)align;
  void *ret = realloc(ptr, new_size);
  if (!ret) abort();
  return ret;
}

__attribute__((__export_name__("prepare"))) void __wasm_export_prepare(int32_t rows) {
  boundary_prepare((uint32_t)rows);
}

__attribute__((__export_name__("prepare-coverage"))) void __wasm_export_prepare_coverage(void) {
  boundary_prepare_coverage();
}

__attribute__((__export_name__("take-typed"))) uint8_t *__wasm_export_take_typed(void) {
  boundary_list_operation_t ret;
  boundary_take_typed(&ret);
  return return_list(ret.ptr, ret.len);
}

__attribute__((__export_name__("take-bytes"))) uint8_t *__wasm_export_take_bytes(void) {
  boundary_list_u8_t ret;
  boundary_take_bytes(&ret);
  return return_list(ret.ptr, ret.len);
}

__attribute__((__export_name__("build-typed"))) uint8_t *__wasm_export_build_typed(int32_t rows) {
  boundary_list_operation_t ret;
  boundary_build_typed((uint32_t)rows, &ret);
  return return_list(ret.ptr, ret.len);
}

__attribute__((__export_name__("cabi_post_build-typed"))) void __wasm_export_build_typed_post_return(uint8_t *arg0) {
  boundary_batch_free(*((const void **)(arg0 + 0)));
}

__attribute__((__export_name__("build-bytes"))) uint8_t *__wasm_export_build_bytes(int32_t rows) {
  boundary_list_u8_t ret;
  boundary_build_bytes((uint32_t)rows, &ret);
  return return_list(ret.ptr, ret.len);
}

__attribute__((__export_name__("cabi_post_build-bytes"))) void __wasm_export_build_bytes_post_return(uint8_t *arg0) {
  boundary_batch_free(*((const void **)(arg0 + 0)));
}
