;; A 64-bit memory grown from guest code (the interpreter; the
;; ahead-of-time backend does not translate memory64).
(module
  (memory i64 1)
  (func (export "grow") (param i64) (result i64) (memory.grow (local.get 0)))
  (func (export "size") (result i64) (memory.size)))
