;; Linker::define_instance tests: the instance another component imports.
(component
  (core module $M
    (memory (export "mem") 1)
    (global $count (mut i32) (i32.const 0))
    (global $heap (mut i32) (i32.const 1024))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
      (global.set $heap (i32.add (local.get $p) (local.get 3)))
      (local.get $p))
    (func (export "bump") (param i32) (result i32)
      (global.set $count (i32.add (global.get $count) (local.get 0)))
      (global.get $count))
    ;; hands the string back through a return area at 16
    (func (export "echo") (param i32 i32) (result i32)
      (i32.store (i32.const 16) (local.get 0))
      (i32.store (i32.const 20) (local.get 1))
      (i32.const 16)))
  (core instance $m (instantiate $M))
  (func (export "bump") (param "by" u32) (result u32) (canon lift (core func $m "bump")))
  (func (export "echo") (param "s" string) (result string)
    (canon lift (core func $m "echo") (memory (core memory $m "mem")) (realloc (core func $m "realloc"))))
)
