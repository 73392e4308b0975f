// Canonical ABI glue of the world `http-service` (http-service.wit), written
// by hand: the core imports and exports wit-component maps to the world's
// functions and to the async built-ins, named as wit-bindgen-built guests
// name them (wit-component's "legacy" names: `[async-lift]IFACE#FUNC`,
// `[task-return]FUNC` from `[export]IFACE`, `[stream-new-N]FUNC` where N
// picks the Nth future or stream in FUNC's signature), with their flattened
// core signatures and the memory layouts of what goes through memory
// (CanonicalABI.md).
#ifndef CMHOST_TEST_HTTP_SERVICE_H
#define CMHOST_TEST_HTTP_SERVICE_H

#include "../http-common.h"

#define WASI_HTTP_TYPES "wasi:http/types@0.3.0"
#define WASI_HTTP_HANDLER "wasi:http/handler@0.3.0"

// ---- wasi:http/types@0.3.0 -------------------------------------------------


// `result<_, header-error>` in memory (5 flat values: returned through a
// pointer): the error's case at 4, its `other(option<string>)` payload at 8.
typedef struct http_header_result {
  uint8_t is_err;
  _Alignas(4) uint8_t error_tag;  // enum http_header_error
  _Alignas(4) uint8_t other_is_some;
  uint8_t *other_ptr;
  size_t other_len;
} http_header_result_t;
_Static_assert(offsetof(http_header_result_t, error_tag) == 4, "header-error at 4");
_Static_assert(offsetof(http_header_result_t, other_ptr) == 12 && sizeof(http_header_result_t) == 20,
               "result<_, header-error> is 20 bytes");

// `header-error`'s cases.
enum http_header_error {
  HTTP_HEADER_ERROR_INVALID_SYNTAX,
  HTTP_HEADER_ERROR_FORBIDDEN,
  HTTP_HEADER_ERROR_IMMUTABLE,
  HTTP_HEADER_ERROR_SIZE_EXCEEDED,
  HTTP_HEADER_ERROR_OTHER,
};

// `tuple<response, future<result<_, error-code>>>`, [static]response.new's
// result, in memory.
typedef struct http_response_new_result {
  uint32_t response;
  uint32_t transmitted;  // readable end of the future the host settles
} http_response_new_result_t;

// `result<option<trailers>, error-code>`, the trailers future's value, in
// memory: the case at 0, the payload at 8 (error-code holds a u64); 40
// bytes in all. All zeros is ok(none).
typedef struct http_trailers_result {
  _Alignas(8) uint8_t bytes[40];
} http_trailers_result_t;

IMPORT(WASI_HTTP_TYPES, "[method]request.get-method")
extern void http_request_get_method(uint32_t request, http_method_result_t *ret);
IMPORT(WASI_HTTP_TYPES, "[resource-drop]request")
extern void http_request_drop(uint32_t request);

IMPORT(WASI_HTTP_TYPES, "[constructor]fields")
extern uint32_t http_fields_new(void);
IMPORT(WASI_HTTP_TYPES, "[method]fields.append")
extern void http_fields_append(uint32_t fields, const char *name, size_t name_len, const uint8_t *value,
                               size_t value_len, http_header_result_t *ret);
IMPORT(WASI_HTTP_TYPES, "[resource-drop]fields")
extern void http_fields_drop(uint32_t fields);

// Takes the headers, the body (option<stream<u8>>: is_some, readable end)
// and the trailers future's readable end.
IMPORT(WASI_HTTP_TYPES, "[static]response.new")
extern void http_response_new(uint32_t headers, uint32_t has_body, uint32_t body, uint32_t trailers,
                              http_response_new_result_t *ret);
// result (no payloads): 0 ok, 1 err.
IMPORT(WASI_HTTP_TYPES, "[method]response.set-status-code")
extern uint32_t http_response_set_status_code(uint32_t response, uint32_t status);

// The streams and futures of [static]response.new's signature: 0 is the
// body's stream<u8>, 1 the trailers' future, 2 the transmit future of its
// result. Every `new` returns the readable end in the low 32 bits and the
// writable end in the high 32 bits; the async copies return BLOCKED or
// (count << 4) | copy result.
IMPORT(WASI_HTTP_TYPES, "[stream-new-0][static]response.new")
extern uint64_t http_body_new(void);
IMPORT(WASI_HTTP_TYPES, "[async-lower][stream-write-0][static]response.new")
extern uint32_t http_body_write(uint32_t writable, const uint8_t *bytes, size_t count);
IMPORT(WASI_HTTP_TYPES, "[stream-drop-writable-0][static]response.new")
extern void http_body_drop_writable(uint32_t writable);

IMPORT(WASI_HTTP_TYPES, "[future-new-1][static]response.new")
extern uint64_t http_trailers_new(void);
IMPORT(WASI_HTTP_TYPES, "[async-lower][future-write-1][static]response.new")
extern uint32_t http_trailers_write(uint32_t writable, const http_trailers_result_t *value);
IMPORT(WASI_HTTP_TYPES, "[future-drop-writable-1][static]response.new")
extern void http_trailers_drop_writable(uint32_t writable);

IMPORT(WASI_HTTP_TYPES, "[future-drop-readable-2][static]response.new")
extern void http_transmitted_drop_readable(uint32_t readable);

// `tuple<stream<u8>, future<result<option<trailers>, error-code>>>`,
// [static]request.consume-body's result, in memory: the readable ends.
typedef struct http_consumed_body {
  uint32_t contents;
  uint32_t trailers;
} http_consumed_body_t;

// `result<_, error-code>` in memory, what the consumer tells the host of
// its reading (the futures of consume-body's parameter and response.new's
// result): the case at 0, error-code's payload at 8. All zeros is ok.
typedef struct http_transmit_result {
  _Alignas(8) uint8_t bytes[40];
} http_transmit_result_t;

// Takes the request (own) and the readable end of the future the consumer
// settles; returns the body's ends.
IMPORT(WASI_HTTP_TYPES, "[static]request.consume-body")
extern void http_request_consume_body(uint32_t request, uint32_t res, http_consumed_body_t *ret);
// Future 0 of consume-body's signature is its `res` parameter.
IMPORT(WASI_HTTP_TYPES, "[future-new-0][static]request.consume-body")
extern uint64_t http_consume_result_new(void);
IMPORT(WASI_HTTP_TYPES, "[async-lower][future-write-0][static]request.consume-body")
extern uint32_t http_consume_result_write(uint32_t writable, const http_transmit_result_t *value);
IMPORT(WASI_HTTP_TYPES, "[future-drop-writable-0][static]request.consume-body")
extern void http_consume_result_drop_writable(uint32_t writable);

// ---- wasi:clocks/monotonic-clock@0.3.0 -------------------------------------

// Async lowered: the subtask's state in the low 4 bits, its handle above
// (none once it returned).
IMPORT("wasi:clocks/monotonic-clock@0.3.0", "[async-lower]wait-for")
extern uint32_t clock_wait_for(uint64_t nanoseconds);
enum subtask_state { SUBTASK_STARTING = 0, SUBTASK_STARTED = 1, SUBTASK_RETURNED = 2 };

// ---- wasi:http/handler@0.3.0 (exported) ------------------------------------

// `result<response, error-code>` flattened: the case, then the joined
// payloads of `response` and `error-code` (the i64 is a u64 of error-code's).
IMPORT("[export]" WASI_HTTP_HANDLER, "[task-return]handle")
extern void http_handle_return(uint32_t is_err, uint32_t response_or_error, uint32_t p1, uint64_t p2, uint32_t p3,
                               uint32_t p4, uint32_t p5, uint32_t p6);

// ---- Async built-ins -------------------------------------------------------

IMPORT("$root", "[waitable-set-new]") extern uint32_t waitable_set_new(void);
IMPORT("$root", "[waitable-set-drop]") extern void waitable_set_drop(uint32_t set);
// Set 0 takes the waitable out of its set.
IMPORT("$root", "[waitable-join]") extern void waitable_join(uint32_t waitable, uint32_t set);
IMPORT("$root", "[subtask-drop]") extern void subtask_drop(uint32_t subtask);
// The current task's context slot 0.
IMPORT("$root", "[context-get-0]") extern void *context_get(void);
IMPORT("$root", "[context-set-0]") extern void context_set(void *value);
IMPORT("[export]$root", "[task-cancel]") extern void task_cancel(void);

// A copy that did not complete at once.
#define COPY_BLOCKED 0xffffffffu
// The low 4 bits of a copy's result; the rest is the count of values copied.
enum copy_result { COPY_COMPLETED = 0, COPY_DROPPED = 1, COPY_CANCELLED = 2 };

// Callback codes (what an async-lifted export and its callback return).
#define CALLBACK_EXIT 0u
#define CALLBACK_WAIT(set) (2u | ((set) << 4))

// Events delivered to the callback.
enum event_code {
  EVENT_NONE = 0,
  EVENT_SUBTASK = 1,
  EVENT_STREAM_READ = 2,
  EVENT_STREAM_WRITE = 3,
  EVENT_FUTURE_READ = 4,
  EVENT_FUTURE_WRITE = 5,
  EVENT_TASK_CANCELLED = 6,
};

#endif
