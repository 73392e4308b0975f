;; The flat lanes of the boundary benchmark: bytes out of and into a guest,
;; and the smallest round trip. The guest does no per-byte work.
(component
  (core module $m
    (memory (export "mem") 40)
    (global $heap_base i32 (i32.const 0x100000))
    (global $bump (mut i32) (i32.const 0x100000))
    (func (export "realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32) (result i32)
      (local $ret i32)
      (local.set $ret
        (i32.and (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
                 (i32.sub (i32.const 0) (local.get $align))))
      (global.set $bump (i32.add (local.get $ret) (local.get $new_size)))
      (if (local.get $old_size)
        (then (memory.copy (local.get $ret) (local.get $old) (local.get $old_size))))
      (local.get $ret))
    ;; n bytes from address 16: (ptr, len) through the return area at 0.
    (func (export "get-bytes") (param $n i32) (result i32)
      (i32.store (i32.const 0) (i32.const 16))
      (i32.store (i32.const 4) (local.get $n))
      (i32.const 0))
    (func (export "put-bytes") (param $ptr i32) (param $len i32) (result i32) (local.get $len))
    (func (export "rewind") (param i32) (global.set $bump (global.get $heap_base)))
    (func (export "add-one") (param i32) (result i32) (i32.add (local.get 0) (i32.const 1))))
  (core instance $i (instantiate $m))
  (func (export "get-bytes") (param "n" u32) (result (list u8))
    (canon lift (core func $i "get-bytes") (memory (core memory $i "mem"))))
  (func (export "put-bytes") (param "b" (list u8)) (result u32)
    (canon lift (core func $i "put-bytes") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))
      (post-return (core func $i "rewind"))))
  (func (export "add-one") (param "x" u32) (result u32) (canon lift (core func $i "add-one")))
)
