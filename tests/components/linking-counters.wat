;; Linker::define_instance tests: a resource exported under an ascribed
;; (sub resource) type, so its exported identity is not the definition's.
;; Each instance has a `counter` of its own.
(component
  (type $r (resource (rep i32)))
  (core func $new (canon resource.new $r))
  (core func $rep (canon resource.rep $r))
  (core func $drop (canon resource.drop $r))
  (core module $M
    (import "r" "new" (func $new (param i32) (result i32)))
    (import "r" "rep" (func $rep (param i32) (result i32)))
    (import "r" "drop" (func $drop (param i32)))
    (func (export "make") (param i32) (result i32) (call $new (local.get 0)))
    (func (export "take") (param i32) (result i32) (local $v i32)
      (local.set $v (call $rep (local.get 0)))
      (call $drop (local.get 0))
      (local.get $v)))
  (core instance $m (instantiate $M
    (with "r" (instance (export "new" (func $new)) (export "rep" (func $rep)) (export "drop" (func $drop))))))
  (export $c "counter" (type $r) (type (sub resource)))
  (func (export "make") (param "v" u32) (result (own $c)) (canon lift (core func $m "make")))
  (func (export "take") (param "c" (own $c)) (result u32) (canon lift (core func $m "take")))
)
