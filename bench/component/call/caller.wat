;; The caller of the call benchmark: `run(n)` calls the imported `id` n times
;; (synchronous lower of a synchronous lift in another component).
(component
  (import "cmhost:bench/callee" (instance $callee
    (export "id" (func (param "x" u32) (result u32)))))
  (alias export $callee "id" (func $id))
  (core func $id-lowered (canon lower (func $id)))
  (core module $m
    (import "" "id" (func $id (param i32) (result i32)))
    (func (export "run") (param $n i32) (result i32)
      (local $i i32) (local $sum i32)
      (block $done
        (loop $next
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (local.set $sum (i32.add (local.get $sum) (call $id (local.get $i))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next)))
      (local.get $sum)))
  (core instance $i (instantiate $m (with "" (instance (export "id" (func $id-lowered))))))
  (func (export "run") (param "n" u32) (result u32) (canon lift (core func $i "run")))
)
