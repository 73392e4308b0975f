;; WASI 0.3's host streams end to end (tests/wasi/p3_streams_test.mjs runs
;; each export through `cmhost run --invoke`): stdin read through
;; `read-via-stream`, stdout written through `write-via-stream` of a stream
;; the guest makes, their futures, backpressure on a slow reader, a read
;; cancelled while it waits, a stream dropped mid-way, a closed pipe, a
;; path confined beneath a 0.3 preopen, and the spec's traps for misuse.
;; Every export is a stackful async task (lifted `async`, no callback) that
;; waits on a waitable set of its own whenever a copy blocks; something
;; unexpected is `unreachable`. The async WASI function (`open-at`) is
;; lowered synchronously: the task blocks until the host completes it.
(component
  ;; The imports, declared as wasi:cli@0.3.0 and wasi:filesystem@0.3.0
  ;; declare them (only the functions used here).
  (import "wasi:cli/stdin@0.3.0" (instance $stdin
    (type $ec (enum "io" "illegal-byte-sequence" "pipe"))
    (export "error-code" (type $ec' (eq $ec)))
    (export "read-via-stream" (func (result (tuple (stream u8) (future (result (error $ec')))))))))
  (import "wasi:cli/stdout@0.3.0" (instance $stdout
    (type $ec (enum "io" "illegal-byte-sequence" "pipe"))
    (export "error-code" (type $ec' (eq $ec)))
    (export "write-via-stream" (func (param "data" (stream u8)) (result (future (result (error $ec'))))))))
  (import "wasi:cli/exit@0.3.0" (instance $exit
    (export "exit-with-code" (func (param "status-code" u8)))))
  (import "wasi:filesystem/types@0.3.0" (instance $fs
    (export "descriptor" (type $desc (sub resource)))
    (type $ec (variant
      (case "access") (case "already") (case "bad-descriptor") (case "busy") (case "deadlock")
      (case "quota") (case "exist") (case "file-too-large") (case "illegal-byte-sequence")
      (case "in-progress") (case "interrupted") (case "invalid") (case "io") (case "is-directory")
      (case "loop") (case "too-many-links") (case "message-size") (case "name-too-long")
      (case "no-device") (case "no-entry") (case "no-lock") (case "insufficient-memory")
      (case "insufficient-space") (case "not-directory") (case "not-empty") (case "not-recoverable")
      (case "unsupported") (case "no-tty") (case "no-such-device") (case "overflow")
      (case "not-permitted") (case "pipe") (case "read-only") (case "invalid-seek")
      (case "text-file-busy") (case "cross-device") (case "other" (option string))))
    (export "error-code" (type $ec' (eq $ec)))
    (type $pf (flags "symlink-follow"))
    (export "path-flags" (type $pf' (eq $pf)))
    (type $of (flags "create" "directory" "exclusive" "truncate"))
    (export "open-flags" (type $of' (eq $of)))
    (type $df (flags "read" "write" "file-integrity-sync" "data-integrity-sync" "requested-write-sync"
                     "mutate-directory"))
    (export "descriptor-flags" (type $df' (eq $df)))
    (export "[method]descriptor.open-at" (func async
      (param "self" (borrow $desc)) (param "path-flags" $pf') (param "path" string)
      (param "open-flags" $of') (param "flags" $df')
      (result (result (own $desc) (error $ec')))))))
  (alias export $fs "descriptor" (type $descriptor))
  (import "wasi:filesystem/preopens@0.3.0" (instance $preopens
    (alias outer 1 $descriptor (type $desc))
    (export "descriptor" (type $desc' (eq $desc)))
    (export "get-directories" (func (result (list (tuple (own $desc') string)))))))

  (alias export $stdin "error-code" (type $EC))
  (type $SB (stream u8))
  (type $FR (future (result (error $EC))))

  ;; Memory and a bump allocator (for get-directories' list, open-at's
  ;; error, and open-path's argument), defined first: the lowers need them.
  (core module $Mem
    (memory (export "mem") 16)
    (global $next (mut i32) (i32.const 65536))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $r i32)
      (if (local.get 0) (then unreachable))  ;; never grows an allocation
      (local.set $r (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get 2))))
      (global.set $next (i32.add (local.get $r) (local.get 3)))
      (if (i32.gt_u (global.get $next) (i32.const 196608)) (then unreachable))
      (local.get $r)))
  (core instance $mem (instantiate $Mem))
  (alias core export $mem "mem" (core memory $memory))
  (alias core export $mem "realloc" (core func $realloc))

  (alias export $stdin "read-via-stream" (func $read-via-stream))
  (alias export $stdout "write-via-stream" (func $write-via-stream))
  (alias export $exit "exit-with-code" (func $exit-with-code))
  (alias export $fs "[method]descriptor.open-at" (func $open-at))
  (alias export $preopens "get-directories" (func $get-directories))
  (core func $read-via-stream' (canon lower (func $read-via-stream) (memory $memory)))
  (core func $write-via-stream' (canon lower (func $write-via-stream)))
  (core func $exit-with-code' (canon lower (func $exit-with-code)))
  (core func $open-at' (canon lower (func $open-at) (memory $memory) (realloc $realloc)))
  (core func $get-directories' (canon lower (func $get-directories) (memory $memory) (realloc $realloc)))
  (core func $drop-descriptor (canon resource.drop $descriptor))
  (core func $stream.new (canon stream.new $SB))
  (core func $stream.read (canon stream.read $SB async (memory $memory)))
  (core func $stream.write (canon stream.write $SB async (memory $memory)))
  (core func $stream.cancel-read (canon stream.cancel-read $SB async))
  (core func $stream.drop-readable (canon stream.drop-readable $SB))
  (core func $stream.drop-writable (canon stream.drop-writable $SB))
  (core func $future.read (canon future.read $FR async (memory $memory)))
  (core func $future.drop-readable (canon future.drop-readable $FR))
  (core func $task.return-u32 (canon task.return (result u32)))
  (core func $task.return (canon task.return))
  (core func $waitable-set.new (canon waitable-set.new))
  (core func $waitable-set.wait (canon waitable-set.wait (memory $memory)))
  (core func $waitable-set.drop (canon waitable-set.drop))
  (core func $waitable.join (canon waitable.join))

  ;; Memory map: 32..39 the event of a wait; 64..71 a lowered result (the
  ;; stdin pair, get-directories' list); 96..97 a future's value
  ;; (result<_, error-code>); 128..147 open-at's result; 65536..196607 the
  ;; allocator's; 262144.. the data buffer.
  (core module $M
    (import "" "mem" (memory 16))
    (import "" "read-via-stream" (func $read-via-stream (param i32)))
    (import "" "write-via-stream" (func $write-via-stream (param i32) (result i32)))
    (import "" "exit-with-code" (func $exit-with-code (param i32)))
    (import "" "open-at" (func $open-at (param i32 i32 i32 i32 i32 i32 i32)))
    (import "" "get-directories" (func $get-directories (param i32)))
    (import "" "drop-descriptor" (func $drop-descriptor (param i32)))
    (import "" "stream.new" (func $stream.new (result i64)))
    (import "" "stream.read" (func $stream.read (param i32 i32 i32) (result i32)))
    (import "" "stream.write" (func $stream.write (param i32 i32 i32) (result i32)))
    (import "" "stream.cancel-read" (func $stream.cancel-read (param i32) (result i32)))
    (import "" "stream.drop-readable" (func $stream.drop-readable (param i32)))
    (import "" "stream.drop-writable" (func $stream.drop-writable (param i32)))
    (import "" "future.read" (func $future.read (param i32 i32) (result i32)))
    (import "" "future.drop-readable" (func $future.drop-readable (param i32)))
    (import "" "task.return-u32" (func $task.return-u32 (param i32)))
    (import "" "task.return" (func $task.return))
    (import "" "waitable-set.new" (func $waitable-set.new (result i32)))
    (import "" "waitable-set.wait" (func $waitable-set.wait (param i32 i32) (result i32)))
    (import "" "waitable-set.drop" (func $waitable-set.drop (param i32)))
    (import "" "waitable.join" (func $waitable.join (param i32 i32)))

    (global $in (mut i32) (i32.const 0))       ;; stdin's stream (readable end)
    (global $in-fut (mut i32) (i32.const 0))   ;; stdin's future
    (global $out-fut (mut i32) (i32.const 0))  ;; stdout's future

    ;; Copy results and events (CanonicalABI.md).
    (global $BLOCKED i32 (i32.const -1))
    (global $COMPLETED i32 (i32.const 0))
    (global $DROPPED i32 (i32.const 1))
    (global $CANCELLED i32 (i32.const 2))
    (global $STREAM_READ i32 (i32.const 2))
    (global $STREAM_WRITE i32 (i32.const 3))
    (global $FUTURE_READ i32 (i32.const 4))
    (global $BUF i32 (i32.const 262144))
    ;; The largest write of write-pattern; the buffer holds CHUNK + 251 bytes.
    (global $CHUNK i32 (i32.const 262144))

    ;; A copy's result: when it blocked, waits for the end's event (of
    ;; `code`) and returns its payload.
    (func $settle (param $end i32) (param $ret i32) (param $code i32) (result i32)
      (local $ws i32)
      (if (i32.ne (local.get $ret) (global.get $BLOCKED)) (then (return (local.get $ret))))
      (local.set $ws (call $waitable-set.new))
      (call $waitable.join (local.get $end) (local.get $ws))
      (if (i32.ne (call $waitable-set.wait (local.get $ws) (i32.const 32)) (local.get $code)) (then unreachable))
      (if (i32.ne (i32.load (i32.const 32)) (local.get $end)) (then unreachable))
      (call $waitable.join (local.get $end) (i32.const 0))
      (call $waitable-set.drop (local.get $ws))
      (i32.load (i32.const 36)))
    (func $status (param $ret i32) (result i32) (i32.and (local.get $ret) (i32.const 0xf)))
    (func $count (param $ret i32) (result i32) (i32.shr_u (local.get $ret) (i32.const 4)))

    ;; stdin's stream and future, in $in and $in-fut.
    (func $open-stdin
      (call $read-via-stream (i32.const 64))
      (global.set $in (i32.load (i32.const 64)))
      (global.set $in-fut (i32.load (i32.const 68))))
    ;; A new stream<u8> whose readable end goes to stdout; returns the
    ;; writable end, stdout's future in $out-fut.
    (func $open-stdout (result i32)
      (local $ends i64)
      (local.set $ends (call $stream.new))
      (global.set $out-fut (call $write-via-stream (i32.wrap_i64 (local.get $ends))))
      (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
    ;; One read of up to `max` bytes into `ptr`, waited for; the raw result.
    (func $read (param $s i32) (param $ptr i32) (param $max i32) (result i32)
      (call $settle (local.get $s) (call $stream.read (local.get $s) (local.get $ptr) (local.get $max))
                    (global.get $STREAM_READ)))
    ;; Writes `len` bytes from `ptr`, at most `chunk` a write, taking
    ;; partial progress; returns how many the reader took before it was
    ;; gone (DROPPED), or `len`.
    (func $write-all (param $w i32) (param $ptr i32) (param $len i32) (param $chunk i32) (result i32)
      (local $done i32) (local $n i32) (local $ret i32)
      (block $out (loop $next
        (br_if $out (i32.ge_u (local.get $done) (local.get $len)))
        (local.set $n (i32.sub (local.get $len) (local.get $done)))
        (if (i32.gt_u (local.get $n) (local.get $chunk)) (then (local.set $n (local.get $chunk))))
        (local.set $ret (call $settle (local.get $w)
          (call $stream.write (local.get $w) (i32.add (local.get $ptr) (local.get $done)) (local.get $n))
          (global.get $STREAM_WRITE)))
        (local.set $done (i32.add (local.get $done) (call $count (local.get $ret))))
        (br_if $out (i32.eq (call $status (local.get $ret)) (global.get $DROPPED)))
        (if (i32.ne (call $status (local.get $ret)) (global.get $COMPLETED)) (then unreachable))
        (br $next)))
      (local.get $done))
    ;; Reads future<result<_, error-code>> `f` to completion and drops it:
    ;; 0 for ok, 16 * 1 + the error-code's index for err.
    (func $await-future (param $f i32) (result i32)
      (i32.store16 (i32.const 96) (i32.const 0xffff))
      (if (i32.ne (call $settle (local.get $f) (call $future.read (local.get $f) (i32.const 96))
                                (global.get $FUTURE_READ))
                  (global.get $COMPLETED))
        (then unreachable))
      (call $future.drop-readable (local.get $f))
      (if (result i32) (i32.eqz (i32.load8_u (i32.const 96)))
        (then (i32.const 0))
        (else (i32.add (i32.const 16) (i32.load8_u (i32.const 97))))))

    ;; 1. echo-stdin: copies stdin to stdout, 1000 bytes a read, until
    ;; stdin's stream reports DROPPED (end of input); drops both streams,
    ;; checks both futures are ok; returns the number of bytes.
    (func (export "echo-stdin")
      (local $w i32) (local $ret i32) (local $n i32) (local $total i32)
      (call $open-stdin)
      (local.set $w (call $open-stdout))
      (block $end (loop $next
        (local.set $ret (call $read (global.get $in) (global.get $BUF) (i32.const 1000)))
        (local.set $n (call $count (local.get $ret)))
        (if (i32.ne (call $write-all (local.get $w) (global.get $BUF) (local.get $n) (local.get $n)) (local.get $n))
          (then unreachable))
        (local.set $total (i32.add (local.get $total) (local.get $n)))
        (br_if $end (i32.eq (call $status (local.get $ret)) (global.get $DROPPED)))
        (if (i32.ne (call $status (local.get $ret)) (global.get $COMPLETED)) (then unreachable))
        (br $next)))
      (call $stream.drop-readable (global.get $in))
      (call $stream.drop-writable (local.get $w))
      (if (call $await-future (global.get $in-fut)) (then unreachable))
      (if (call $await-future (global.get $out-fut)) (then unreachable))
      (call $task.return-u32 (local.get $total)))

    ;; 2. write-pattern: n bytes (byte i = i % 251) to stdout in writes of
    ;; up to 256 KiB, each taking what the host took (a slow reader holds
    ;; them back); then stdout's future must be ok; returns n.
    (func (export "write-pattern") (param $n i32)
      (local $w i32) (local $i i32) (local $len i32) (local $ret i32)
      (local.set $i (i32.const 0))
      (block $filled (loop $fill
        (br_if $filled (i32.ge_u (local.get $i) (i32.add (global.get $CHUNK) (i32.const 251))))
        (i32.store8 (i32.add (global.get $BUF) (local.get $i)) (i32.rem_u (local.get $i) (i32.const 251)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $fill)))
      (local.set $w (call $open-stdout))
      (local.set $i (i32.const 0))
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $len (i32.sub (local.get $n) (local.get $i)))
        (if (i32.gt_u (local.get $len) (global.get $CHUNK)) (then (local.set $len (global.get $CHUNK))))
        ;; Byte i is at BUF + i % 251.
        (local.set $ret (call $settle (local.get $w)
          (call $stream.write (local.get $w)
                              (i32.add (global.get $BUF) (i32.rem_u (local.get $i) (i32.const 251)))
                              (local.get $len))
          (global.get $STREAM_WRITE)))
        (if (i32.ne (call $status (local.get $ret)) (global.get $COMPLETED)) (then unreachable))
        (local.set $i (i32.add (local.get $i) (call $count (local.get $ret))))
        (br $next)))
      (call $stream.drop-writable (local.get $w))
      (if (call $await-future (global.get $out-fut)) (then unreachable))
      (call $task.return-u32 (local.get $n)))

    ;; 3. cancel-stdin-read: a read of stdin while no input is there must
    ;; block; cancelling it (async) ends it CANCELLED with nothing read
    ;; (waiting for that if the cancel blocks); the stream is dropped and
    ;; stdin's future is then ok. Returns 1.
    (func (export "cancel-stdin-read")
      (call $open-stdin)
      (if (i32.ne (call $stream.read (global.get $in) (global.get $BUF) (i32.const 100)) (global.get $BLOCKED))
        (then unreachable))
      (if (i32.ne (call $settle (global.get $in) (call $stream.cancel-read (global.get $in)) (global.get $STREAM_READ))
                  (global.get $CANCELLED (; and 0 elements ;)))
        (then unreachable))
      (call $stream.drop-readable (global.get $in))
      (if (call $await-future (global.get $in-fut)) (then unreachable))
      (call $task.return-u32 (i32.const 1)))

    ;; 4. drop-stdin-early: reads one chunk of stdin (some bytes, the
    ;; stream still open), drops the stream while input keeps coming;
    ;; stdin's future must be ok. Returns 1.
    (func (export "drop-stdin-early")
      (local $ret i32)
      (call $open-stdin)
      (local.set $ret (call $read (global.get $in) (global.get $BUF) (i32.const 4096)))
      (if (i32.ne (call $status (local.get $ret)) (global.get $COMPLETED)) (then unreachable))
      (if (i32.eqz (call $count (local.get $ret))) (then unreachable))
      (call $stream.drop-readable (global.get $in))
      (if (call $await-future (global.get $in-fut)) (then unreachable))
      (call $task.return-u32 (i32.const 1)))

    ;; 5. write-until-closed: writes 64 KiB at a time to stdout until a
    ;; write reports DROPPED (the pipe's reader is gone), then exits with
    ;; 16 * discriminant + error-code of stdout's future: err(pipe) is 18.
    (func (export "write-until-closed")
      (local $w i32) (local $ret i32) (local $code i32)
      (memory.fill (global.get $BUF) (i32.const 0x79 (; y ;)) (i32.const 65536))
      (local.set $w (call $open-stdout))
      (block $gone (loop $next
        (local.set $ret (call $settle (local.get $w)
          (call $stream.write (local.get $w) (global.get $BUF) (i32.const 65536))
          (global.get $STREAM_WRITE)))
        (br_if $gone (i32.eq (call $status (local.get $ret)) (global.get $DROPPED)))
        (if (i32.ne (call $status (local.get $ret)) (global.get $COMPLETED)) (then unreachable))
        (br $next)))
      (call $stream.drop-writable (local.get $w))
      (local.set $code (call $await-future (global.get $out-fut)))
      (call $exit-with-code (local.get $code))
      (call $task.return-u32 (i32.add (i32.const 1000) (local.get $code))))

    ;; 6. open-path: open-at(path, read) beneath the first preopen: 0 when
    ;; it opens (the descriptor is dropped), else 1 + the error-code's case.
    (func (export "open-path") (param $path i32) (param $len i32)
      (call $get-directories (i32.const 64))
      (if (i32.eqz (i32.load (i32.const 68))) (then unreachable))  ;; no preopen
      (call $open-at (i32.load (i32.load (i32.const 64)))  ;; the first tuple's descriptor
                     (i32.const 0 (; path-flags: none ;)) (local.get $path) (local.get $len)
                     (i32.const 0 (; open-flags: none ;)) (i32.const 1 (; descriptor-flags: read ;))
                     (i32.const 128))
      (if (i32.eqz (i32.load8_u (i32.const 128)))
        (then
          (call $drop-descriptor (i32.load (i32.const 132)))
          (call $task.return-u32 (i32.const 0)))
        (else
          (call $task.return-u32 (i32.add (i32.const 1) (i32.load8_u (i32.const 132)))))))

    ;; 7a. read-after-end: reads stdin until DROPPED, then reads again:
    ;; the spec traps (cannot read after being notified of the drop).
    (func (export "read-after-end")
      (call $open-stdin)
      (block $end (loop $next
        (br_if $end (i32.eq (call $status (call $read (global.get $in) (global.get $BUF) (i32.const 4096)))
                            (global.get $DROPPED)))
        (br $next)))
      (drop (call $stream.read (global.get $in) (global.get $BUF) (i32.const 4096)))
      (call $task.return))
    ;; 7b. write-after-drop: drops the writable end of stdout's stream,
    ;; then writes through that handle: the handle is gone, a trap.
    (func (export "write-after-drop")
      (local $w i32)
      (local.set $w (call $open-stdout))
      (call $stream.drop-writable (local.get $w))
      (drop (call $stream.write (local.get $w) (global.get $BUF) (i32.const 1)))
      (call $task.return))
    ;; 7c. future-twice: ends stdout's stream, reads its future to
    ;; completion (ok), then reads it again: the spec traps.
    (func (export "future-twice")
      (call $stream.drop-writable (call $open-stdout))
      (if (i32.ne (call $settle (global.get $out-fut) (call $future.read (global.get $out-fut) (i32.const 96))
                                (global.get $FUTURE_READ))
                  (global.get $COMPLETED))
        (then unreachable))
      (drop (call $future.read (global.get $out-fut) (i32.const 96)))
      (call $task.return))
  )
  (core instance $m (instantiate $M (with "" (instance
    (export "mem" (memory $memory))
    (export "read-via-stream" (func $read-via-stream'))
    (export "write-via-stream" (func $write-via-stream'))
    (export "exit-with-code" (func $exit-with-code'))
    (export "open-at" (func $open-at'))
    (export "get-directories" (func $get-directories'))
    (export "drop-descriptor" (func $drop-descriptor))
    (export "stream.new" (func $stream.new))
    (export "stream.read" (func $stream.read))
    (export "stream.write" (func $stream.write))
    (export "stream.cancel-read" (func $stream.cancel-read))
    (export "stream.drop-readable" (func $stream.drop-readable))
    (export "stream.drop-writable" (func $stream.drop-writable))
    (export "future.read" (func $future.read))
    (export "future.drop-readable" (func $future.drop-readable))
    (export "task.return-u32" (func $task.return-u32))
    (export "task.return" (func $task.return))
    (export "waitable-set.new" (func $waitable-set.new))
    (export "waitable-set.wait" (func $waitable-set.wait))
    (export "waitable-set.drop" (func $waitable-set.drop))
    (export "waitable.join" (func $waitable.join))))))

  (func (export "echo-stdin") async (result u32) (canon lift (core func $m "echo-stdin") async))
  (func (export "write-pattern") async (param "n" u32) (result u32)
    (canon lift (core func $m "write-pattern") async))
  (func (export "cancel-stdin-read") async (result u32) (canon lift (core func $m "cancel-stdin-read") async))
  (func (export "drop-stdin-early") async (result u32) (canon lift (core func $m "drop-stdin-early") async))
  (func (export "write-until-closed") async (result u32) (canon lift (core func $m "write-until-closed") async))
  (func (export "open-path") async (param "path" string) (result u32)
    (canon lift (core func $m "open-path") async (memory $memory) (realloc $realloc)))
  (func (export "read-after-end") async (canon lift (core func $m "read-after-end") async))
  (func (export "write-after-drop") async (canon lift (core func $m "write-after-drop") async))
  (func (export "future-twice") async (canon lift (core func $m "future-twice") async))
)
