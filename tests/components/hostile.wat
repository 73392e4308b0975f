;; A guest that takes what it can, for the store's limits: it spins forever,
;; grows its memory, makes resources and streams without end, returns
;; strings that all alias one long string, and calls back into the host
;; (which calls it again).
(component
  (import "reenter" (func $reenter (param "n" u32) (result u32)))
  (type $r (resource (rep i32)))
  (type $s (stream u8))
  (core module $Mem (memory (export "mem") 1))
  (core instance $mem (instantiate $Mem))
  (core func $reenter-lowered (canon lower (func $reenter)))
  (core func $resource-new (canon resource.new $r))
  (core func $stream-new (canon stream.new $s))
  (core func $error-context-new (canon error-context.new (memory (core memory $mem "mem"))))
  (core module $M
    (import "" "mem" (memory 1))
    (import "" "reenter" (func $reenter (param i32) (result i32)))
    (import "" "resource.new" (func $resource-new (param i32) (result i32)))
    (import "" "stream.new" (func $stream-new (result i64)))
    (import "" "error-context.new" (func $error-context-new (param i32 i32) (result i32)))
    (func (export "spin") (loop $forever (br $forever)))
    (func (export "grow") (param $pages i32) (result i32) (memory.grow (local.get $pages)))
    (func (export "make-resources") (param $n i32) (result i32) (local $i i32)
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (drop (call $resource-new (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
      (local.get $i))
    (func (export "make-streams") (param $n i32) (result i32) (local $i i32)
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (drop (call $stream-new))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
      (local.get $i))
    ;; n error contexts, each with the 50 000 bytes at 8192 as its message.
    (func (export "make-error-contexts") (param $n i32) (result i32) (local $i i32)
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (drop (call $error-context-new (i32.const 8192) (i32.const 50000)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
      (local.get $i))
    ;; A list of n strings (n <= 800), each the same 50 000 bytes at 8192:
    ;; under 60 KiB of guest memory, n * 50 000 bytes lifted.
    (func (export "aliased") (param $n i32) (result i32) (local $i i32)
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 3))) (i32.const 8192))
        (i32.store (i32.add (i32.const 1028) (i32.shl (local.get $i) (i32.const 3))) (i32.const 50000))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (local.get $n))
      (i32.const 0))
    (func (export "recurse") (param $n i32) (result i32) (call $reenter (local.get $n))))
  (core instance $imports
    (export "mem" (memory $mem "mem"))
    (export "reenter" (func $reenter-lowered))
    (export "resource.new" (func $resource-new))
    (export "stream.new" (func $stream-new))
    (export "error-context.new" (func $error-context-new)))
  (core instance $i (instantiate $M (with "" (instance $imports))))
  (func (export "spin") (canon lift (core func $i "spin")))
  (func (export "grow") (param "pages" u32) (result s32) (canon lift (core func $i "grow")))
  (func (export "make-resources") (param "n" u32) (result u32) (canon lift (core func $i "make-resources")))
  (func (export "make-error-contexts") (param "n" u32) (result u32)
    (canon lift (core func $i "make-error-contexts")))
  (func (export "make-streams") (param "n" u32) (result u32) (canon lift (core func $i "make-streams")))
  (func (export "aliased") (param "n" u32) (result (list string))
    (canon lift (core func $i "aliased") (memory (core memory $mem "mem"))))
  (func (export "recurse") (param "n" u32) (result u32) (canon lift (core func $i "recurse")))
)
