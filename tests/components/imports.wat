;; Host functions imported at the root and through an interface instance.
(component
  (import "log" (func $log (param "msg" string)))
  (import "cmhost:test/host@0.1.0" (instance $host
    (export "double" (func (param "x" u32) (result u32)))))
  (alias export $host "double" (func $double))
  (core module $memory
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 1024))
    (func (export "realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32) (result i32)
      (local $ret i32)
      (local.set $ret
        (i32.and (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
                 (i32.sub (i32.const 0) (local.get $align))))
      (global.set $bump (i32.add (local.get $ret) (local.get $new_size)))
      (memory.copy (local.get $ret) (local.get $old) (local.get $old_size))
      (local.get $ret)))
  (core instance $mem (instantiate $memory))
  (core func $log_lowered (canon lower (func $log) (memory (core memory $mem "mem"))))
  (core func $double_lowered (canon lower (func $double)))
  (core module $main
    (import "host" "log" (func $log (param i32 i32)))
    (import "host" "double" (func $double (param i32) (result i32)))
    (func (export "run") (param i32 i32) (result i32)
      (call $log (local.get 0) (local.get 1))
      (call $double (i32.const 21))))
  (core instance $host_funcs
    (export "log" (func $log_lowered))
    (export "double" (func $double_lowered)))
  (core instance $main (instantiate $main (with "host" (instance $host_funcs))))
  (func (export "run") (param "name" string) (result u32)
    (canon lift (core func $main "run") (memory (core memory $mem "mem")) (realloc (core func $mem "realloc"))))
)
