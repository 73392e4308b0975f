// A wasi:http 0.2 proxy (world `http-proxy`) that misbehaves on purpose, for
// the tests of how `cmhost serve` copes, on both engines. The request's
// method picks what it does:
//   GET, HEAD  200, "hello from a C proxy\n": the proxy that behaves
//   POST       echoes the request's body (read to its end, then the
//              trailers' future finished), 200
//   PUT        sets a response, writes "partial", then traps
//   DELETE     declares content-length: 3, then writes 10 bytes; the write
//              and the finish must fail with HTTP-response-body-size(10)
//   SHORT      declares content-length: 10, writes 3 bytes; the finish must
//              fail with HTTP-response-body-size(3)
//   SPIN       never responds: spins without calling the host
//   PATCH      appends the forbidden `connection: close` to new fields; the
//              body is the header-error case it got ("forbidden"), or "ok"
//   OPTIONS    returns without setting a response
//   TRACE      traps before it responds
//   others     405, without a body
// A check that fails traps: the server then reports a trap.
// Every response is set through response-outparam.set, its body written
// with blocking-write-and-flush (at most 4096 bytes each) and finished.
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "http-proxy.h"

// The request's method; *short_method whether it is `SHORT`, *spin `SPIN`.
static enum http_method request_method(uint32_t request, bool *short_method, bool *spin) {
  http_method_result_t method;
  http_incoming_request_method(request, &method);
  *short_method = is_other_method(&method, "SHORT");
  *spin = is_other_method(&method, "SPIN");
  if (method.tag == HTTP_METHOD_OTHER && method.other_len > 0) free(method.other_ptr);
  return (enum http_method)method.tag;
}

// Whether an error-code (in memory) is HTTP-response-body-size(some(size)).
static bool is_body_size(const uint8_t *code, uint64_t size) {
  uint64_t got;
  memcpy(&got, code + 16, sizeof got);
  return code[0] == HTTP_ERROR_CODE_HTTP_RESPONSE_BODY_SIZE && code[8] == 1 && got == size;
}

// Writes `len` bytes (at most 4096) that break the body's content-length:
// the write must fail with HTTP-response-body-size(size).
static void write_too_much(uint32_t stream, const uint8_t *bytes, size_t len, uint64_t size) {
  io_write_result_t written;
  io_output_stream_blocking_write_and_flush(stream, bytes, len, &written);
  if (!written.is_err || written.error_tag != 0) __builtin_trap();
  http_error_option_t code;
  http_error_code_of(written.error, &code);
  if (!code.is_some || !is_body_size(code.error_code, size)) __builtin_trap();
  io_error_drop(written.error);
}

// Finishes a body that broke its content-length: finish must fail with
// HTTP-response-body-size(size).
static void finish_mismatched(uint32_t stream, uint32_t body, uint64_t size) {
  io_output_stream_drop(stream);
  http_error_result_t finished;
  http_outgoing_body_finish(body, 0, 0, &finished);
  if (!finished.is_err || !is_body_size(finished.error_code, size)) __builtin_trap();
}

// The request's whole body (the guest frees it), its length in *len.
static uint8_t *read_body(uint32_t request, size_t *len) {
  http_handle_result_t consumed, stream;
  http_incoming_request_consume(request, &consumed);
  if (consumed.is_err) __builtin_trap();
  http_incoming_body_stream(consumed.handle, &stream);
  if (stream.is_err) __builtin_trap();
  uint8_t *body = NULL;
  *len = 0;
  for (;;) {
    io_read_result_t read;
    io_input_stream_blocking_read(stream.handle, 65536, &read);
    if (read.is_err) {
      if (read.u.error.tag != 1) __builtin_trap();  // only `closed` ends a body that arrived whole
      break;
    }
    body = realloc(body, *len + read.u.bytes.len + 1);
    if (!body) __builtin_trap();
    memcpy(body + *len, read.u.bytes.ptr, read.u.bytes.len);
    *len += read.u.bytes.len;
    free(read.u.bytes.ptr);
  }
  io_input_stream_drop(stream.handle);
  http_future_trailers_drop(http_incoming_body_finish(consumed.handle));
  return body;
}

// Sets the response: its status, its fields (content-length when given).
// Returns its body's output stream, *body the body itself.
static uint32_t respond(uint32_t outparam, uint32_t status, const char *content_length, uint32_t *body) {
  const uint32_t fields = http_fields_new();
  http_header_result_t appended;
  http_fields_append(fields, "content-type", 12, (const uint8_t *)"text/plain", 10, &appended);
  if (content_length)
    http_fields_append(fields, "content-length", 14, (const uint8_t *)content_length, strlen(content_length),
                       &appended);
  const uint32_t response = http_outgoing_response_new(fields);
  if (http_outgoing_response_set_status_code(response, status)) __builtin_trap();
  http_handle_result_t got_body, stream;
  http_outgoing_response_body(response, &got_body);
  if (got_body.is_err) __builtin_trap();
  http_outgoing_body_write(got_body.handle, &stream);
  if (stream.is_err) __builtin_trap();
  http_response_outparam_set(outparam, 0, response, 0, 0, 0, 0, 0, 0);
  *body = got_body.handle;
  return stream.handle;
}

static void write_all(uint32_t stream, const uint8_t *bytes, size_t len) {
  while (len > 0) {
    const size_t n = len < 4096 ? len : 4096;
    io_write_result_t written;
    io_output_stream_blocking_write_and_flush(stream, bytes, n, &written);
    if (written.is_err) return;  // the client is gone
    bytes += n;
    len -= n;
  }
}

static void finish(uint32_t stream, uint32_t body) {
  io_output_stream_drop(stream);
  http_error_result_t finished;
  http_outgoing_body_finish(body, 0, 0, &finished);
}

static void answer(uint32_t outparam, uint32_t status, const char *text) {
  uint32_t body;
  const uint32_t stream = respond(outparam, status, NULL, &body);
  write_all(stream, (const uint8_t *)text, strlen(text));
  finish(stream, body);
}

__attribute__((__export_name__("wasi:http/incoming-handler@0.2.12#handle"))) void handle(uint32_t request,
                                                                                         uint32_t outparam) {
  bool short_method, spin;
  const enum http_method method = request_method(request, &short_method, &spin);
  if (spin)
    for (volatile uint32_t i = 0;; i++) {
    }
  uint32_t body, stream;
  switch (method) {
    case HTTP_METHOD_GET:
    case HTTP_METHOD_HEAD:
      http_incoming_request_drop(request);
      answer(outparam, 200, "hello from a C proxy\n");
      return;
    case HTTP_METHOD_POST: {
      size_t len = 0;
      uint8_t *echoed = read_body(request, &len);
      http_incoming_request_drop(request);
      stream = respond(outparam, 200, NULL, &body);
      write_all(stream, echoed, len);
      free(echoed);
      finish(stream, body);
      return;
    }
    case HTTP_METHOD_PUT:
      http_incoming_request_drop(request);
      stream = respond(outparam, 200, NULL, &body);
      write_all(stream, (const uint8_t *)"partial", 7);
      __builtin_trap();
    case HTTP_METHOD_DELETE:
      http_incoming_request_drop(request);
      stream = respond(outparam, 200, "3", &body);
      write_too_much(stream, (const uint8_t *)"0123456789", 10, 10);
      finish_mismatched(stream, body, 10);
      return;
    case HTTP_METHOD_PATCH: {
      http_incoming_request_drop(request);
      const uint32_t fields = http_fields_new();
      http_header_result_t appended;
      http_fields_append(fields, "connection", 10, (const uint8_t *)"close", 5, &appended);
      static const char *const errors[] = {"invalid-syntax", "forbidden", "immutable"};
      answer(outparam, 200, appended.is_err ? errors[appended.error] : "ok");
      return;
    }
    case HTTP_METHOD_OPTIONS:
      http_incoming_request_drop(request);
      return;  // the outparam dropped unset
    case HTTP_METHOD_TRACE:
      __builtin_trap();
    default:
      http_incoming_request_drop(request);
      if (short_method) {
        stream = respond(outparam, 200, "10", &body);
        write_all(stream, (const uint8_t *)"012", 3);
        finish_mismatched(stream, body, 3);
        return;
      }
      answer(outparam, 405, "");
      return;
  }
}
