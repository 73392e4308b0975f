// Canonical ABI glue of the world `http-proxy` (http-proxy.wit), written by
// hand: the core imports and exports wit-component maps to the world's
// functions (synchronous: results of more than one flat value come back
// through a pointer), with their flattened core signatures and the memory
// layouts of what goes through memory (CanonicalABI.md).
#ifndef CMHOST_TEST_HTTP_PROXY_H
#define CMHOST_TEST_HTTP_PROXY_H

#include "../http-common.h"

#define WASI_HTTP_TYPES "wasi:http/types@0.2.12"
#define WASI_IO_STREAMS "wasi:io/streams@0.2.12"


// `result<own<T>>` in memory: the case, then the handle.
typedef struct http_handle_result {
  uint8_t is_err;
  uint32_t handle;
} http_handle_result_t;

// `result<_, header-error>` in memory (header-error is an enum-like variant).
typedef struct http_header_result {
  uint8_t is_err;
  uint8_t error;  // 0 invalid-syntax, 1 forbidden, 2 immutable
} http_header_result_t;

// `result<list<u8>, stream-error>` in memory: the case, then the list or the
// error (its case at 4: 0 last-operation-failed(own<error>), 1 closed).
typedef struct io_read_result {
  uint8_t is_err;
  union {
    struct {
      uint8_t *ptr;
      size_t len;
    } bytes;
    struct {
      uint8_t tag;
      uint32_t error;
    } error;
  } u;
} io_read_result_t;
_Static_assert(offsetof(io_read_result_t, u) == 4 && sizeof(io_read_result_t) == 12, "result<list<u8>, stream-error>");

// `result<_, stream-error>` in memory.
typedef struct io_write_result {
  uint8_t is_err;
  _Alignas(4) uint8_t error_tag;
  uint32_t error;
} io_write_result_t;
_Static_assert(offsetof(io_write_result_t, error_tag) == 4 && sizeof(io_write_result_t) == 12,
               "result<_, stream-error>");

// `result<_, error-code>` in memory: the case at 0, the error-code at 8.
typedef struct http_error_result {
  _Alignas(8) uint8_t is_err;
  _Alignas(8) uint8_t error_code[56];
} http_error_result_t;
_Static_assert(offsetof(http_error_result_t, error_code) == 8, "result<_, error-code>");

IMPORT(WASI_HTTP_TYPES, "[method]incoming-request.method")
extern void http_incoming_request_method(uint32_t request, http_method_result_t *ret);
IMPORT(WASI_HTTP_TYPES, "[method]incoming-request.consume")
extern void http_incoming_request_consume(uint32_t request, http_handle_result_t *ret);
IMPORT(WASI_HTTP_TYPES, "[resource-drop]incoming-request")
extern void http_incoming_request_drop(uint32_t request);
IMPORT(WASI_HTTP_TYPES, "[method]incoming-body.stream")
extern void http_incoming_body_stream(uint32_t body, http_handle_result_t *ret);
IMPORT(WASI_HTTP_TYPES, "[static]incoming-body.finish")
extern uint32_t http_incoming_body_finish(uint32_t body);
IMPORT(WASI_HTTP_TYPES, "[resource-drop]future-trailers")
extern void http_future_trailers_drop(uint32_t trailers);

IMPORT(WASI_HTTP_TYPES, "[constructor]fields")
extern uint32_t http_fields_new(void);
IMPORT(WASI_HTTP_TYPES, "[method]fields.append")
extern void http_fields_append(uint32_t fields, const char *name, size_t name_len, const uint8_t *value,
                               size_t value_len, http_header_result_t *ret);

IMPORT(WASI_HTTP_TYPES, "[constructor]outgoing-response")
extern uint32_t http_outgoing_response_new(uint32_t headers);
IMPORT(WASI_HTTP_TYPES, "[method]outgoing-response.set-status-code")
extern uint32_t http_outgoing_response_set_status_code(uint32_t response, uint32_t status);
IMPORT(WASI_HTTP_TYPES, "[method]outgoing-response.body")
extern void http_outgoing_response_body(uint32_t response, http_handle_result_t *ret);
IMPORT(WASI_HTTP_TYPES, "[method]outgoing-body.write")
extern void http_outgoing_body_write(uint32_t body, http_handle_result_t *ret);
IMPORT(WASI_HTTP_TYPES, "[static]outgoing-body.finish")
extern void http_outgoing_body_finish(uint32_t body, uint32_t has_trailers, uint32_t trailers,
                                      http_error_result_t *ret);
// response: result<own<outgoing-response>, error-code>, flattened: the case,
// then the handle or the error-code (its case and six payload slots).
IMPORT(WASI_HTTP_TYPES, "[static]response-outparam.set")
extern void http_response_outparam_set(uint32_t param, uint32_t is_err, uint32_t response_or_error, uint32_t p1,
                                       uint64_t p2, uint32_t p3, uint32_t p4, uint32_t p5, uint32_t p6);

// `option<error-code>` in memory: the case at 0, the error-code at 8 (its
// case at 8, HTTP-request/response-body-size's option<u64> at 16 and 24).
typedef struct http_error_option {
  _Alignas(8) uint8_t is_some;
  _Alignas(8) uint8_t error_code[56];
} http_error_option_t;
enum { HTTP_ERROR_CODE_HTTP_RESPONSE_BODY_SIZE = 28 };

IMPORT(WASI_HTTP_TYPES, "http-error-code")
extern void http_error_code_of(uint32_t error, http_error_option_t *ret);
IMPORT("wasi:io/error@0.2.12", "[resource-drop]error")
extern void io_error_drop(uint32_t error);

IMPORT(WASI_IO_STREAMS, "[method]input-stream.blocking-read")
extern void io_input_stream_blocking_read(uint32_t stream, uint64_t len, io_read_result_t *ret);
IMPORT(WASI_IO_STREAMS, "[resource-drop]input-stream")
extern void io_input_stream_drop(uint32_t stream);
IMPORT(WASI_IO_STREAMS, "[method]output-stream.blocking-write-and-flush")
extern void io_output_stream_blocking_write_and_flush(uint32_t stream, const uint8_t *bytes, size_t len,
                                                      io_write_result_t *ret);
IMPORT(WASI_IO_STREAMS, "[resource-drop]output-stream")
extern void io_output_stream_drop(uint32_t stream);

#endif
