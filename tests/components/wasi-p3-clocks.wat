;; WASI 0.3's clocks and random through synchronous lowers: wait-for is an
;; async host function, which a synchronous lower waits for (the host
;; completes it from a timer of the store's event loop); the system clock's
;; instant comes back through memory.
(component
  (import "wasi:clocks/monotonic-clock@0.3.0" (instance $mono
    (export "now" (func (result u64)))
    (export "get-resolution" (func (result u64)))
    (export "wait-for" (func async (param "how-long" u64)))))
  (import "wasi:clocks/system-clock@0.3.0" (instance $system
    (type $instant (record (field "seconds" s64) (field "nanoseconds" u32)))
    (export "instant" (type $instant' (eq $instant)))
    (export "now" (func (result $instant')))))
  (import "wasi:random/random@0.3.0" (instance $random
    (export "get-random-u64" (func (result u64)))))
  (core module $mem (memory (export "memory") 1))
  (core instance $mem (instantiate $mem))
  (alias core export $mem "memory" (core memory $memory))
  (alias export $mono "now" (func $now))
  (alias export $mono "get-resolution" (func $resolution))
  (alias export $mono "wait-for" (func $wait-for))
  (alias export $system "now" (func $wall))
  (alias export $random "get-random-u64" (func $random-u64))
  (core func $now' (canon lower (func $now)))
  (core func $resolution' (canon lower (func $resolution)))
  (core func $wait-for' (canon lower (func $wait-for)))
  (core func $wall' (canon lower (func $wall) (memory $memory)))
  (core func $random-u64' (canon lower (func $random-u64)))
  (core module $m
    (import "" "memory" (memory 1))
    (import "" "now" (func $now (result i64)))
    (import "" "resolution" (func $resolution (result i64)))
    (import "" "wait-for" (func $wait-for (param i64)))
    (import "" "wall" (func $wall (param i32)))
    (import "" "random-u64" (func $random-u64 (result i64)))
    (func (export "resolution") (result i64) (call $resolution))
    ;; The monotonic time a wait of `ms` milliseconds took.
    (func (export "sleep-ms") (param $ms i32) (result i64)
      (local $start i64)
      (local.set $start (call $now))
      (call $wait-for (i64.mul (i64.extend_i32_u (local.get $ms)) (i64.const 1000000)))
      (i64.sub (call $now) (local.get $start)))
    (func (export "wall-seconds") (result i64)
      (call $wall (i32.const 64))
      (i64.load (i32.const 64)))
    (func (export "random-pair-differ") (result i32)
      (i64.ne (call $random-u64) (call $random-u64))))
  (core instance $i (instantiate $m (with "" (instance
    (export "memory" (memory $memory))
    (export "now" (func $now'))
    (export "resolution" (func $resolution'))
    (export "wait-for" (func $wait-for'))
    (export "wall" (func $wall'))
    (export "random-u64" (func $random-u64'))))))
  (func (export "resolution") (result u64) (canon lift (core func $i "resolution")))
  (func (export "sleep-ms") (param "ms" u32) (result u64) (canon lift (core func $i "sleep-ms")))
  (func (export "wall-seconds") (result s64) (canon lift (core func $i "wall-seconds")))
  (func (export "random-pair-differ") (result bool) (canon lift (core func $i "random-pair-differ")))
)
