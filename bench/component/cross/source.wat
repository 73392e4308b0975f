;; The caller of the cross-component benchmark: keeps two tables of 10 000
;; strings, one of 16-byte strings and one of 1 KiB strings (slices of one
;; 4 KiB text), and passes the first n of either to the imported `take`.
(component
  (import "cmhost:bench/sink" (instance $sink
    (export "take" (func (param "l" (list string)) (result u32)))))
  (alias export $sink "take" (func $take))
  (core module $mem (memory (export "mem") 8))
  (core instance $mem (instantiate $mem))
  (core func $take-lowered (canon lower (func $take) (memory (core memory $mem "mem"))))
  (core module $m
    (import "" "mem" (memory 8))
    (import "" "take" (func $take (param i32 i32) (result i32)))
    ;; The text at 0: 4 KiB of 'a' to 'z'. The tables of (ptr, len) pairs at
    ;; 8192 (16-byte strings) and 8192 + 80000 (1 KiB strings).
    (func $init
      (local $i i32)
      (loop $text
        (i32.store8 (local.get $i) (i32.add (i32.const 97) (i32.rem_u (local.get $i) (i32.const 26))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $text (i32.lt_u (local.get $i) (i32.const 4096))))
      (local.set $i (i32.const 0))
      (loop $next
        (i32.store (i32.add (i32.const 8192) (i32.shl (local.get $i) (i32.const 3)))
                   (i32.rem_u (i32.mul (local.get $i) (i32.const 7)) (i32.const 3000)))
        (i32.store offset=4 (i32.add (i32.const 8192) (i32.shl (local.get $i) (i32.const 3))) (i32.const 16))
        (i32.store (i32.add (i32.const 88192) (i32.shl (local.get $i) (i32.const 3)))
                   (i32.rem_u (i32.mul (local.get $i) (i32.const 7)) (i32.const 3000)))
        (i32.store offset=4 (i32.add (i32.const 88192) (i32.shl (local.get $i) (i32.const 3))) (i32.const 1024))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $i) (i32.const 10000)))))
    (start $init)
    (func (export "run") (param $n i32) (param $long i32) (result i32)
      (call $take (select (i32.const 88192) (i32.const 8192) (local.get $long)) (local.get $n))))
  (core instance $i (instantiate $m (with "" (instance (export "mem" (memory $mem "mem")) (export "take" (func $take-lowered))))))
  (func (export "run") (param "n" u32) (param "long" bool) (result u32) (canon lift (core func $i "run")))
)
