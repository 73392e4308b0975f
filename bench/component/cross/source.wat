;; The caller of the cross-component benchmark: keeps a table of 10 000
;; strings (8 to 31 bytes, slices of one text) and passes the first n of
;; them to the imported `take`.
(component
  (import "cmhost:bench/sink" (instance $sink
    (export "take" (func (param "l" (list string)) (result u32)))))
  (alias export $sink "take" (func $take))
  (core module $mem (memory (export "mem") 2))
  (core instance $mem (instantiate $mem))
  (core func $take-lowered (canon lower (func $take) (memory (core memory $mem "mem"))))
  (core module $m
    (import "" "mem" (memory 2))
    (import "" "take" (func $take (param i32 i32) (result i32)))
    ;; The text the strings are cut from, at 0.
    (data (i32.const 0) "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs!")
    ;; The table of (ptr, len) pairs starts at 1024.
    (func $init
      (local $i i32)
      (loop $next
        (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 3)))
                   (i32.rem_u (i32.mul (local.get $i) (i32.const 7)) (i32.const 48)))
        (i32.store offset=4 (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 3)))
                   (i32.add (i32.const 8) (i32.rem_u (local.get $i) (i32.const 24))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $i) (i32.const 10000)))))
    (start $init)
    (func (export "run") (param $n i32) (result i32)
      (call $take (i32.const 1024) (local.get $n))))
  (core instance $i (instantiate $m (with "" (instance (export "mem" (memory $mem "mem")) (export "take" (func $take-lowered))))))
  (func (export "run") (param "n" u32) (result u32) (canon lift (core func $i "run")))
)
