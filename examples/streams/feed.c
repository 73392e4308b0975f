// The guest of examples/streams, in C with its canonical ABI glue written
// by hand (the callback form of async lift): each export returns its
// stream's readable end at once, then writes a chunk at a time, waiting
// whenever the host has not taken the last one yet.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// record reading { sensor: string, celsius: f64, at: u64 }, as the
// canonical ABI lays it out in a 32-bit memory.
typedef struct {
  const char *sensor;
  size_t sensor_len;
  double celsius;
  uint64_t at;
} reading_t;
_Static_assert(sizeof(reading_t) == 24 && _Alignof(reading_t) == 8, "reading layout");

#define IMPORT(module, name) __attribute__((__import_module__(module), __import_name__(name)))
IMPORT("[export]$root", "[stream-new-0]readings") extern int64_t readings_new(void);
IMPORT("[export]$root", "[async-lower][stream-write-0]readings") extern uint32_t readings_write(uint32_t, const void *, size_t);
IMPORT("[export]$root", "[stream-drop-writable-0]readings") extern void readings_drop(uint32_t);
IMPORT("[export]$root", "[task-return]readings") extern void readings_return(uint32_t);
IMPORT("[export]$root", "[stream-new-0]log") extern int64_t log_new(void);
IMPORT("[export]$root", "[async-lower][stream-write-0]log") extern uint32_t log_write(uint32_t, const void *, size_t);
IMPORT("[export]$root", "[stream-drop-writable-0]log") extern void log_drop(uint32_t);
IMPORT("[export]$root", "[task-return]log") extern void log_return(uint32_t);
IMPORT("$root", "[waitable-set-new]") extern uint32_t waitable_set_new(void);
IMPORT("$root", "[waitable-set-drop]") extern void waitable_set_drop(uint32_t);
IMPORT("$root", "[waitable-join]") extern void waitable_join(uint32_t, uint32_t);

#define BLOCKED 0xffffffffu
#define DROPPED 1
#define EXIT 0
#define WAIT 2
#define CHUNK 16

static const char *const SENSORS[] = {"attic", "cellar", "garden"};

// One stream at a time per export, which is all the example asks for.
static struct {
  uint32_t writer, set, count, done;
  reading_t chunk[CHUNK];
} readings;

static struct {
  uint32_t writer, set, lines, done;
  size_t line_len, line_done;  // the line being written
  char line[64];
} logger;

// A new stream: its readable end returned to the host, its writable end
// (returned) in a new waitable set (*set) to wait on.
static uint32_t open_stream(int64_t ends, void (*return_readable)(uint32_t), uint32_t *set) {
  const uint32_t writer = (uint32_t)((uint64_t)ends >> 32);
  return_readable((uint32_t)ends);
  *set = waitable_set_new();
  waitable_join(writer, *set);
  return writer;
}

static void fill_chunk(void) {
  for (uint32_t i = 0; i < CHUNK && readings.done + i < readings.count; i++) {
    const uint32_t n = readings.done + i;
    const char *sensor = SENSORS[n % 3];
    readings.chunk[i] = (reading_t){sensor, strlen(sensor), 15.0 + (n % 10) * 0.5 + (n % 3), 1000u * n};
  }
}

// Writes on from `result` (the last write's) until a write blocks (WAIT)
// or everything is written or the host is gone (EXIT).
static int32_t pump_readings(uint32_t result) {
  for (;;) {
    if (result == BLOCKED) return WAIT | (int32_t)(readings.set << 4);
    readings.done += result >> 4;
    if ((result & 0xf) == DROPPED || readings.done >= readings.count) {
      readings_drop(readings.writer);
      waitable_set_drop(readings.set);
      return EXIT;
    }
    // A host that took part of the chunk gets the rest first.
    const uint32_t taken = (readings.done % CHUNK);
    if (taken == 0) fill_chunk();
    uint32_t len = CHUNK - taken;
    if (len > readings.count - readings.done) len = readings.count - readings.done;
    result = readings_write(readings.writer, &readings.chunk[taken], len);
  }
}

__attribute__((__export_name__("[async-lift]readings"))) int32_t export_readings(int32_t count) {
  readings.count = (uint32_t)count;
  readings.done = 0;
  readings.writer = open_stream(readings_new(), readings_return, &readings.set);
  return pump_readings(0);
}

__attribute__((__export_name__("[callback][async-lift]readings"))) int32_t readings_callback(int32_t event, int32_t index,
                                                                                          int32_t payload) {
  (void)event, (void)index;
  return pump_readings((uint32_t)payload);
}

// "line N of M: all is well\n" (no stdio: the guest imports nothing from WASI).
static char *put_decimal(char *at, uint32_t v) {
  char digits[10];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n) *at++ = digits[--n];
  return at;
}
static size_t format_line(uint32_t n, uint32_t of) {
  char *at = logger.line;
  memcpy(at, "line ", 5), at += 5;
  at = put_decimal(at, n);
  memcpy(at, " of ", 4), at += 4;
  at = put_decimal(at, of);
  memcpy(at, ": all is well\n", 14), at += 14;
  return (size_t)(at - logger.line);
}

static int32_t pump_log(uint32_t result) {
  for (;;) {
    if (result == BLOCKED) return WAIT | (int32_t)(logger.set << 4);
    logger.line_done += result >> 4;
    if ((result & 0xf) == DROPPED) logger.done = logger.lines;
    if (logger.line_done >= logger.line_len) {  // the line is out: the next one
      if (logger.done >= logger.lines) {
        log_drop(logger.writer);
        waitable_set_drop(logger.set);
        return EXIT;
      }
      logger.line_len = format_line(logger.done + 1, logger.lines);
      logger.line_done = 0;
      logger.done++;
    }
    result = log_write(logger.writer, logger.line + logger.line_done, logger.line_len - logger.line_done);
  }
}

__attribute__((__export_name__("[async-lift]log"))) int32_t export_log(int32_t lines) {
  logger.lines = (uint32_t)lines;
  logger.done = 0;
  logger.line_len = logger.line_done = 0;
  logger.writer = open_stream(log_new(), log_return, &logger.set);
  return pump_log(0);
}

__attribute__((__export_name__("[callback][async-lift]log"))) int32_t log_callback(int32_t event, int32_t index,
                                                                                 int32_t payload) {
  (void)event, (void)index;
  return pump_log((uint32_t)payload);
}

// The host lowers nothing into this guest, but wit-component expects it.
__attribute__((__export_name__("cabi_realloc"))) void *cabi_realloc(void *ptr, size_t old_size, size_t align,
                                                                  size_t new_size) {
  (void)ptr, (void)old_size, (void)align, (void)new_size;
  __builtin_trap();
}
