;; A component using a resource the host defines: it makes one through the
;; host's constructor, calls a method with a borrow, drops it; and it takes
;; an own handle from the host.
(component
  (import "cmhost:test/files@0.1.0" (instance $files
    (export "file" (type $file (sub resource)))
    (export "[constructor]file" (func (param "size" u32) (result (own $file))))
    (export "[method]file.size" (func (param "self" (borrow $file)) (result u32)))))
  (alias export $files "file" (type $file))
  (alias export $files "[constructor]file" (func $new))
  (alias export $files "[method]file.size" (func $size))
  (core func $new_lowered (canon lower (func $new)))
  (core func $size_lowered (canon lower (func $size)))
  (core func $drop (canon resource.drop $file))
  (core module $m
    (import "" "new" (func $new (param i32) (result i32)))
    (import "" "size" (func $size (param i32) (result i32)))
    (import "" "drop" (func $drop (param i32)))
    (func (export "run") (result i32) (local $h i32) (local $n i32)
      (local.set $h (call $new (i32.const 7)))
      (local.set $n (call $size (local.get $h)))
      (call $drop (local.get $h))
      (local.get $n))
    (func (export "take") (param $h i32) (result i32) (local $n i32)
      (local.set $n (call $size (local.get $h)))
      (call $drop (local.get $h))
      (local.get $n)))
  (core instance $imports
    (export "new" (func $new_lowered))
    (export "size" (func $size_lowered))
    (export "drop" (func $drop)))
  (core instance $i (instantiate $m (with "" (instance $imports))))
  (func (export "run") (result u32) (canon lift (core func $i "run")))
  (func (export "take") (param "f" (own $file)) (result u32) (canon lift (core func $i "take")))
)
