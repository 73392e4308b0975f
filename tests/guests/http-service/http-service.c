// A wasi:http 0.3 service (world `http-service`) that misbehaves on purpose,
// for the tests of how `cmhost serve` copes. The request's method picks what
// it does:
//   GET, HEAD  200, text/plain, "hello from a C service\n": the service
//              that behaves, to check the server still works after the rest
//   POST       traps before it responds
//   PUT        responds, writes "partial" to the body, then traps
//   DELETE     declares content-length: 3, then writes 10 bytes
//   PATCH      appends the forbidden `connection: close` to new fields; the
//              body is the header-error case it got ("forbidden"), or "ok"
//   OPTIONS    never responds: waits on a waitable set nothing joins
//   SPIN       never responds: spins without returning to the host
//   CANCELLED  200, how many tasks the host cancelled in this instance (an
//              OPTIONS whose client left is one), in decimal
//   HANDON     consumes the request's body, waits 10 ms (the host's loop
//              turns meanwhile), then responds 200 with the body's stream
//              and trailers handed on unread
//   others     405, without a body
// `handle` is lifted async with a callback (stackless): the export and its
// callback run the task until a copy blocks, then return WAIT on the task's
// waitable set; the callback goes on from the event it gets. The body is
// written after task.return, as services do: the host reads it only once it
// has the response. The task's state is in its context slot 0.
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "http-service.h"

typedef struct service_task {
  uint32_t waitable_set;
  // The body: a writable end (0 once dropped, or for a response without a
  // body) and static text, of which `body_written` bytes are taken.
  uint32_t body_writer;
  const char *body;
  size_t body_length, body_written;
  bool trap_after_body;  // PUT's
  // The trailers: always none, sent once the body ended. The value stays
  // here while the write waits for the host to take it.
  uint32_t trailers_writer;
  bool trailers_sent;
  http_trailers_result_t no_trailers;
  // HANDON's: the request body's readable ends, for the response.
  http_consumed_body_t handed_on;
} service_task_t;

// ---- Building the response -------------------------------------------------

// Tasks the host cancelled, for CANCELLED (an instance serves many).
static unsigned cancelled_tasks;
static char cancelled_text[16];

// The request's method; *spin whether it is `SPIN`, *cancelled
// `CANCELLED`, *hand_on `HANDON`.
static enum http_method request_method(uint32_t request, bool *spin, bool *cancelled, bool *hand_on) {
  http_method_result_t method;
  http_request_get_method(request, &method);
  *spin = is_other_method(&method, "SPIN");
  *cancelled = is_other_method(&method, "CANCELLED");
  *hand_on = is_other_method(&method, "HANDON");
  // other(string)'s name is the guest's to free.
  if (method.tag == HTTP_METHOD_OTHER && method.other_len > 0) free(method.other_ptr);
  return (enum http_method)method.tag;
}

// CANCELLED's body.
static const char *cancelled_count(void) {
  char digits[16];
  size_t n = 0;
  unsigned value = cancelled_tasks;
  do {
    digits[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value);
  for (size_t i = 0; i < n; i++) cancelled_text[i] = digits[n - 1 - i];
  cancelled_text[n] = '\0';
  return cancelled_text;
}

static void append_header(uint32_t fields, const char *name, const char *value, http_header_result_t *result) {
  http_fields_append(fields, name, strlen(name), (const uint8_t *)value, strlen(value), result);
}

// PATCH's probe: what the host says to a header the guest may not set.
static const char *append_forbidden_header(void) {
  const uint32_t fields = http_fields_new();
  http_header_result_t result;
  append_header(fields, "connection", "close", &result);
  http_fields_drop(fields);
  if (!result.is_err) return "ok";
  switch (result.error_tag) {
    case HTTP_HEADER_ERROR_INVALID_SYNTAX: return "invalid-syntax";
    case HTTP_HEADER_ERROR_FORBIDDEN: return "forbidden";
    case HTTP_HEADER_ERROR_IMMUTABLE: return "immutable";
    case HTTP_HEADER_ERROR_SIZE_EXCEEDED: return "size-exceeded";
    case HTTP_HEADER_ERROR_OTHER:
      if (result.other_is_some && result.other_len > 0) free(result.other_ptr);
      return "other";
    default: __builtin_trap();
  }
}

// Returns `status` with one header (when `header_name` is set) and `body`
// (static text; NULL: no body) through task.return. The body and the
// trailers are written afterwards, by advance().
static void respond(service_task_t *task, uint16_t status, const char *header_name, const char *header_value,
                    const char *body) {
  const uint32_t headers = http_fields_new();
  if (header_name) {
    http_header_result_t result;
    append_header(headers, header_name, header_value, &result);
    if (result.is_err) __builtin_trap();  // only headers any service may set come here
  }
  uint32_t body_reader = 0;
  if (body) {
    const uint64_t ends = http_body_new();
    body_reader = (uint32_t)ends;
    task->body_writer = (uint32_t)(ends >> 32);
    task->body = body;
    task->body_length = strlen(body);
  }
  const uint64_t trailers = http_trailers_new();
  task->trailers_writer = (uint32_t)(trailers >> 32);

  http_response_new_result_t created;
  http_response_new(headers, body != NULL, body_reader, (uint32_t)trailers, &created);
  // Whether the host got the response out is of no interest here.
  http_transmitted_drop_readable(created.transmitted);
  // A new response is 200.
  if (status != 200 && http_response_set_status_code(created.response, status) != 0) __builtin_trap();
  http_handle_return(0, created.response, 0, 0, 0, 0, 0, 0);  // ok(response)
}

// ---- Running the task ------------------------------------------------------

static uint32_t wait_for(service_task_t *task, uint32_t waitable) {
  waitable_join(waitable, task->waitable_set);
  return CALLBACK_WAIT(task->waitable_set);
}

static void end_body(service_task_t *task) {
  if (!task->body_writer) return;
  http_body_drop_writable(task->body_writer);
  task->body_writer = 0;
}

// A body write's outcome: the bytes taken, and whether the reader is gone
// (the server drops a HEAD response's body, or a body it stopped sending).
static void record_body_write(service_task_t *task, uint32_t copied) {
  task->body_written += copied >> 4;
  if ((copied & 0xf) == COPY_DROPPED) end_body(task);
}

static uint32_t exit_task(service_task_t *task) {
  waitable_set_drop(task->waitable_set);
  free(task);
  context_set(NULL);
  return CALLBACK_EXIT;
}

// Writes what is left of the body, then the trailers; returns WAIT while
// the host has not taken them, EXIT once it has (or is gone).
static uint32_t advance(service_task_t *task) {
  while (task->body_writer && task->body_written < task->body_length) {
    const uint32_t copied = http_body_write(task->body_writer, (const uint8_t *)task->body + task->body_written,
                                            task->body_length - task->body_written);
    if (copied == COPY_BLOCKED) return wait_for(task, task->body_writer);
    record_body_write(task, copied);
  }
  // PUT: a service that fails after part of its response went out.
  if (task->trap_after_body) __builtin_trap();
  end_body(task);
  if (!task->trailers_sent) {
    task->trailers_sent = true;
    if (http_trailers_write(task->trailers_writer, &task->no_trailers) == COPY_BLOCKED)
      return wait_for(task, task->trailers_writer);
  }
  // Taken, or the reader is gone: a future's end is done either way.
  http_trailers_drop_writable(task->trailers_writer);
  return exit_task(task);
}

// HANDON: the request's body ends, consumed now and handed on after a wait.
static uint32_t consume_then_wait(service_task_t *task, uint32_t request) {
  const uint64_t consumed = http_consume_result_new();
  http_request_consume_body(request, (uint32_t)consumed, &task->handed_on);
  // The host reads the consumer's word as the body is consumed: the write
  // completes at once.
  static const http_transmit_result_t ok;
  const uint32_t written = http_consume_result_write((uint32_t)(consumed >> 32), &ok);
  if (written == COPY_BLOCKED || (written & 0xf) != COPY_COMPLETED) __builtin_trap();
  http_consume_result_drop_writable((uint32_t)(consumed >> 32));
  const uint32_t waiting = clock_wait_for(10 * 1000 * 1000);
  if ((waiting & 0xf) == SUBTASK_RETURNED) __builtin_trap();  // a wait that took no time
  return wait_for(task, waiting >> 4);
}

static uint32_t respond_with_handed_on(service_task_t *task) {
  http_response_new_result_t created;
  http_response_new(http_fields_new(), true, task->handed_on.contents, task->handed_on.trailers, &created);
  http_transmitted_drop_readable(created.transmitted);
  http_handle_return(0, created.response, 0, 0, 0, 0, 0, 0);  // ok(response)
  return exit_task(task);
}

// ---- The export --------------------------------------------------------------

__attribute__((__export_name__("[async-lift]" WASI_HTTP_HANDLER "#handle"))) uint32_t handle(uint32_t request) {
  bool spin, cancelled, hand_on;
  const enum http_method method = request_method(request, &spin, &cancelled, &hand_on);
  if (!hand_on) http_request_drop(request);
  if (spin)
    for (volatile uint32_t i = 0;; i++) {
    }
  service_task_t *task = calloc(1, sizeof *task);
  if (!task) __builtin_trap();
  task->waitable_set = waitable_set_new();
  context_set(task);
  if (hand_on) return consume_then_wait(task, request);
  switch (method) {
    case HTTP_METHOD_GET:
    case HTTP_METHOD_HEAD: respond(task, 200, "content-type", "text/plain", "hello from a C service\n"); break;
    case HTTP_METHOD_POST: __builtin_trap();
    case HTTP_METHOD_PUT:
      task->trap_after_body = true;
      respond(task, 200, NULL, NULL, "partial");
      break;
    case HTTP_METHOD_DELETE: respond(task, 200, "content-length", "3", "0123456789"); break;
    case HTTP_METHOD_PATCH: respond(task, 200, "content-type", "text/plain", append_forbidden_header()); break;
    // Nothing ever joins the set: no event comes but the task's cancellation.
    case HTTP_METHOD_OPTIONS: return CALLBACK_WAIT(task->waitable_set);
    default:
      if (cancelled)
        respond(task, 200, "content-type", "text/plain", cancelled_count());
      else
        respond(task, 405, NULL, NULL, NULL);
      break;
  }
  return advance(task);
}

__attribute__((__export_name__("[callback][async-lift]" WASI_HTTP_HANDLER "#handle"))) uint32_t handle_callback(
    uint32_t event, uint32_t waitable, uint32_t payload) {
  service_task_t *task = context_get();
  switch (event) {
    case EVENT_STREAM_WRITE: record_body_write(task, payload); break;
    case EVENT_FUTURE_WRITE: break;  // the trailers are taken, or their reader is gone
    // HANDON's wait is over.
    case EVENT_SUBTASK:
      if (payload != SUBTASK_RETURNED) return CALLBACK_WAIT(task->waitable_set);
      waitable_join(waitable, 0);
      subtask_drop(waitable);
      return respond_with_handed_on(task);
    // Only OPTIONS's task, which never responds, waits before task.return.
    case EVENT_TASK_CANCELLED:
      cancelled_tasks++;
      task_cancel();
      return exit_task(task);
    default: __builtin_trap();
  }
  return advance(task);
}
