;; Linker::define_instance tests: imports the provider's instance.
(component
  (import "provider" (instance $p
    (export "bump" (func (param "by" u32) (result u32)))
    (export "echo" (func (param "s" string) (result string)))))
  (core module $Mem
    (memory (export "mem") 1)
    (global $heap (mut i32) (i32.const 1024))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
      (global.set $heap (i32.add (local.get $p) (local.get 3)))
      (local.get $p)))
  (core instance $mem (instantiate $Mem))
  (core func $bump (canon lower (func $p "bump")))
  (core func $echo (canon lower (func $p "echo")
    (memory (core memory $mem "mem")) (realloc (core func $mem "realloc"))))
  (core module $M
    (import "p" "bump" (func $bump (param i32) (result i32)))
    (import "p" "echo" (func $echo (param i32 i32 i32)))
    (import "mem" "mem" (memory 1))
    (func (export "bump-ten") (result i32) (call $bump (i32.const 10)))
    ;; echoes its argument through the provider: the string leaves this
    ;; component's memory and comes back into it
    (func (export "relay") (param i32 i32) (result i32)
      (call $echo (local.get 0) (local.get 1) (i32.const 32))
      (i32.const 32)))
  (core instance $m (instantiate $M
    (with "p" (instance (export "bump" (func $bump)) (export "echo" (func $echo))))
    (with "mem" (instance $mem))))
  (func (export "bump-ten") (result u32) (canon lift (core func $m "bump-ten")))
  (func (export "relay") (param "s" string) (result string)
    (canon lift (core func $m "relay") (memory (core memory $mem "mem")) (realloc (core func $mem "realloc"))))
)
