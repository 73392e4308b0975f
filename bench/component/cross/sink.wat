;; The callee of the cross-component benchmark: takes a list<string> and
;; returns its length. The caller imports this component's instance as
;; `cmhost:bench/sink`. Guest work is kept to the minimum the canonical ABI
;; needs (one realloc call per string), so the host's side shows: the realloc
;; bumps through memory that is large enough for the biggest batch, and
;; post-return rewinds it.
(component
  (core module $m
    (memory (export "mem") 40)
    (global $heap_base i32 (i32.const 1024))
    (global $bump (mut i32) (i32.const 1024))
    (func (export "realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32) (result i32)
      (local $ret i32)
      (local.set $ret
        (i32.and (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
                 (i32.sub (i32.const 0) (local.get $align))))
      (global.set $bump (i32.add (local.get $ret) (local.get $new_size)))
      (if (local.get $old_size)
        (then (memory.copy (local.get $ret) (local.get $old) (local.get $old_size))))
      (local.get $ret))
    (func (export "take") (param $list i32) (param $n i32) (result i32) (local.get $n))
    (func (export "rewind") (param i32) (global.set $bump (global.get $heap_base))))
  (core instance $i (instantiate $m))
  (func $take (param "l" (list string)) (result u32)
    (canon lift (core func $i "take") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))
      (post-return (core func $i "rewind"))))
  (export "take" (func $take))
)
