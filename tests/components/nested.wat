;; Two nested components: one lifts `mul`, the other imports it, lowers it
;; into its own core module and exports `square`, re-exported at the root.
(component
  (component $callee
    (core module $m
      (func (export "mul") (param i32 i32) (result i32) (i32.mul (local.get 0) (local.get 1))))
    (core instance $i (instantiate $m))
    (func (export "mul") (param "a" u32) (param "b" u32) (result u32)
      (canon lift (core func $i "mul"))))
  (component $caller
    (import "mul" (func $mul (param "a" u32) (param "b" u32) (result u32)))
    (core func $mul_lowered (canon lower (func $mul)))
    (core module $m
      (import "" "mul" (func $mul (param i32 i32) (result i32)))
      (func (export "square") (param i32) (result i32) (call $mul (local.get 0) (local.get 0))))
    (core instance $args (export "mul" (func $mul_lowered)))
    (core instance $i (instantiate $m (with "" (instance $args))))
    (func (export "square") (param "x" u32) (result u32)
      (canon lift (core func $i "square"))))
  (instance $callee_instance (instantiate $callee))
  (alias export $callee_instance "mul" (func $mul))
  (instance $caller_instance (instantiate $caller (with "mul" (func $mul))))
  (alias export $caller_instance "square" (func $square))
  (export "square" (func $square))
)
