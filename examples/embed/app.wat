;; The component of examples/embed: `sum-ids(n)` asks the host for `n` ids
;; through the import `next-id` and returns their sum.
(component
  (import "next-id" (func $next-id (result u32)))
  (core func $next-id-lowered (canon lower (func $next-id)))
  (core module $m
    (import "host" "next-id" (func $next-id (result i32)))
    (func (export "sum-ids") (param $n i32) (result i32)
      (local $sum i32)
      (block $done
        (loop $more
          (br_if $done (i32.eqz (local.get $n)))
          (local.set $sum (i32.add (local.get $sum) (call $next-id)))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br $more)))
      (local.get $sum)))
  (core instance $i (instantiate $m (with "host" (instance (export "next-id" (func $next-id-lowered))))))
  (func (export "sum-ids") (param "n" u32) (result u32) (canon lift (core func $i "sum-ids")))
)
