;; A memory without data segments, for a pooled memory reused from one that
;; had an image: it reads zeros.
(module
  (memory (export "memory") 3)
  (func (export "load") (param i32) (result i32) (i32.load8_u (local.get 0))))
