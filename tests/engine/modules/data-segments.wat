;; Active data segments at constant offsets, the later overwriting the
;; earlier where they overlap: on the ahead-of-time backend the memory's
;; contents come from an image, mapped copy-on-write into each instance.
(module
  (memory (export "memory") 2 4)
  (data (i32.const 16) "hello")
  (data (i32.const 20) "!")
  (data (i32.const 70000) "world")
  (data (i32.const 131068) "tail")
  (func (export "load") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "store") (param i32 i32) (i32.store8 (local.get 0) (local.get 1)))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))
