// The stream exports of the world `boundary` (boundary.wit), with their
// canonical ABI glue written by hand in the callback form of async lift, as
// async guests do: the export returns the stream's readable end at once
// (task.return), writes the batch a chunk at a time, and whenever a write
// blocks (the reader has not caught up) returns WAIT on a waitable set
// holding the writable end; the callback takes the write's progress (a
// reader may take part of a chunk) and writes on. When everything is
// written, or the reader is gone, it drops the writable end and exits.
#include <stdlib.h>

#include "boundary.h"

// ---- Canonical built-ins (wit-component's names) ----

#define EXPORT_INTRINSIC(name) __attribute__((__import_module__("[export]$root"), __import_name__(name)))
#define ROOT_INTRINSIC(name) __attribute__((__import_module__("$root"), __import_name__(name)))

// The stream built-ins of export `func` (its signature's first stream
// type), declared as prefix_stream_new, _write and _drop_writable.
#define STREAM_INTRINSICS(prefix, func)                                                                   \
  EXPORT_INTRINSIC("[stream-new-0]" func) extern int64_t prefix##_stream_new(void);                       \
  EXPORT_INTRINSIC("[async-lower][stream-write-0]" func)                                                  \
  extern uint32_t prefix##_stream_write(uint32_t end, const void *ptr, size_t len);                       \
  EXPORT_INTRINSIC("[stream-drop-writable-0]" func) extern void prefix##_stream_drop_writable(uint32_t end);

STREAM_INTRINSICS(ops, "take-stream")
STREAM_INTRINSICS(bytes, "take-byte-stream")
EXPORT_INTRINSIC("[task-return]take-stream") extern void take_stream_return(uint32_t readable);
EXPORT_INTRINSIC("[task-return]build-stream") extern void build_stream_return(uint32_t readable);
EXPORT_INTRINSIC("[task-return]take-byte-stream") extern void take_byte_stream_return(uint32_t readable);
EXPORT_INTRINSIC("[task-return]build-byte-stream") extern void build_byte_stream_return(uint32_t readable);

ROOT_INTRINSIC("[waitable-set-new]") extern uint32_t waitable_set_new(void);
ROOT_INTRINSIC("[waitable-set-drop]") extern void waitable_set_drop(uint32_t set);
ROOT_INTRINSIC("[waitable-join]") extern void waitable_join(uint32_t waitable, uint32_t set);
ROOT_INTRINSIC("[context-get-0]") extern void *context_get(void);
ROOT_INTRINSIC("[context-set-0]") extern void context_set(void *task);

#define BLOCKED 0xffffffffu
#define COPY_DROPPED 1
#define EVENT_STREAM_WRITE 3
#define CALLBACK_EXIT 0
#define CALLBACK_WAIT 2

// ---- One stream task ----

typedef struct stream_task_t {
  bool bytes;              // stream<u8> of frames, or stream<operation>
  uint32_t writer, set;
  const uint8_t *base;     // the elements
  size_t elem_size, total, done;
  size_t chunk;            // operations per write
  const size_t *frame_ends;  // bytes: a write ends at a frame's end
  size_t frame;            // the next frame to end
  const void *owned;       // a batch built for this task, freed at its end
} stream_task_t;

// Tasks come from a small static pool: a stream costs no guest malloc (an
// interpreted allocator would be most of a short stream's cost).
#define MAX_STREAMS 8
static stream_task_t tasks[MAX_STREAMS];
static bool task_used[MAX_STREAMS];

static size_t chunk_ops;               // set-chunk
static boundary_frames_t chunked;      // the prepared batch in frames of chunk_ops
static bool chunked_ready;

void boundary_streams_forget(void) {
  if (chunked_ready) boundary_batch_free(chunked.bytes.ptr);
  chunked_ready = false;
}

__attribute__((__export_name__("set-chunk"))) void __wasm_export_set_chunk(int32_t operations) {
  chunk_ops = (uint32_t)operations;
  boundary_streams_forget();
}

static uint32_t write_some(stream_task_t *t) {
  size_t len;
  if (t->bytes) {
    while (t->frame_ends[t->frame] <= t->done) t->frame++;
    len = t->frame_ends[t->frame] - t->done;
  } else {
    len = t->total - t->done;
    if (t->chunk && len > t->chunk) len = t->chunk;
  }
  const uint8_t *at = t->base + t->done * t->elem_size;
  return t->bytes ? bytes_stream_write(t->writer, at, len) : ops_stream_write(t->writer, at, len);
}

static int32_t finish(stream_task_t *t) {
  if (t->bytes)
    bytes_stream_drop_writable(t->writer);
  else
    ops_stream_drop_writable(t->writer);
  waitable_set_drop(t->set);
  boundary_batch_free(t->owned);
  task_used[t - tasks] = false;
  return CALLBACK_EXIT;
}

// Takes a write's result and writes on, until a write blocks (WAIT), or
// everything is written or the reader is gone (EXIT).
static int32_t pump(stream_task_t *t, uint32_t result) {
  for (;;) {
    if (result == BLOCKED) return CALLBACK_WAIT | (int32_t)(t->set << 4);
    t->done += result >> 4;
    if ((result & 0xf) == COPY_DROPPED || t->done >= t->total) return finish(t);
    result = write_some(t);
  }
}

static int32_t start(stream_task_t *t, int64_t ends, void (*return_readable)(uint32_t)) {
  t->writer = (uint32_t)((uint64_t)ends >> 32);
  return_readable((uint32_t)ends);
  t->set = waitable_set_new();
  waitable_join(t->writer, t->set);
  context_set(t);
  if (t->total == 0) return finish(t);
  return pump(t, write_some(t));
}

static stream_task_t *new_task(void) {
  for (size_t i = 0; i < MAX_STREAMS; i++)
    if (!task_used[i]) {
      task_used[i] = true;
      tasks[i] = (stream_task_t){.chunk = chunk_ops};
      return &tasks[i];
    }
  abort();  // more streams at once than the benchmark ever opens
}

static int32_t start_ops(boundary_list_operation_t batch, const void *owned, void (*return_readable)(uint32_t)) {
  stream_task_t *t = new_task();
  t->base = (const uint8_t *)batch.ptr;
  t->elem_size = sizeof(boundary_operation_t);
  t->total = batch.len;
  t->owned = owned;
  return start(t, ops_stream_new(), return_readable);
}

static int32_t start_bytes(boundary_frames_t frames, const void *owned, void (*return_readable)(uint32_t)) {
  stream_task_t *t = new_task();
  t->bytes = true;
  t->base = frames.bytes.ptr;
  t->elem_size = 1;
  t->total = frames.bytes.len;
  t->frame_ends = frames.ends;
  t->owned = owned;
  return start(t, bytes_stream_new(), return_readable);
}

static int32_t on_event(int32_t event, int32_t index, int32_t payload) {
  stream_task_t *t = context_get();
  if (event != EVENT_STREAM_WRITE || (uint32_t)index != t->writer) abort();
  return pump(t, (uint32_t)payload);
}

// ---- The exports ----

// An export's callback: the write it waited for, then on.
#define CALLBACK(func, name)                                                              \
  __attribute__((__export_name__("[callback][async-lift]" func))) int32_t name(int32_t event, int32_t index, \
                                                                              int32_t payload) {          \
    return on_event(event, index, payload);                                               \
  }

__attribute__((__export_name__("[async-lift]take-stream"))) int32_t __wasm_export_take_stream(void) {
  boundary_list_operation_t batch;
  boundary_take_typed(&batch);
  return start_ops(batch, NULL, take_stream_return);
}
CALLBACK("take-stream", __wasm_export_take_stream_cb)

__attribute__((__export_name__("[async-lift]take-byte-stream"))) int32_t __wasm_export_take_byte_stream(void) {
  if (!chunked_ready) {
    boundary_list_operation_t batch;
    boundary_take_typed(&batch);
    boundary_encode_frames(batch, chunk_ops, &chunked);
    chunked_ready = true;
  }
  return start_bytes(chunked, NULL, take_byte_stream_return);
}
CALLBACK("take-byte-stream", __wasm_export_take_byte_stream_cb)

__attribute__((__export_name__("[async-lift]build-stream"))) int32_t __wasm_export_build_stream(int32_t rows) {
  boundary_list_operation_t batch;
  boundary_build_typed((uint32_t)rows, &batch);
  return start_ops(batch, batch.ptr, build_stream_return);
}
CALLBACK("build-stream", __wasm_export_build_stream_cb)

__attribute__((__export_name__("[async-lift]build-byte-stream"))) int32_t __wasm_export_build_byte_stream(int32_t rows) {
  boundary_list_operation_t batch;
  boundary_build_typed((uint32_t)rows, &batch);
  boundary_frames_t frames;
  boundary_encode_frames(batch, chunk_ops, &frames);
  boundary_batch_free(batch.ptr);
  return start_bytes(frames, frames.bytes.ptr, build_byte_stream_return);
}
CALLBACK("build-byte-stream", __wasm_export_build_byte_stream_cb)
