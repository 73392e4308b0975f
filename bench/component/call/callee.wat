;; The callee of the call benchmark: `id` returns its argument.
(component
  (core module $m
    (func (export "id") (param i32) (result i32) (local.get 0)))
  (core instance $i (instantiate $m))
  (func (export "id") (param "x" u32) (result u32) (canon lift (core func $i "id")))
)
