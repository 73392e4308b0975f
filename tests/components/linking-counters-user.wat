;; Linker::define_instance tests: makes a counter with `a` and hands it to
;; `b`, whose `take` must take `a`'s very resource type.
(component
  (import "a" (instance $a
    (export "counter" (type (sub resource)))
    (export "make" (func (param "v" u32) (result (own 0))))))
  (alias export $a "counter" (type $counter))
  (import "b" (instance $b
    (alias outer 1 $counter (type $c))
    (export "take" (func (param "c" (own $c)) (result u32)))))
  (core func $make (canon lower (func $a "make")))
  (core func $take (canon lower (func $b "take")))
  (core module $M
    (import "a" "make" (func $make (param i32) (result i32)))
    (import "b" "take" (func $take (param i32) (result i32)))
    (func (export "round") (param i32) (result i32) (call $take (call $make (local.get 0)))))
  (core instance $m (instantiate $M
    (with "a" (instance (export "make" (func $make))))
    (with "b" (instance (export "take" (func $take))))))
  (func (export "round") (param "v" u32) (result u32) (canon lift (core func $m "round")))
)
